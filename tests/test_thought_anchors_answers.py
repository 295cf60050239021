"""Thought Anchors read as its authors mean it (issue 34 item 1): the answer and its grade
from ``base_solution.json``, every per-chunk value kept on its step, companions opened
only as regular files of the solution's folder."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from dagmath_viz.cli import main
from dagmath_viz.formats import thought_anchors
from dagmath_viz.formats.discovery import load_paths

SHARED_TA = Path(__file__).parents[1] / ".." / "shared" / "data" / "thought-anchors"


@pytest.fixture(scope="module")
def ta_root() -> Path:
    path = SHARED_TA.resolve()
    if not path.is_dir():
        if os.environ.get("DAGMATH_REQUIRE_SHARED") == "1":
            pytest.fail(f"thought-anchors data not found at {path}", pytrace=False)
        pytest.skip(f"thought-anchors data not found at {path}")
    return path


def _source_solutions(root: Path) -> dict[tuple[str, int], dict]:
    """(problem id, 0 correct / 1 incorrect folder) -> base_solution.json, read with json."""
    out = {}
    for path in sorted(root.glob("*/*_base_solution/problem_*/base_solution.json")):
        pid = path.parent.name.removeprefix("problem_")
        sample = 0 if path.parent.parent.name.startswith("correct") else 1
        out[(pid, sample)] = json.loads(path.read_text(encoding="utf-8"))
    return out


def test_every_chain_has_the_sources_answer_and_grade(ta_root: Path, tmp_path: Path) -> None:
    solutions = _source_solutions(ta_root)
    assert len(solutions) == 20
    out = tmp_path / "scored.jsonl"
    assert main(["score", str(ta_root), "-o", str(out), "--no-cache"]) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    got = {(r["problem_id"], r["sample_id"]): r for r in records}
    assert got.keys() == solutions.keys()
    for key, solution in solutions.items():
        record = got[key]
        assert record["predicted_answer"] == solution["answer"], key
        assert record["final_correct"] is solution["is_correct"], key
        assert record["answer_check"] == "source"
        closed = record["closed"]
        expected = ("perfect" if closed else "imperfect") if solution["is_correct"] else "incorrect"
        assert record["class"] == expected, key
    # the two chains the issue names: 6596's correct solution was graded wrong before,
    # and a sentence was shown as its answer
    assert got[("6596", 0)]["final_correct"] is True
    assert got[("6596", 0)]["predicted_answer"] == solutions[("6596", 0)]["answer"]


def test_every_chunk_value_is_kept_on_its_step(ta_root: Path) -> None:
    result = load_paths([ta_root])
    by_source = {Path(t.source).resolve(): t for t in result.trajectories}
    for path in sorted(ta_root.glob("*/*/*/chunks_labeled.json")):
        chunks = json.loads(path.read_text(encoding="utf-8"))
        traj = by_source[path.resolve()]
        for chunk, step in zip(chunks, traj.steps, strict=True):
            expected = {
                k: v
                for k, v in chunk.items()
                if k not in ("chunk", "chunk_idx", "depends_on", "function_tags")
            }
            assert dict(step.fields) == expected
            assert step.tags == tuple(chunk.get("function_tags") or ())
    some = by_source[next(iter(by_source))].steps[0]
    names = [name for name, _ in some.fields]
    assert "counterfactual_importance_accuracy" in names and "summary" in names


def _solution(root: Path, base: object | None = None) -> Path:
    folder = root / "m" / "correct_base_solution" / "problem_7"
    folder.mkdir(parents=True)
    chunks = [
        {"chunk": "x = 1", "chunk_idx": 0, "depends_on": [], "accuracy": 0.5},
        {"chunk": "so \\boxed{2}", "chunk_idx": 1, "depends_on": ["0"], "summary": "sum"},
    ]
    (folder / "chunks_labeled.json").write_text(json.dumps(chunks), encoding="utf-8")
    (folder / "problem.json").write_text(json.dumps({"gt_answer": "2"}), encoding="utf-8")
    if base is not None:
        (folder / "base_solution.json").write_text(json.dumps(base), encoding="utf-8")
    return folder


def test_the_sources_grade_wins_over_a_check(tmp_path: Path) -> None:
    # the source says 3 and calls it correct; the chunks box 2 (= the reference)
    _solution(tmp_path, {"answer": "3", "is_correct": True})
    (traj,) = load_paths([tmp_path]).trajectories
    assert (traj.answer, traj.answer_correct) == ("3", True)
    assert [s.fields for s in traj.steps] == [(("accuracy", 0.5),), (("summary", "sum"),)]


def test_without_base_solution_the_chunks_answer_with_a_warning(tmp_path: Path) -> None:
    folder = _solution(tmp_path)
    result = load_paths([tmp_path])
    (traj,) = result.trajectories
    assert (traj.answer, traj.answer_correct) == (None, None)
    # one warning, naming the file; the file read is not counted unreadable for it
    assert [(i.file, i.message, i.severity) for i in result.issues] == [
        (
            str(folder / "base_solution.json"),
            "no answer given: the predicted answer is read from the chunks and checked",
            "warning",
        )
    ]
    assert result.unreadable_files == ()


def test_a_linked_companion_is_refused_unread(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"answer": "SECRET", "is_correct": True}), encoding="utf-8")
    folder = _solution(tmp_path / "data")
    (folder / "base_solution.json").symlink_to(outside)
    result = load_paths([tmp_path / "data"])
    (traj,) = result.trajectories
    assert traj.answer is None
    assert any("refused: a link" in i.message for i in result.issues)


def test_a_fifo_companion_is_skipped_without_blocking(tmp_path: Path) -> None:
    folder = _solution(tmp_path)
    os.mkfifo(folder / "base_solution.json")  # opening it to read would wait for a writer
    loaded = thought_anchors.read(folder / "chunks_labeled.json")
    assert loaded.trajectories[0].answer is None
    assert any(i.message == _NOT_REGULAR + _FROM_CHUNKS for i in loaded.issues)


_LINK = "refused: a link (companions are read only as regular files in their own folder)"
_NOT_REGULAR = "skipped: not a regular file"
_FROM_CHUNKS = "; the predicted answer is read from the chunks and checked"


def _guarded(call, seconds: float = 120):
    """``call()`` in a thread: a reader that opened a FIFO would wait for ever, so a call
    not back in time fails the test instead of hanging it."""
    box: list = []
    worker = threading.Thread(target=lambda: box.append(call()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert box, f"not back in {seconds} s: a FIFO opened?"
    return box[0]


@pytest.mark.parametrize("name", ["problem.json", "base_solution.json"])
@pytest.mark.parametrize("kind", ["link out", "fifo", "loop", "link inside"])
def test_a_refused_companion_is_named_once(tmp_path: Path, capsys, name: str, kind: str) -> None:
    """A companion that is a link leading out of the folder, or a FIFO, was named twice (by
    the folder walk, then by the reader looking for it); base_solution.json a third time,
    by the warning that the answer is read from the chunks. Once now, with why."""
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"answer": "SECRET", "gt_answer": "SECRET"}), encoding="utf-8")
    data = tmp_path / "data"
    folder = _solution(data, {"answer": "2", "is_correct": True})
    companion = folder / name
    companion.unlink()
    if kind == "link out":
        companion.symlink_to(outside)
    elif kind == "fifo":
        os.mkfifo(companion)  # opening it to read would wait for a writer for ever
    elif kind == "loop":
        companion.symlink_to(companion)
    else:
        kept = data / ".kept.json"  # inside the folder (a dot-name: not read as data)
        kept.write_text(json.dumps({"answer": "X"}), encoding="utf-8")
        companion.symlink_to(kept)
    why = (_NOT_REGULAR if kind == "fifo" else _LINK) + (_FROM_CHUNKS if "base" in name else "")
    result = _guarded(lambda: load_paths([data]))
    assert [(i.location, i.message) for i in result.issues if i.file == str(companion)] == [
        ("file", why)
    ]
    (traj,) = result.trajectories
    assert "SECRET" not in (traj.answer, traj.reference_answer)
    out = tmp_path / "scored.jsonl"
    assert _guarded(lambda: main(["score", str(data), "-o", str(out), "--no-cache"])) == 4
    err = capsys.readouterr().err
    assert err.count(str(companion)) == 1, err
    assert f"error: {companion}: file: {why}" in err
    # with the chunks file broken, the reader still names it (the walk leaves it to it)
    (folder / "chunks_labeled.json").write_text("[{", encoding="utf-8")
    broken = _guarded(lambda: load_paths([data]))
    assert [i.message for i in broken.issues if i.file == str(companion)] == [
        why.removesuffix(_FROM_CHUNKS)
    ]


@pytest.mark.parametrize("kind", ["link out", "fifo"])
def test_a_link_out_or_fifo_without_its_chunks_file_is_named_by_the_walk(
    tmp_path: Path, kind: str
) -> None:
    """No chunks file reads the companion here: the folder walk names it, as any file."""
    data = tmp_path / "data"
    folder = _solution(data)
    (folder / "chunks_labeled.json").unlink()
    companion = folder / "base_solution.json"
    if kind == "fifo":
        os.mkfifo(companion)
        why = _NOT_REGULAR
    else:
        companion.symlink_to(tmp_path / "outside.json")
        (tmp_path / "outside.json").write_text("{}", encoding="utf-8")
        why = f"refused: a link leading outside the data folder {data}"
    result = _guarded(lambda: load_paths([data]))
    assert [(i.file, i.message) for i in result.issues] == [(str(companion), why)]


LM_EVAL = Path(__file__).parent / "fixtures" / "ecosystem" / "lm_eval" / "mock-dagmath-1"


@pytest.mark.parametrize("kind", ["link out", "fifo"])
def test_an_lm_eval_results_companion_is_named_once(tmp_path: Path, kind: str) -> None:
    """lm-eval's reader refuses its results file silently: the walk names it, once."""
    run = tmp_path / "data" / "run"
    run.mkdir(parents=True)
    (samples,) = LM_EVAL.glob("samples_*.jsonl")
    (results,) = LM_EVAL.glob("results_*.json")
    (run / samples.name).write_bytes(samples.read_bytes())
    companion = run / results.name
    if kind == "fifo":
        os.mkfifo(companion)
    else:
        companion.symlink_to(results)  # out of tmp_path/data
    result = _guarded(lambda: load_paths([tmp_path / "data"]))
    assert len([i for i in result.issues if i.file == str(companion)]) == 1
    assert result.trajectories


def test_an_oversized_companion_is_skipped(tmp_path: Path, monkeypatch) -> None:
    folder = _solution(tmp_path, {"answer": "2", "is_correct": True, "pad": "x" * 200})
    monkeypatch.setattr(thought_anchors, "MAX_COMPANION_BYTES", 100)
    loaded = thought_anchors.read(folder / "chunks_labeled.json")
    assert loaded.trajectories[0].answer is None
    assert any(i.message.startswith("skipped: ") and "bytes" in i.message for i in loaded.issues)


def test_the_sources_grade_survives_the_worker_pool(ta_root: Path, tmp_path: Path, monkeypatch):
    from dagmath_viz.run import pool

    monkeypatch.setattr(pool, "IN_PROCESS_BYTES", 0)  # two worker processes, not one
    outputs = []
    for workers in ("1", "2"):
        out = tmp_path / f"out{workers}.jsonl"
        assert main(["score", str(ta_root), "-o", str(out), "--no-cache", "-j", workers]) == 0
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    records = [json.loads(line) for line in outputs[1].splitlines()]
    assert {r["answer_check"] for r in records} == {"source"}
    assert sum(r["class"] == "unscored" for r in records) == 0
