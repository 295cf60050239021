"""The app's loads share ``dagmath score``'s verdicts on disk (``load_corpus(keep_verdicts=True)``).

Before, the app checked every answer pair with math-verify on each first open of a folder,
even one ``dagmath score`` had just scored: 100,000 trajectories took ~40 s where the
command took ~15 s. The expected verdicts below are set by hand: a verdict planted in the
cache file that math-verify would never give ("8" for a reference of "7") must be what a
kept-verdict load reports, on both load paths, and what a load learns must be written.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from dagmath_viz.answers import check as answers
from dagmath_viz.answers.check import default_cache_file, kept_checker
from dagmath_viz.run.corpus import load_corpus
from dagmath_viz.store.uploads import UPLOADS_PREFIX

IN_MEMORY = 1 << 62


def _folder(root: Path, pairs: list[tuple[str, str]]) -> Path:
    """One problem per (reference, predicted) pair, official layout, one closed sample."""
    run = root / "run"
    for i, (reference, predicted) in enumerate(pairs):
        folder = run / "model-a" / "set-x"
        folder.mkdir(parents=True, exist_ok=True)
        sample = {
            "problem_id": i,
            "sample_id": 0,
            "steps": [
                {"step_id": 1, "text": "Given.", "direct_dependent_steps": None},
                {"step_id": 2, "text": f"$\\boxed{{{predicted}}}$", "direct_dependent_steps": [1]},
            ],
            "answer": reference,
        }
        (folder / f"problem_{i}_all_samples.json").write_text(json.dumps([sample]))
    return run


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """A fresh verdict cache folder for this test (and a fresh kept checker for it); no
    columnar copies, which would hand a second load the first one's scores."""
    monkeypatch.setenv("DAGMATH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DAGMATH_FRAME_CACHE", "0")
    monkeypatch.delenv(answers.VERDICT_CACHE_ENV, raising=False)
    return default_cache_file()


def _plant(cache_file: Path, rows: list[list]) -> None:
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    cache_file.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))


def _saved(cache_file: Path) -> set[tuple]:
    if not cache_file.exists():
        return set()
    return {tuple(orjson.loads(line)) for line in cache_file.read_bytes().splitlines() if line}


@pytest.mark.parametrize("stream", [0, IN_MEMORY], ids=["streamed", "in-memory"])
def test_a_kept_verdict_is_what_the_load_reports(tmp_path, cache, stream):
    run = _folder(tmp_path, [("7", "8")])
    _plant(cache, [["7", "8", True, "verified"]])  # wrong on purpose: only the cache says so
    kept = load_corpus([run], keep_verdicts=True, stream_bytes=stream)
    assert kept.scored["final_correct"].tolist() == [True]
    plain = load_corpus([run], stream_bytes=stream)  # the process-wide memory-only checker
    assert plain.scored["final_correct"].tolist() == [False]


def test_what_a_load_learns_is_saved_for_the_next(tmp_path, cache):
    # y+1 and 1+y need math-verify (no fast path reads a polynomial in y); 2 and 3 are plain
    # numbers, decided without it, and so never written (dagmath score writes only checks)
    run = _folder(tmp_path, [("y+1", "1+y"), ("2", "3")])
    corpus = load_corpus([run], keep_verdicts=True, stream_bytes=0)
    assert corpus.scored.sort_values("problem_id")["final_correct"].tolist() == [True, False]
    assert _saved(cache) == {("y+1", "1+y", True, "verified")}


def test_uploaded_files_keep_nothing(tmp_path, cache):
    store = tmp_path / f"{UPLOADS_PREFIX}session"
    run = _folder(store, [("y+1", "1+y")])
    corpus = load_corpus([run], keep_verdicts=True, stream_bytes=0)
    assert corpus.scored["final_correct"].tolist() == [True]
    assert not cache.exists()


def test_the_environment_can_turn_it_off(tmp_path, cache, monkeypatch):
    monkeypatch.setenv(answers.VERDICT_CACHE_ENV, "0")
    assert kept_checker().cache_file is None
    run = _folder(tmp_path, [("y+1", "1+y")])
    load_corpus([run], keep_verdicts=True, stream_bytes=0)
    assert not cache.exists()


def test_one_kept_checker_per_cache_file(tmp_path, monkeypatch):
    monkeypatch.setenv("DAGMATH_CACHE_DIR", str(tmp_path / "a"))
    first = kept_checker()
    assert kept_checker() is first
    assert first.cache_file == tmp_path / "a" / default_cache_file().name
    monkeypatch.setenv("DAGMATH_CACHE_DIR", str(tmp_path / "b"))
    assert kept_checker() is not first
