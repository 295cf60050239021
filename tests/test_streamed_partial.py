"""What is scored so far, while a large raw folder is scored (``streamed_parts(partial=)``).

Files are then scored one ``<model>/<dataset>`` folder after another in turn
(``pipeline.interleaved``), so early frames hold every model; the run's lines, and so the
final frame, keep file order all the same.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from dagmath_viz.run import pool as pipeline
from dagmath_viz.run import streamed
from dagmath_viz.run.corpus import load_corpus
from dagmath_viz.run.pool import interleaved, score_paths

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "runs"
KEY = ["model", "dataset", "problem_id", "sample_id"]


def test_interleaved_takes_one_file_of_each_folder_in_turn():
    files = [Path(p) for p in ("a/1", "a/2", "a/3", "b/1", "c/1", "c/2")]
    # a/1 b/1 c/1, then a/2 c/2, then a/3
    assert interleaved(files) == [0, 3, 4, 1, 5, 2]
    assert interleaved([]) == []
    assert interleaved([Path("x/1"), Path("x/2")]) == [0, 1]


@pytest.mark.parametrize("workers", [1, 2])
def test_interleaving_keeps_the_lines_in_file_order(workers, monkeypatch, answer_checker):
    monkeypatch.setattr(pipeline, "IN_PROCESS_BYTES", 0)  # a real pool even on small data
    with score_paths([SAMPLE], workers=workers, checker=answer_checker) as plain:
        expected = list(plain.lines())
    with score_paths([SAMPLE], workers=workers, checker=answer_checker, interleave=True) as mixed:
        got = list(mixed.lines())
    assert len(expected) > 100
    assert got == expected


def test_partial_frames_grow_and_sample_every_model_early(monkeypatch, answer_checker):
    monkeypatch.setenv("DAGMATH_FRAME_CACHE", "0")
    calls: list[tuple[pd.DataFrame, int, int]] = []
    frame, _steps, _issues, _read = streamed.streamed_parts(
        [SAMPLE],
        checker=answer_checker,
        workers=1,
        partial=lambda f, done, total: calls.append((f, done, total)),
        partial_every=0.0,  # a frame after every file
    )
    n_files = len(list(SAMPLE.rglob("problem_*_all_samples.json")))
    assert calls, "no partial frame"
    assert all(total == n_files for _, _, total in calls)
    done = [d for _, d, _ in calls]
    assert done == sorted(done) and done[0] == 1
    sizes = [len(f) for f, _, _ in calls]
    assert sizes == sorted(sizes)
    # the first frame is one file: one model; a few files later every model is in
    models = sorted(frame["model"].unique())
    assert calls[0][0]["model"].nunique() == 1
    folders = {p.parent for p in SAMPLE.rglob("problem_*_all_samples.json")}
    early = next(f for f, d, _ in calls if d >= len(folders))
    assert sorted(early["model"].unique()) == models
    # every partial row is a row of the final frame, with the same values
    last = calls[-1][0]
    final = frame.set_index(KEY)
    part = last.set_index(KEY)
    assert part.index.isin(final.index).all()
    cols = ["final_correct", "closed", "class", "n_nodes"]
    pd.testing.assert_frame_equal(part[cols], final.loc[part.index, cols])


def test_the_frame_does_not_depend_on_partial(monkeypatch, answer_checker):
    monkeypatch.setenv("DAGMATH_FRAME_CACHE", "0")
    monkeypatch.setattr(streamed, "PARTIAL_EVERY", 0.0)  # the sample scores in under 2 s
    plain = load_corpus([SAMPLE], stream_bytes=0, checker=answer_checker)
    seen = []
    watched = load_corpus(
        [SAMPLE], stream_bytes=0, checker=answer_checker, partial=lambda c, d, t: seen.append(d)
    )
    assert seen
    pd.testing.assert_frame_equal(watched.scored, plain.scored)
    assert watched.issues == plain.issues


@pytest.mark.parametrize("partial", [False, True], ids=["file order", "interleaved"])
def test_the_frame_made_while_scoring_is_the_frame_of_the_lines(
    partial, monkeypatch, answer_checker
):
    """The trajectories' frame is made a slice at a time as files are scored (here many
    slices of a few records, over a real pool, out of file order when interleaved), then
    put back in file order: the frame of the run's lines read back after scoring."""
    monkeypatch.setenv("DAGMATH_FRAME_CACHE", "0")
    monkeypatch.setattr(pipeline, "IN_PROCESS_BYTES", 0)
    monkeypatch.setattr(streamed, "SCORED_SLICE", 4096)  # ~10 records a slice
    with score_paths([SAMPLE], workers=2, checker=answer_checker) as run:
        expected = streamed.scored_frame_of_lines(run.lines(), slice_bytes=1 << 30)
    frame, _steps, _issues, _read = streamed.streamed_parts(
        [SAMPLE],
        checker=answer_checker,
        workers=2,
        partial=(lambda f, d, t: None) if partial else None,
        partial_every=0.0,
    )
    assert len(expected) > 100
    pd.testing.assert_frame_equal(frame, expected)


def test_files_waiting_for_verdicts_keep_their_place(monkeypatch, answer_checker):
    """Files whose answers are still being checked wait (looked at again every few files
    and at the end) and their rows still land in file order: here no verdict is known
    until the end, and the files come in reverse."""
    monkeypatch.setattr(streamed._Frames, "RECHECK_EVERY", 3)
    got: list[tuple] = []
    with score_paths(
        [SAMPLE], checker=answer_checker, on_file=lambda s, v, i: got.append((s, i))
    ) as run:
        expected = streamed.scored_frame_of_lines(run.trajectory_lines(), slice_bytes=1 << 30)
        verdicts = dict(run.verdicts)
    assert any(r.pair is not None for score, _ in got for r in score.records)
    frames = streamed._Frames(None, 0.0, None, len(got))
    for score, index in reversed(got):
        frames.add(score, {}, index)  # nothing checked yet: every file with a pair waits
    assert frames.waiting
    pd.testing.assert_frame_equal(frames.finish(verdicts), expected)
