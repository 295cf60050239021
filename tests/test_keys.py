"""Every cache key carries a digest of the code that derives the value (store/keys.py):
change the code and a kept frame, a kept run and the derived views all miss."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dagmath_viz.formats.discovery import discover
from dagmath_viz.run.streamed import run_key
from dagmath_viz.store import frames, keys

REPO = Path(__file__).resolve().parents[1]
RUN = REPO / "sample_data" / "runs"


@pytest.fixture
def package_copy(tmp_path, monkeypatch):
    """The key recipe pointed at a copy of the package whose files a test may edit."""
    copy = tmp_path / "dagmath_viz"
    shutil.copytree(keys.CODE_ROOT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(keys, "CODE_ROOT", copy)
    keys.code_digest.cache_clear()
    yield copy
    keys.code_digest.cache_clear()


def _edit(path: Path) -> None:
    """A change to how a derived field is computed (a comment would do for the digest;
    a real edit shows what an upgrade looks like)."""
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("def records_frame(", "def records_frame(  # changed\n", 1))


def test_the_digest_follows_every_source_file(package_copy, tmp_path):
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "a.py").write_text("x = 1\n")
    first = keys.code_digest(pages)
    assert keys.code_digest(pages) == first
    (pages / "a.py").write_text("x = 2\n")
    keys.code_digest.cache_clear()
    assert keys.code_digest(pages) != first
    package = keys.code_digest()
    (package_copy / "score" / "new_module.py").write_text("y = 1\n")
    keys.code_digest.cache_clear()
    assert keys.code_digest() != package


def test_a_changed_derivation_misses_every_cache(package_copy, tmp_path):
    scored = tmp_path / "scored.jsonl"
    scored.write_text('{"a": 1}\n')
    found = discover([RUN])
    before = (run_key(found), frames.file_key(scored), keys.cache_key("view", "table1"))
    assert None not in before
    _edit(package_copy / "score" / "record.py")
    keys.code_digest.cache_clear()
    after = (run_key(found), frames.file_key(scored), keys.cache_key("view", "table1"))
    assert all(b != a for b, a in zip(before, after, strict=True))
    # and the same code gives the same keys again (a hit)
    keys.code_digest.cache_clear()
    assert (run_key(found), frames.file_key(scored)) == after[:2]
