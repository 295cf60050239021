"""Issue 33's "Done when" for ``dagmath score``, and item 3 (Thought Anchors companions).

``dagmath score`` runs once over a results folder holding every hostile input of the issue
that a folder can hold (``tests/redteam33_inputs.py``) beside good files: it must write
every good record, name each bad file, exit 4, and stay within a few hundred MB. The run
is a subprocess with a timeout (a hang guard: the FIFO companion hung ``score`` for ever),
and its peak memory is read from the kernel (``ru_maxrss`` of the run and its workers),
not timed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dagmath_viz.formats import thought_anchors
from tests.redteam33_inputs import LINE_CAP, LOOK_ALIKES, WIDE_RECORDS, Inputs, build

REPO = Path(__file__).resolve().parents[1]
#: "a few hundred MB": the run measured 150 MB here; the inputs cost GB before the fixes
PEAK_MB = 600
#: the hang guard: two answer checks run into the 5 s deadline on a good day
GUARD_S = 300

#: run a command and print its exit code, then the peak RSS in KB of it and its children
_MEASURED = textwrap.dedent(
    """
    import resource, subprocess, sys
    code = subprocess.call(sys.argv[1:])
    print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    """
)


@pytest.fixture(scope="module")
def scored_run(tmp_path_factory) -> tuple[Inputs, Path, str, int, int]:
    """(the inputs, the scored output, stderr, the exit code, peak RSS in MB)."""
    base = tmp_path_factory.mktemp("redteam33")
    inputs = build(base)
    out, err = base / "scored.jsonl", base / "stderr.txt"
    command = [sys.executable, "-m", "dagmath_viz", "score", str(inputs.root), "-o", str(out),
               "--no-cache"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO), "DAGMATH_MAX_LINE_BYTES": str(LINE_CAP)}
    with err.open("w") as stderr:
        proc = subprocess.run(  # the timeout is the hang guard
            [sys.executable, "-c", _MEASURED, *command],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            timeout=GUARD_S,
            env=env,
        )
    code, peak_kb = map(int, proc.stdout.split()[-2:])
    return inputs, out, err.read_text(), code, peak_kb // 1024


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_done_when_score_exits_4_without_a_traceback(scored_run):
    _, _, stderr, code, _ = scored_run
    assert code == 4, stderr[-3000:]
    assert "Traceback" not in stderr and "internal error" not in stderr


def test_done_when_score_writes_every_good_record(scored_run):
    inputs, out, stderr, _, _ = scored_run
    records = _records(out)
    by_key = {(r["model"], r["problem_id"]): r for r in records}
    for pid in inputs.good:  # the good files, whole and right
        assert by_key[("m", pid)]["class"] == "perfect", by_key[("m", pid)]
    for pid in inputs.crafted:  # item 1: each crafted answer is its own record's verdict
        rec = by_key[("m", pid)]
        assert rec["final_correct"] is False
        assert rec["answer_check"].startswith(("different", "timeout", "error")), rec
    assert by_key[("m", inputs.long_id)]["class"] == "perfect"  # item 5: a 5,000-digit id
    assert {m for m, p in by_key if p == "30"} == set(LOOK_ALIKES)  # item 10: three models
    assert by_key[("m", "31")]["final_correct"] is False  # \boxed{4\u200b} is not 4
    # item 3: the solutions whose problem.json was refused are still read (their chunks)
    for pid in ("50", "51", "52"):
        rec = by_key[("ta-model", pid)]
        assert rec["reference_answer"] is None  # nothing read from the refused companion
    assert by_key[("ta-model", inputs.depends_on)]["class"] == "illegal"  # item 5
    # items 2 and 8: the scored records, wide and with hostile sources, carried as read
    scored = [r for r in records if r["model"] == "scored-m"]
    assert len(scored) == 4 + WIDE_RECORDS
    assert {r["source"] for r in scored if r["problem_id"] == "s0"} == {"/etc/passwd"}
    text = out.read_text()
    assert "root:" not in text and "SECRET" not in text  # nothing read through them
    assert len(records) == 2 + 4 + 1 + 3 + 1 + 4 + 4 + WIDE_RECORDS, len(records)


def test_done_when_score_names_every_bad_file(scored_run):
    inputs, _, stderr, _, _ = scored_run
    assert f"{inputs.long_line}: file: line 2 longer than {LINE_CAP} bytes" in stderr
    assert f"{inputs.fifo}: file: skipped: not a regular file" in stderr
    for companion in inputs.companions.values():
        assert f"{companion}: file: " in stderr, companion
    # item 1: the crafted answers that math-verify could not settle are named
    assert f"warning: {inputs.root / 'crafted.json'}: answer check timeout" in stderr


def test_done_when_score_stays_within_a_few_hundred_mb(scored_run):
    _, _, stderr, _, peak_mb = scored_run
    assert peak_mb < PEAK_MB, f"peak RSS {peak_mb} MB"


# ------------------------------------------------------------------ item 3: companions


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo", "link out"])
def test_item3_a_problem_json_that_is_no_regular_file_of_the_folder_is_refused_unopened(
    tmp_path, monkeypatch, kind
):
    folder = tmp_path / "m" / "correct_base_solution" / "problem_7"
    folder.mkdir(parents=True)
    chunks = [{"chunk": "x = 2", "chunk_idx": 0}, {"chunk": r"\boxed{3}", "chunk_idx": 1,
              "depends_on": ["0"]}]  # fmt: skip
    (folder / "chunks_labeled.json").write_text(json.dumps(chunks))
    (folder / "base_solution.json").write_text('{"answer": "3", "is_correct": true}')
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"problem": "SECRET", "gt_answer": "SECRET"}))
    companion = folder / "problem.json"
    if kind == "/dev/zero":
        companion.symlink_to("/dev/zero")  # read blindly: MemoryError
    elif kind == "fifo":
        os.mkfifo(companion)  # read blindly: waits for a writer for ever
    else:
        companion.symlink_to(secret)  # reported refused, then read and shown anyway
    opened: list = []
    real = thought_anchors.jsonio.read_json
    monkeypatch.setattr(
        thought_anchors.jsonio, "read_json", lambda p: opened.append(Path(p).name) or real(p)
    )
    loaded = thought_anchors.read(folder / "chunks_labeled.json")
    (traj,) = loaded.trajectories
    assert "problem.json" not in opened  # never opened
    assert traj.reference_answer is None and traj.problem_text == ""  # nothing of it shown
    (issue,) = [i for i in loaded.issues if i.file == str(companion)]
    expected = "skipped: not a regular file" if kind == "fifo" else "refused: a link"
    assert issue.message.startswith(expected), issue.message
    assert traj.answer == "3"  # base_solution.json, a regular file, still read


def test_item3_a_companion_over_the_cap_is_skipped_unread(tmp_path, monkeypatch):
    folder = tmp_path / "m" / "correct_base_solution" / "problem_7"
    folder.mkdir(parents=True)
    (folder / "chunks_labeled.json").write_text(json.dumps([{"chunk": r"\boxed{3}"}]))
    with (folder / "problem.json").open("wb") as out:  # a sparse file: large, no disk used
        out.truncate(2**20 + 1)
    monkeypatch.setattr(thought_anchors, "MAX_COMPANION_BYTES", 2**20)
    loaded = thought_anchors.read(folder / "chunks_labeled.json")
    (issue,) = [i for i in loaded.issues if i.file.endswith("problem.json")]
    assert issue.message == f"skipped: {2**20 + 1} bytes, over the {2**20} read"


LM_EVAL = REPO / "tests" / "fixtures" / "ecosystem" / "lm_eval" / "mock-dagmath-1"


@pytest.mark.parametrize("kind", ["link out", "fifo", "over the cap"])
def test_item3_an_lm_eval_results_companion_is_read_only_as_a_regular_file_of_its_folder(
    tmp_path, monkeypatch, kind
):
    """The lm-eval results file names the model: as a link out of the folder it was named
    refused by the walk, then read anyway (the model became the outside file's name)."""
    from dagmath_viz.formats import lm_eval_samples
    from dagmath_viz.formats.registry import load_file

    run = tmp_path / "data" / "run"
    run.mkdir(parents=True)
    (samples,) = LM_EVAL.glob("samples_*.jsonl")
    (results,) = LM_EVAL.glob("results_*.json")
    (run / samples.name).write_bytes(samples.read_bytes())
    model = json.loads(results.read_text())["model_name"]  # what a regular file names
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"model_name": "SECRET-MODEL"}))
    companion = run / results.name
    if kind == "link out":
        companion.symlink_to(outside)
    elif kind == "fifo":
        os.mkfifo(companion)  # opened, it would wait for a writer for ever
    else:
        companion.write_bytes(results.read_bytes())
        monkeypatch.setattr(lm_eval_samples, "MAX_COMPANION_BYTES", companion.stat().st_size - 1)
    models = {t.model for t in load_file(run / samples.name).trajectories}
    assert models == {"run"}, models  # the folder's name: nothing of the companion read
    companion.unlink()
    companion.write_bytes(results.read_bytes())  # the same bytes as a regular file: read
    monkeypatch.undo()
    assert {t.model for t in load_file(run / samples.name).trajectories} == {model} != {"run"}
