"""A raw results folder loaded streamed (``dagmath_viz.run.streamed``) vs in memory.

The streamed path scores through ``score_paths`` and keeps no steps; it must give the
frame, issues and files read of the in-memory path (``load_corpus`` building every
Trajectory), row for row. ``stream_bytes=0`` forces it on small data; ``1 << 62`` keeps
the in-memory path on any data.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from dagmath_viz.analysis.deadends import scored_dead_end_table
from dagmath_viz.analysis.step_tags import UNTAGGED
from dagmath_viz.formats.sources import SourceReader
from dagmath_viz.run import corpus, streamed
from dagmath_viz.run.corpus import load_corpus
from tests.logcount import write_logcount

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "runs"
TEST_DATA = ROOT / "tests" / "data"
SHARED = (ROOT / ".." / "shared" / "data").resolve()
IN_MEMORY = 1 << 62


def _raw_sets() -> list[Path]:
    sets = [SAMPLE, TEST_DATA / "bad", TEST_DATA / "mixed_run"]
    for name in ("dagmath-fewshot", "thought-anchors"):
        if (SHARED / name).is_dir():
            sets.append(SHARED / name)
    return sets


@pytest.fixture(scope="module")
def short_checker():
    """A 2 s answer deadline: tests/data/bad holds answers that stall math-verify until the
    deadline (timeouts are never cached, so each load waits again); with the session's 20 s
    they cost 80 s a test, and their verdict is a timeout either way."""
    from dagmath_viz.answers.check import AnswerChecker

    checker = AnswerChecker(timeout=2)
    yield checker
    checker.close()


@pytest.mark.parametrize("data", _raw_sets(), ids=lambda p: p.name)
def test_streamed_equals_in_memory(data, answer_checker, short_checker):
    checker = short_checker if data.name == "bad" else answer_checker
    old = load_corpus([data], stream_bytes=IN_MEMORY, checker=checker)
    new = load_corpus([data], stream_bytes=0, checker=checker)
    assert len(new) > 0
    pd.testing.assert_frame_equal(new.scored, old.scored)
    assert new.issues == old.issues
    assert new.files_read == old.files_read
    assert all(t is None for t in new.trajectories)
    assert len(new.trajectories) == len(new.scored)


def test_a_field_map_renames_scored_records_on_both_paths(tmp_path, answer_checker):
    """``--map`` renames the fields of every record read, a scored JSONL file's too (as
    ``dagmath score --map`` does), whichever way the source is loaded."""
    import orjson

    from dagmath_viz.formats.fieldmap import FieldMap
    from dagmath_viz.run.pool import score_paths

    run = Path(shutil.copytree(TEST_DATA / "mixed_run", tmp_path / "run"))
    with score_paths([run / "model_a"], checker=answer_checker) as scored:
        (run / "scored.jsonl").write_bytes(b"".join(scored.lines()))
    in_file = [orjson.loads(line) for line in (run / "scored.jsonl").read_bytes().splitlines()]
    fields = FieldMap.parse("model=dataset")
    loads = [
        load_corpus([run], stream_bytes=bytes_, checker=answer_checker, fields=fields)
        for bytes_ in (IN_MEMORY, 0)
    ]
    for loaded in loads:
        rows = loaded.scored.tail(len(in_file))  # pre-scored records come last
        assert rows["model"].tolist() == [r["dataset"] for r in in_file]
        assert rows["model"].tolist() != [r["model"] for r in in_file]
    pd.testing.assert_frame_equal(loads[1].scored, loads[0].scored)


def test_the_shared_sets_are_compared():
    """The two real sets the brief names are raw layouts read here (not silently skipped)."""
    names = {p.name for p in _raw_sets()}
    if SHARED.is_dir():
        assert {"dagmath-fewshot", "thought-anchors"} <= names


def test_bad_inputs_give_issues_on_the_streamed_path(short_checker):
    new = load_corpus([TEST_DATA / "bad"], stream_bytes=0, checker=short_checker)
    files = {Path(i.file).name for i in new.issues}
    # files that cannot be read at all, by construction of tests/data/bad
    assert {"01_truncated.json", "23_invalid_utf8.json"} <= files


def test_threshold_counts_raw_bytes(tmp_path, answer_checker):
    run = write_logcount(tmp_path / "run")
    size = sum(f.stat().st_size for f in run.rglob("problem_*_all_samples.json"))
    at = load_corpus([run], stream_bytes=size, checker=answer_checker)
    above = load_corpus([run], stream_bytes=size + 1, checker=answer_checker)
    assert all(t is None for t in at.trajectories)
    assert all(t is not None for t in above.trajectories)
    assert len(at) == len(above) == 5


def test_small_data_stay_in_memory_by_default():
    corpus = load_corpus([TEST_DATA / "mixed_run"])
    assert any(t is not None for t in corpus.trajectories)


def test_progress_counts_files(tmp_path, answer_checker):
    run = write_logcount(tmp_path / "run")
    for stream_bytes in (0, IN_MEMORY):
        seen: list[tuple[int, int]] = []
        load_corpus(
            [run],
            stream_bytes=stream_bytes,
            checker=answer_checker,
            progress=lambda *a, seen=seen: seen.append(a),
        )
        assert seen[-1] == (2, 2), stream_bytes  # two problem files, one per model


def test_sources_find_the_steps_again(tmp_path, answer_checker):
    run = write_logcount(tmp_path / "run").resolve()
    new = load_corpus([str(run)], stream_bytes=0, checker=answer_checker)
    reader = SourceReader([run])  # the folder loaded: its sources are inside
    df = new.scored
    row = new.row_of("model-a", "logs", "1", 1)  # the imperfect walk
    rec = df.iloc[row]
    assert Path(rec["source"].split(":")[0]).is_absolute()
    traj, why = reader.read(rec["source"], ("model-a", "logs", "1", 1))
    assert why is None
    assert [s.text for s in traj.steps][7] == "statement v9"
    assert list(rec["dead_ends"]) == [8]


def test_dead_ends_read_back_with_progress(tmp_path, answer_checker):
    run = write_logcount(tmp_path / "run").resolve()
    new = load_corpus([str(run)], stream_bytes=0, checker=answer_checker)
    seen: list[tuple[int, int]] = []
    table = scored_dead_end_table(
        new.scored, SourceReader([run]), progress=lambda *a: seen.append(a)
    )
    got = {
        (r.model, int(r.sample_id), int(r.step_id), r.text, r.category)
        for r in table.itertuples(index=False)
    }
    assert got == {
        ("model-a", 1, 8, "statement v9", "commentary"),
        ("model-a", 2, 2, "statement v2", "unused given"),
    }
    assert seen[0] == (0, 2) and seen[-1] == (2, 2)  # two records have dead ends


def test_tag_counts_read_back_one_at_a_time(tmp_path, answer_checker):
    run = write_logcount(tmp_path / "run").resolve()
    new = load_corpus([str(run)], stream_bytes=0, checker=answer_checker)
    table, counted = streamed.tag_counts_read_back(
        new.trajectories, new.scored, SourceReader([run]), None
    )
    assert counted == 5
    # no step carries a tag: every step is untagged; 9+10+7+9+9 steps, 2 dead ends
    a = table[table["model"] == "model-a"].iloc[0]
    b = table[table["model"] == "model-b"].iloc[0]
    assert (a["tag"], a["steps"], a["dead_ends"]) == (UNTAGGED, 26, 2)
    assert (b["tag"], b["steps"], b["dead_ends"]) == (UNTAGGED, 18, 0)
    nothing, none_counted = streamed.tag_counts_read_back(new.trajectories)
    assert none_counted == 0 and nothing.empty


def test_slices_do_not_change_the_frame(answer_checker):
    from dagmath_viz.run.pool import score_paths

    lines = list(score_paths([SAMPLE], workers=1, checker=answer_checker).lines())
    whole = streamed.scored_frame_of_lines(lines, slice_bytes=1 << 40)
    sliced = streamed.scored_frame_of_lines(lines, slice_bytes=4096)
    pd.testing.assert_frame_equal(sliced, whole)
    assert len(whole) == len(lines) == 4430


def test_a_copied_folder_scores_where_it_is(tmp_path, answer_checker):
    """The sources name the folder as passed (the app passes it resolved)."""
    copy = tmp_path / "copy"
    shutil.copytree(TEST_DATA / "mixed_run", copy)
    new = load_corpus([str(copy)], stream_bytes=0, checker=answer_checker)
    sources = [s for s in new.scored["source"] if s]
    assert sources and all(s.startswith(str(copy)) for s in sources)


def test_the_environment_sets_the_threshold(tmp_path, monkeypatch, answer_checker):
    from dagmath_viz.schema import DagMathError

    run = write_logcount(tmp_path / "run")
    monkeypatch.setenv(corpus.STREAM_BYTES_ENV, "0")
    assert all(t is None for t in load_corpus([run], checker=answer_checker).trajectories)
    monkeypatch.setenv(corpus.STREAM_BYTES_ENV, str(1 << 40))
    assert all(t is not None for t in load_corpus([run], checker=answer_checker).trajectories)
    for bad in ("lots", "-1"):
        monkeypatch.setenv(corpus.STREAM_BYTES_ENV, bad)
        with pytest.raises(DagMathError, match="DAGMATH_STREAM_BYTES"):
            load_corpus([run], checker=answer_checker)


def test_pool_workers_do_not_run_the_app_script_again(tmp_path, monkeypatch, answer_checker):
    """Streamlit installs the app's script as ``__main__`` (a file, no spec); a worker
    started by the fork server (the process has threads, as a server does) must not run
    it. The stand-in script writes a marker file when it runs."""
    import sys
    import threading
    import types

    from dagmath_viz.run import pool as pipeline

    marker = tmp_path / "ran.txt"
    script = tmp_path / "fake_app.py"
    script.write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n")
    fake_main = types.ModuleType("__main__")
    fake_main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", fake_main)
    monkeypatch.setattr(pipeline, "IN_PROCESS_BYTES", 0)
    run = write_logcount(tmp_path / "run")
    hold = threading.Event()
    thread = threading.Thread(target=hold.wait, daemon=True)
    thread.start()  # a second thread: the pool is started by the fork server
    try:
        frame = streamed.streamed_parts([run], workers=2, checker=answer_checker).frame
    finally:
        hold.set()
        thread.join()
    assert len(frame) == 5
    assert not marker.exists()
    assert sys.modules["__main__"] is fake_main  # put back afterwards


def test_a_worker_started_after_a_script_run_does_not_run_the_script(tmp_path, monkeypatch):
    """Streamlit installs its script module as ``__main__`` anew on every script run, so
    while a load runs, ``__main__`` may be the app again when the pool starts a worker
    (one died: a SIGTERM to the server's process group made the server hang on its way
    out, its new workers each running the app). No process started meanwhile runs it."""
    import multiprocessing
    import sys
    import time
    import types

    marker = tmp_path / "ran.txt"
    script = tmp_path / "fake_app.py"
    script.write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n")
    fake_main = types.ModuleType("__main__")
    fake_main.__file__ = str(script)

    def start_one() -> None:
        proc = multiprocessing.get_context("spawn").Process(target=time.sleep, args=(0,))
        proc.start()
        proc.join(60)
        assert proc.exitcode == 0

    with streamed.main_script_hidden():
        monkeypatch.setitem(sys.modules, "__main__", fake_main)  # a script run, meanwhile
        start_one()
    assert not marker.exists()
    start_one()  # outside, multiprocessing does what it always does: the check can fail
    assert marker.exists()


def test_the_folder_is_walked_once(tmp_path, monkeypatch, answer_checker):
    """``load_corpus`` hands its discovery to the scorer: a large folder (5,000 files in the
    benchmark) is not listed a second time inside ``score_paths``."""
    from dagmath_viz.formats import discovery
    from dagmath_viz.run import pool as pipeline

    walks = []
    real = discovery.discover
    monkeypatch.setattr(
        pipeline.discovery, "discover", lambda *a, **k: walks.append(a) or real(*a, **k)
    )
    monkeypatch.setenv("DAGMATH_FRAME_CACHE", "0")
    corpus = load_corpus([SAMPLE], stream_bytes=0, checker=answer_checker)
    assert len(corpus) > 0
    assert walks == []  # load_corpus's own walk uses the name it imported, not this one


class _CountingReader(SourceReader):
    def __init__(self, roots) -> None:
        super().__init__(roots)
        self.reads = 0

    def read(self, source, key):
        self.reads += 1
        return super().read(source, key)


def test_dead_ends_read_back_reads_each_source_once(tmp_path, answer_checker):
    """The log-count walks by hand (as the two tests above): model-a's imperfect walk's
    step 8 (v9) is commentary, its wrong walk's step 2 (v2) an unused given; 26 and 18
    untagged steps. Five records, five reads (the two tables apart took seven)."""
    run = write_logcount(tmp_path / "run").resolve()
    new = load_corpus([str(run)], stream_bytes=0, checker=answer_checker)
    reader = _CountingReader([run])
    seen: list[tuple[int, int]] = []
    table, by_tag, counted = streamed.dead_ends_read_back(
        new.scored, reader, new.trajectories, progress=lambda *a: seen.append(a)
    )
    assert reader.reads == 5
    assert counted == 5
    got = {
        (r.model, int(r.sample_id), int(r.step_id), r.text, r.category)
        for r in table.itertuples(index=False)
    }
    assert got == {
        ("model-a", 1, 8, "statement v9", "commentary"),
        ("model-a", 2, 2, "statement v2", "unused given"),
    }
    rows = {(r.model, r.tag, r.steps, r.dead_ends) for r in by_tag.itertuples(index=False)}
    assert rows == {("model-a", UNTAGGED, 26, 2), ("model-b", UNTAGGED, 18, 0)}
    assert seen[0] == (0, 5) and seen[-1] == (5, 5)


def test_dead_ends_read_back_equals_the_two_tables_on_real_data(shared_data, answer_checker):
    """Thought Anchors: steps carry function_tags, so the tag table is not all untagged."""
    ta = shared_data.parent / "thought-anchors"
    new = load_corpus([ta], stream_bytes=0, checker=answer_checker)
    table, by_tag, counted = streamed.dead_ends_read_back(new.scored, SourceReader([ta]))
    pd.testing.assert_frame_equal(table, scored_dead_end_table(new.scored, SourceReader([ta])))
    tags, n = streamed.tag_counts_read_back((), new.scored, SourceReader([ta]))
    pd.testing.assert_frame_equal(by_tag, tags)
    assert counted == n == len(new.scored)
    assert (by_tag["tag"] != UNTAGGED).any()
