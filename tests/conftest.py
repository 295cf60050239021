"""Fixtures shared by the engine tests: the real few-shot data, test data, one answer checker.

One fixture is autouse: :func:`_private_frame_cache` points the columnar copies of scored
JSONL (:mod:`dagmath_viz.store.frames`) at a folder of the test session, so no test writes to
the user's ``~/.cache`` (servers the browser tests start inherit it).

``shared_data`` skips when ``../shared`` is absent, and fails instead when
``DAGMATH_REQUIRE_SHARED=1`` (so CI cannot pass by silently skipping).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from dagmath_viz.answers.check import AnswerChecker

REQUIRE_SHARED = "DAGMATH_REQUIRE_SHARED"
SHARED_ROOT = Path(__file__).parents[1] / ".." / "shared"
TEST_DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session", autouse=True)
def _private_frame_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """``DAGMATH_FRAME_CACHE_DIR`` and ``DAGMATH_CACHE_DIR`` (the verdicts the app and
    ``dagmath score`` keep) in session folders unless the environment sets them: the
    suite never writes to the user's own cache."""
    names = ("DAGMATH_FRAME_CACHE_DIR", "frame-cache"), ("DAGMATH_CACHE_DIR", "verdict-cache")
    set_here = []
    for name, folder in names:
        if name not in os.environ:
            os.environ[name] = str(tmp_path_factory.mktemp(folder))
            set_here.append(name)
    try:
        yield
    finally:
        for name in set_here:
            os.environ.pop(name, None)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data/dagmath-fewshot`` (the four real gold solutions), resolved."""
    path = (SHARED_ROOT / "data" / "dagmath-fewshot").resolve()
    if not (path / "fewshot_solutions.json").is_file():
        reason = f"shared data not found at {path}"
        if os.environ.get(REQUIRE_SHARED) == "1":
            pytest.fail(f"{reason} and {REQUIRE_SHARED}=1", pytrace=False)
        pytest.skip(f"{reason} (set {REQUIRE_SHARED}=1 to make this a failure)")
    return path


def shared_file(relative: str) -> Path:
    """``../shared/data/<relative>``, resolved; skips the test when it is not there (fails
    instead when ``DAGMATH_REQUIRE_SHARED=1``)."""
    path = (SHARED_ROOT / "data" / relative).resolve()
    if not path.exists():
        reason = f"shared data not found at {path}"
        if os.environ.get(REQUIRE_SHARED) == "1":
            pytest.fail(f"{reason} and {REQUIRE_SHARED}=1", pytrace=False)
        pytest.skip(f"{reason} (set {REQUIRE_SHARED}=1 to make this a failure)")
    return path


@pytest.fixture(scope="session")
def thought_anchors_root() -> Path:
    """``../shared/data/thought-anchors`` (40 real chains in Thought Anchors' layout)."""
    return shared_file("thought-anchors/deepseek-r1-distill-qwen-14b").parent


@pytest.fixture(scope="session")
def mathgap_problems() -> Path:
    """``../shared/data/mathgap-sample/problems.jsonl``: 155 word problems as text."""
    return shared_file("mathgap-sample/problems.jsonl")


@pytest.fixture(scope="session")
def paper_examples() -> Path:
    """``../shared/data/efficiency-paper-examples/examples.jsonl``: the efficiency paper's
    Appendix D problems, each with a proof."""
    return shared_file("efficiency-paper-examples/examples.jsonl")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """``tests/data``: the small hand-written fixture files."""
    return TEST_DATA


@pytest.fixture(scope="session")
def answer_checker() -> Iterator[AnswerChecker]:
    """One answer-check worker for the whole session (each start costs a second or two)."""
    checker = AnswerChecker(timeout=20)
    yield checker
    checker.close()
