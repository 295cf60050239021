"""The kept copy of a streamed raw folder (``streamed.cached_parts``, ``colcache.*_run``).

A raw folder scored by the streaming pool is kept as a columnar copy and read back, with
its issues and file count, while none of its files changed. Each test counts how often the
pool really scored (``streamed_parts``) to tell a read copy from a new score.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from dagmath_viz.run import streamed
from dagmath_viz.run.corpus import load_corpus
from dagmath_viz.store import frames as colcache

ROOT = Path(__file__).resolve().parents[1]
MIXED = ROOT / "tests" / "data" / "mixed_run"


@pytest.fixture
def frames(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "frames"
    monkeypatch.setenv("DAGMATH_FRAME_CACHE_DIR", str(folder))
    monkeypatch.delenv("DAGMATH_FRAME_CACHE", raising=False)
    return folder


@pytest.fixture
def scores(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Appends 1 each time the pool scores (not when a copy is read back)."""
    calls: list[int] = []
    real = streamed.streamed_parts

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(streamed, "streamed_parts", counting)
    return calls


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """A copy of ``tests/data/mixed_run`` (trajectories, pre-scored records, a bad file)."""
    return Path(shutil.copytree(MIXED, tmp_path / "run"))


def test_second_open_reads_the_copy_with_the_same_rows_and_issues(frames, scores, run):
    first = load_corpus([run], stream_bytes=0)
    assert scores == [1] and len(list(frames.glob("run*.parquet"))) == 1
    again = load_corpus([run], stream_bytes=0)
    assert scores == [1]  # read back, not scored again
    pd.testing.assert_frame_equal(again.scored, first.scored)
    assert again.issues == first.issues and again.files_read == first.files_read
    assert all(t is None for t in again.trajectories)


def test_a_rewritten_file_is_scored_again(frames, scores, run):
    load_corpus([run], stream_bytes=0)
    some = run / "model_a" / "algebra" / "problem_1_all_samples.json"
    some.write_bytes(some.read_bytes())  # same bytes: only its change time moves
    load_corpus([run], stream_bytes=0)
    assert scores == [1, 1]
    assert len(list(frames.glob("run*.parquet"))) == 1  # the stale copy was replaced


def test_a_new_file_is_scored_again(frames, scores, run):
    first = load_corpus([run], stream_bytes=0)
    src = next(p for p in sorted(run.rglob("problem_*_all_samples.json")))
    shutil.copy(src, src.with_name("problem_9999_all_samples.json"))
    second = load_corpus([run], stream_bytes=0)
    assert scores == [1, 1]
    assert len(second) > len(first)


def test_a_file_changed_while_scoring_is_not_kept(frames, monkeypatch, run):
    real = streamed.streamed_parts
    victim = run / "model_a" / "algebra" / "problem_1_all_samples.json"

    def changing(*args, **kwargs):
        out = real(*args, **kwargs)
        os.utime(victim, ns=(1, 1))  # its modification time moves while it was scored
        return out

    monkeypatch.setattr(streamed, "streamed_parts", changing)
    load_corpus([run], stream_bytes=0)
    assert not list(frames.glob("run*.parquet"))


def test_answer_keys_are_part_of_what_must_match(frames, scores, run):
    first = load_corpus([run], stream_bytes=0)
    answers = run / "answers.json"
    answers.write_bytes(answers.read_bytes())  # rewritten, the same answers
    load_corpus([run], stream_bytes=0)
    assert scores == [1]  # the answer keys read the same: the copy holds
    answers.write_text('{"1": "7", "2": "\\\\frac{1}{2}"}')  # problem 1's answer: 6 -> 7
    second = load_corpus([run], stream_bytes=0)
    assert scores == [1, 1]
    before = set(first.scored.loc[first.scored["problem_id"] == "1", "reference_answer"])
    after = set(second.scored.loc[second.scored["problem_id"] == "1", "reference_answer"])
    assert before == {"6"} and after == {"7"}


def test_no_copy_when_turned_off(frames, scores, monkeypatch, run):
    monkeypatch.setenv("DAGMATH_FRAME_CACHE", "0")
    load_corpus([run], stream_bytes=0)
    load_corpus([run], stream_bytes=0)
    assert scores == [1, 1] and not frames.exists()


def test_a_corrupt_copy_is_scored_again(frames, scores, run):
    first = load_corpus([run], stream_bytes=0)
    (copy,) = frames.glob("run*.parquet")
    copy.write_bytes(b"PAR1 not really")
    again = load_corpus([run], stream_bytes=0)
    assert scores == [1, 1]
    pd.testing.assert_frame_equal(again.scored, first.scored)


def test_the_in_memory_path_keeps_no_run_copy(frames, run):
    load_corpus([run], stream_bytes=1 << 62)
    assert not list(frames.glob("run*.parquet"))


def test_read_run_of_an_unknown_key_is_none(frames):
    assert colcache.read_run("[]", "nothing") is None
