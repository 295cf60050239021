"""Issue 33 (red team, third round): each item's hostile input, made here by the test.

Nothing here is a committed bomb: every input is generated at test time, small on disk, and
the tests that run a command do it in a subprocess with a timeout (a hang guard, not a
timing test). Each test is named for the issue's item it guards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dagmath_viz.answers import exactforms
from dagmath_viz.answers.check import AnswerChecker

REPO = Path(__file__).resolve().parents[1]

#: 3,000 nested parentheses: the recursive reader went past Python's recursion limit
NESTED = "(" * 3000 + "6" + ")" * 3000
#: pi to the 4096th beside a decimal: the float comparison overflowed
PI_TOWER = "{" * 4 + r"\pi" + "^8}" * 4
#: one integer of 5,000 digits: past int()'s 4,300-digit limit
LONG_DIGITS = "7" * 5000
#: 11 levels of ^8: 2^(8^11), an integer of about 1 GB, built in the server process
POWER_TOWER = "{" * 11 + "2" + "^8}" * 11


def _steps(final: str) -> list[dict]:
    return [
        {"step_id": 1, "thinking": "given", "direct_dependent_steps": None, "text": "x = 2"},
        {"step_id": 2, "thinking": "so", "direct_dependent_steps": [1], "text": final},
    ]


def _record(problem_id: str, final: str, answer: str = "6", **extra) -> dict:
    record = {"problem_id": problem_id, "sample_id": 0, "model": "m", "answer": answer}
    return {**record, "steps": _steps(final), **extra}


def _dagmath(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(  # the timeout is the hang guard
        [sys.executable, "-m", "dagmath_viz", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def _scored(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# ------------------------------------------------------------------ item 1: one answer, one record


@pytest.mark.parametrize(
    ("reference", "prediction"),
    [("6", NESTED), ("0.5", PI_TOWER), ("6", LONG_DIGITS), ("6", f"{LONG_DIGITS}+1")],
    ids=["nested", "pi-tower-vs-decimal", "long-digits", "long-digits-sum"],
)
def test_item1_exact_reader_leaves_hostile_answers_to_the_worker(reference, prediction):
    # outside the reader's limits: not read (None), so math-verify decides under its deadline
    assert exactforms.exact_verdict(reference, prediction) is None
    assert exactforms.exact_verdict(prediction, reference) is None


def test_item1_quick_verdict_never_raises_on_hostile_answers():
    checker = AnswerChecker()
    for prediction in (NESTED, PI_TOWER, LONG_DIGITS, POWER_TOWER):
        assert checker.quick_verdict("0.5", prediction) is None  # the worker's to decide


def test_item1_exact_reader_still_reads_its_subset_within_the_limits():
    # the limits must not cost ordinary answers: these are decided exactly, as before
    assert exactforms.exact_verdict("256", "{2^4}^2") is True
    assert exactforms.exact_verdict(r"\pi^8", r"{\pi^4}^2") is True
    assert exactforms.exact_verdict("(" * 20 + "6" + ")" * 20, "6") is True
    assert exactforms.exact_verdict("1000000000000", "999999999999") is False


def test_item1_power_tower_builds_no_huge_integer_in_process():
    # 2^(8^11) is about 1 GB: under a 1 GB address-space cap the old reader died of
    # MemoryError (or ran into the hang guard); a bounded one answers "not read" at once
    script = textwrap.dedent(
        f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        from dagmath_viz.answers.exactforms import exact_verdict
        print(exact_verdict("6", {POWER_TOWER!r}))
        """
    )
    proc = subprocess.run(  # the timeout is the hang guard
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "None"


def test_item1_score_keeps_every_record_beside_crafted_answers(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    finals = {
        "1": r"The final answer is $\boxed{6}$.",
        "2": r"$\boxed{" + NESTED + "}$",
        "3": r"$\boxed{" + PI_TOWER + "}$",
        "4": r"$\boxed{" + LONG_DIGITS + "}$",
        "5": r"The final answer is $\boxed{6}$.",
    }
    for pid, final in finals.items():
        answer = "0.5" if pid == "3" else "6"
        (data / f"problem_{pid}.json").write_text(json.dumps([_record(pid, final, answer)]))
    out = tmp_path / "scored.jsonl"
    proc = _dagmath("score", str(data), "-o", str(out), "--no-cache")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    by_id = {r["problem_id"]: r for r in _scored(out)}
    assert sorted(by_id) == ["1", "2", "3", "4", "5"]  # good and crafted records alike
    assert by_id["1"]["answer_check"] == by_id["5"]["answer_check"] == "equal"
    assert by_id["1"]["final_correct"] is True and by_id["5"]["final_correct"] is True
    for pid in ("2", "3", "4"):  # each crafted answer is that record's verdict, never right
        assert by_id[pid]["final_correct"] is False
        assert by_id[pid]["answer_check"].startswith(("different", "timeout", "error"))


# ------------------------------------------------------------------ item 5: digits from text


def test_item5_natural_key_orders_ids_past_the_int_digit_limit():
    from dagmath_viz.text import natural_key

    huge = "problem " + LONG_DIGITS  # 5,000 digits: int() refuses it
    ids = [huge, "problem 10", "problem 2", "problem " + "6" * 5000, "problem 02"]
    # numeric order, by hand: 2 = 02 < 10 < 666…6 < 777…7 (same length, digits decide)
    assert sorted(ids, key=natural_key) == [
        "problem 2", "problem 02", "problem 10", "problem " + "6" * 5000, huge
    ]  # fmt: skip


def test_item5_a_scored_source_position_of_5000_digits_is_not_found_never_a_crash(tmp_path):
    from dagmath_viz.formats.sources import SourceReader, parse_source

    data = tmp_path / "runs.json"
    data.write_text(json.dumps([_record("1", r"$\boxed{6}$")]))
    reader = SourceReader([tmp_path])
    for source in (f"{data}[{LONG_DIGITS}]", f"{data}:item {LONG_DIGITS}"):
        ref = parse_source(source)
        assert ref.position is None and ref.location is None  # not a place: a bare name
        traj, why = reader.read(source)
        assert traj is None and why.startswith("source file not found")
    traj, why = reader.read(f"{data}:item 1")  # an ordinary place is still read
    assert why is None and traj.problem_id == "1"


def test_item5_depends_on_past_the_int_digit_limit_is_that_trajectory_fault(tmp_path):
    folder = tmp_path / "ta" / "m" / "correct_base_solution" / "problem_7"
    folder.mkdir(parents=True)
    chunks = [
        {"chunk": "let x = 2", "chunk_idx": 0, "depends_on": []},
        {"chunk": r"so \boxed{3}", "chunk_idx": 1, "depends_on": [LONG_DIGITS]},
    ]
    (folder / "chunks_labeled.json").write_text(json.dumps(chunks))
    (folder / "base_solution.json").write_text('{"answer": "3"}')
    good = tmp_path / "ta" / "problem_1.json"
    good.write_text(json.dumps([_record("1", r"The final answer is $\boxed{6}$.")]))
    out = tmp_path / "scored.jsonl"
    proc = _dagmath("score", str(tmp_path / "ta"), "-o", str(out), "--no-cache")
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert proc.returncode in (0, 4), proc.stderr
    by_id = {r["problem_id"]: r for r in _scored(out)}
    assert by_id["1"]["class"] == "perfect"  # the good file beside it, whole
    assert by_id["7"]["class"] == "illegal"  # the bad parent is this trajectory's fault
    assert any("step 1" in e for e in by_id["7"]["errors"]), by_id["7"]["errors"]


# ------------------------------------------------------------------ item 7: timeouts are not kept


def _flaky_worker(checker: AnswerChecker, verdicts: list) -> list:
    """Stand in for math-verify: the verdicts in turn (a busy machine, then a quiet one)."""
    from dagmath_viz.answers.check import Verdict

    asked = []

    def ask(reference: str, prediction: str) -> Verdict:
        asked.append((reference, prediction))
        return verdicts[min(len(asked), len(verdicts)) - 1]

    checker._ask_worker = ask
    return asked


def test_item7_a_timeout_or_error_is_asked_again_not_remembered():
    from dagmath_viz.answers.check import Verdict

    checker = AnswerChecker()
    pair = (r"\sin(x)", r"\sin x")  # outside every fast path: the worker decides
    asked = _flaky_worker(checker, [Verdict(False, "timeout"), Verdict(True, "verified")])
    assert checker.check(*pair) == Verdict(False, "timeout")
    assert checker.quick_verdict(*pair) is None  # not a cached verdict
    assert checker.check(*pair) == Verdict(True, "verified")
    assert asked == [pair, pair]
    other = AnswerChecker()  # a verdict learned from elsewhere: a timeout is not taken either
    other.learn("a", "b", Verdict(False, "timeout"))
    other.learn("c", "d", Verdict(False, "error: RecursionError"))
    other.learn("e", "f", Verdict(True, "verified"))
    assert other.quick_verdict("a", "b") is None and other.quick_verdict("c", "d") is None
    assert other.quick_verdict("e", "f") == Verdict(True, "verified")


def test_item7_a_raw_folders_run_copy_never_keeps_a_timeout(tmp_path, monkeypatch):
    from dagmath_viz.answers.check import Verdict
    from dagmath_viz.run.corpus import load_corpus

    frames = tmp_path / "frames"
    monkeypatch.setenv("DAGMATH_FRAME_CACHE_DIR", str(frames))
    monkeypatch.delenv("DAGMATH_FRAME_CACHE", raising=False)
    data = tmp_path / "run"
    data.mkdir()
    record = _record("1", r"The final answer is $\boxed{\sin x}$.", answer=r"\sin(x)")
    (data / "problem_1_all_samples.json").write_text(json.dumps([record]))
    checker = AnswerChecker()
    _flaky_worker(checker, [Verdict(False, "timeout"), Verdict(True, "verified")])
    first = load_corpus([data], checker=checker, stream_bytes=0)  # the streamed, kept path
    assert first.scored["answer_check"].tolist() == ["timeout"]
    assert not list(frames.glob("run*.parquet"))  # a busy machine's verdict is not kept
    again = load_corpus([data], checker=checker, stream_bytes=0)
    assert again.scored["answer_check"].tolist() == ["verified"]
    assert again.scored["final_correct"].tolist() == [True]
    assert len(list(frames.glob("run*.parquet"))) == 1  # settled verdicts are kept as before


# ------------------------------------------------------------------ item 2: wide records

#: one scored record as `dagmath score` writes it (every field of RECORD_FIELDS)
SCORED = {
    "model": "m", "dataset": "d", "problem_id": "1", "sample_id": 0, "difficulty": None,
    "domain": None, "n_nodes": 2, "n_edges": 1, "density": 1.0, "max_in_degree": 1,
    "max_out_degree": 1, "dead_ends": [], "closeness_rate": 1.0, "closed": True,
    "ancestor_share": 1.0, "predicted_answer": "6", "reference_answer": "6",
    "final_correct": True, "perfect": True, "class": "perfect", "answer_check": "equal",
    "errors": [], "source": "runs/m/d/problem_1.json:item 1", "answer_step": 2,
}  # fmt: skip


def test_item2_each_records_own_key_never_widens_the_frame(tmp_path, monkeypatch):
    from dagmath_viz.run import corpus, streamed
    from dagmath_viz.score.record import RECORD_FIELDS

    OTHER_FIELDS = "other_fields"  # noqa: N806 - the README's name for the one JSON column

    monkeypatch.setenv("DAGMATH_FRAME_CACHE", "0")
    monkeypatch.setattr(streamed, "SCORED_SLICE", 4096)  # many slices: concat_frames joins them
    n = 3000
    lines = []
    for i in range(n):
        record = {**SCORED, "problem_id": str(i), f"key_{i}": i}  # a key of its own
        if i % 3 == 0:
            record = {**SCORED, "problem_id": str(i)}  # and some with none
        lines.append(json.dumps(record))
    path = tmp_path / "wide.jsonl"
    path.write_text("\n".join(lines) + "\n")
    frame = corpus.load_corpus([path]).scored
    assert len(frame) == n
    assert sorted(frame.columns) == sorted([*RECORD_FIELDS, OTHER_FIELDS])  # 25, not 2,024
    other = frame.set_index("problem_id")[OTHER_FIELDS]
    assert json.loads(other["7"]) == {"key_7": 7} and json.loads(other["2999"]) == {
        "key_2999": 2999
    }
    assert other["3"] is None or other["3"] != other["3"]  # no other field: empty
    assert frame["class"].eq("perfect").all()  # the known fields are untouched


def test_item2_report_on_wide_records_reads_them(tmp_path):
    path = tmp_path / "wide.jsonl"
    path.write_text(
        "".join(
            json.dumps({**SCORED, "problem_id": str(i), f"k{i}": "x"}) + "\n" for i in range(50)
        )
    )
    proc = _dagmath("report", str(path), "--format", "csv", "--bootstrap", "0")
    assert proc.returncode == 0, proc.stderr
    header, row = proc.stdout.splitlines()[:2]
    assert header.startswith("model,dataset") and row.startswith("m,d,")


#: run a command; print its exit code, then the peak RSS in KB of it and its children
_MEASURED = "import resource, subprocess, sys; code = subprocess.call(sys.argv[1:]); " \
    "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"  # fmt: skip


def test_item2_report_on_16000_wide_records_stays_within_a_few_hundred_mb(tmp_path):
    # the case: `dagmath report` on 16,000 records with a key each peaked at 6 GB
    # (a column per key, every slice reindexed to the union); measured 300 MB after
    path = tmp_path / "wide.jsonl"
    with path.open("w") as out:
        for i in range(16_000):
            out.write(json.dumps({**SCORED, "problem_id": str(i), f"own_{i}": "x" * 300}) + "\n")
    command = [sys.executable, "-m", "dagmath_viz", "report", str(path), "--format", "json"]
    proc = subprocess.run(  # the timeout is the hang guard
        [sys.executable, "-c", _MEASURED, *command],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    *report, last = proc.stdout.splitlines()
    code, peak_kb = map(int, last.split())
    assert code == 0, proc.stderr[-2000:]
    (row,) = json.loads("\n".join(report))
    assert row["n_trajectories"] == 16_000 and row["pass_at_1"] == 1.0
    assert peak_kb < 1024 * 1024, f"peak RSS {peak_kb // 1024} MB"


# ------------------------------------------------------------------ item 6: Efficiency figures

#: a CSS url() in a legend entry was fetched by the browser
FETCHING = '<span style="background:url(http://127.0.0.2:9/x.png)">both</span>'


def test_item6_efficiency_overlap_reaches_the_legend_escaped():
    import pandas as pd

    from dagmath_viz.draw import figures

    table = pd.DataFrame(
        {
            "strategy": ["dfs", "bfs", f"<b>{FETCHING}</b>"],
            "irrelevant": ["tree"] * 3,
            "overlap": [FETCHING, "none", "entity"],
            "control": [False] * 3,
            "n": [3, 4, 5],
            "accuracy": [1.0, 0.5, 0.2],
            "efficiency": [0.5, 0.25, 0.75],
        }
    )
    fig = figures.efficiency_figure(table, "tree")
    spec = json.dumps(json.loads(fig.to_json()))  # decoded: to_json writes "<" as \\u003c
    assert "<span" not in spec and "<b>" not in spec  # no markup anywhere in the figure
    names = {trace.name for trace in fig.data}  # the legend: one trace per overlap
    assert figures.text(FETCHING) in names and {"none", "entity"} <= names
    xs = {x for trace in fig.data for x in trace.x}
    assert figures.text(f"<b>{FETCHING}</b>") in xs and "dfs" in xs


# ------------------------------------------------------------------ item 10: look-alike text

ZWSP, RLO = "\u200b", "\u202e"
#: three names that displayed as the same "good-model"
LOOK_ALIKES = ["good-model", f"good-model{ZWSP}", f"{RLO}ledom-doog"]


def test_item10_zero_width_and_bidi_characters_are_tagged_in_text():
    from dagmath_viz.text import escape_markdown, plain, reveal_bidi

    assert reveal_bidi(f"4{ZWSP}") == "4[U+200B]"
    assert plain(f"4{ZWSP}") == "4[U+200B]"  # the Trajectory page's predicted answer
    assert escape_markdown(f"good{chr(0x2060)}model") == r"good\[U\+2060\]model"  # markdown-escaped
    for ch in ("\u200c", "\u200d", "\ufeff", "\u00ad"):
        assert reveal_bidi(f"a{ch}b") == f"a[U+{ord(ch):04X}]b"
    assert reveal_bidi("plain 4, ½, é, 中文") == "plain 4, ½, é, 中文"  # visible text untouched


def test_item10_look_alike_names_differ_in_figures_tables_and_boxes():
    import pandas as pd

    from dagmath_viz.draw import figures
    from explorer import common

    assert len({figures.text(n) for n in LOOK_ALIKES}) == 3
    assert figures.text(LOOK_ALIKES[1]) == "good-model[U+200B]"
    board = pd.DataFrame({"model": LOOK_ALIKES, "pass_at_1": [0.1, 0.5, 0.9]})
    shown = common.visible(board)
    assert shown["model"].tolist() == ["good-model", "good-model[U+200B]", "[U+202E]ledom-doog"]
    assert board["model"].tolist() == LOOK_ALIKES  # the data itself (and downloads) as read
    assert shown["pass_at_1"].tolist() == [0.1, 0.5, 0.9]
    assert common.shown_option(LOOK_ALIKES[1]) == "good-model[U+200B]"


def test_item10_boxed_answer_with_a_zero_width_space_is_shown_tagged(tmp_path):
    from dagmath_viz.draw.render import render_dag_html
    from dagmath_viz.schema import Step, Trajectory

    steps = (Step(1, (), "x = 2"), Step(2, (1,), rf"so $\boxed{{4{ZWSP}}}$"))
    html_page = render_dag_html(Trajectory("m", "d", "1", 0, steps))
    assert "4[U+200B]" in html_page and ZWSP + "}" not in html_page


def test_item10_cli_prints_zero_width_characters_escaped(tmp_path):
    from dagmath_viz.text import printable

    assert printable(f"good-model{ZWSP}") == "good-model\\u200b"


# ------------------------------------------------------------------ item 13: the smaller items


def test_item13_frame_cache_folder_deletes_only_what_it_wrote(tmp_path, monkeypatch):
    from dagmath_viz.run.corpus import load_corpus
    from dagmath_viz.store import frames

    folder = tmp_path / "mine"  # a folder of the user's, DAGMATH_FRAME_CACHE_DIR pointed at it
    (folder / "derived" / "my-analysis").mkdir(parents=True)
    (folder / "derived" / "my-analysis" / "notes.txt").write_text("keep me")
    (folder / "results.parquet").write_bytes(b"PAR1 the user's own table PAR1")
    (folder / "abc-def.parquet").write_bytes(b"PAR1 also the user's PAR1")
    monkeypatch.setenv("DAGMATH_FRAME_CACHE_DIR", str(folder))
    monkeypatch.setenv(frames.MAX_MB_ENV, "0")  # trim everything but the latest copy
    monkeypatch.delenv("DAGMATH_FRAME_CACHE", raising=False)
    for i in range(3):  # three scored files: each copy trims the others away
        path = tmp_path / f"scored{i}.jsonl"
        path.write_text(json.dumps({**SCORED, "problem_id": str(i)}) + "\n")
        load_corpus([path])
    own = [p for p in folder.glob("*.parquet") if frames.is_own(p)]
    assert len(own) == 1  # the cache did trim its own copies
    assert (folder / "results.parquet").read_bytes().startswith(b"PAR1 the user's")
    assert (folder / "abc-def.parquet").exists()
    assert (folder / "derived" / "my-analysis" / "notes.txt").read_text() == "keep me"


def test_item13_compare_link_naming_a_model_twice_opens(monkeypatch, tmp_path):
    from tests.app.helpers import app_on, on_page
    from tests.logcount import write_logcount

    run = write_logcount(tmp_path / "logcount")
    at = app_on(monkeypatch, run, timeout=90)
    at.query_params["models"] = ["model-a", "model-a", "model-b"]
    on_page(at, "pages/compare.py")
    assert not at.exception, at.exception
    boxes = [m for m in at.multiselect if m.key == "cmp_models"]
    assert boxes and boxes[0].value == ["model-a", "model-b"]  # each model once


def test_item13_report_csv_neutralises_formula_cells(tmp_path):
    path = tmp_path / "scored.jsonl"
    names = ['=HYPERLINK("http://127.0.0.2:9/x","y")', "@SUM(A1:A9)", "+1+1", "plain"]
    path.write_text(
        "".join(
            json.dumps({**SCORED, "model": m, "problem_id": str(i)}) + "\n"
            for i, m in enumerate(names)
        )  # fmt: skip
    )
    proc = _dagmath("report", str(path), "--format", "csv", "--bootstrap", "0")
    assert proc.returncode == 0, proc.stderr
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(proc.stdout)))
    shown = {r["model"] for r in rows}
    assert shown == {"'" + names[0], "'" + names[1], "'" + names[2], "plain"}, shown
    for row in rows:  # and no cell at all starts a formula
        assert not any(v.startswith(("=", "+", "@", "\t", "\r")) for v in row.values()), row


def test_item13_report_on_a_missing_file_says_no_such_file_or_folder(tmp_path):
    missing = tmp_path / "nope.jsonl"
    proc = _dagmath("report", str(missing))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert f"{missing}: no such file or folder" in proc.stderr, proc.stderr


def test_item1_score_names_each_answer_check_that_timed_out(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    good = _record("1", r"The final answer is $\boxed{6}$.")
    bomb = _record("2", r"$\boxed{" + NESTED + "}$")  # math-verify cannot settle it in 5 s
    (data / "problem_1.json").write_text(json.dumps([good]))
    (data / "problem_2.json").write_text(json.dumps([bomb, {**bomb, "sample_id": 1}]))
    out, errors = tmp_path / "scored.jsonl", tmp_path / "errors.txt"
    proc = _dagmath("score", str(data), "-o", str(out), "--errors", str(errors), "--no-cache")
    assert proc.returncode == 0, proc.stderr  # nothing was lost: a warning, not an error
    (line,) = errors.read_text().splitlines()
    assert line.startswith(f"{data / 'problem_2.json'}: answer check ")
    assert line.endswith("(2 trajectories): scored not equivalent")
    assert f"warning: {data / 'problem_2.json'}: answer check" in proc.stderr
