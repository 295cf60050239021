"""Every cache key carries a digest of the code that derives the value (store/keys.py):
change the code and a kept frame, a kept run and the derived views all miss."""

from __future__ import annotations

import json
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


def test_an_edited_companion_misses_the_kept_run(tmp_path, monkeypatch):
    """A Thought Anchors reference answer lives in problem.json, read with the chunks: a
    kept run copy made before the reference was corrected must not be shown after."""
    from dagmath_viz.run.corpus import load_corpus

    monkeypatch.setenv("DAGMATH_FRAME_CACHE_DIR", str(tmp_path / "frames"))
    folder = tmp_path / "ta" / "model-x" / "correct_base_solution" / "problem_7"
    folder.mkdir(parents=True)
    chunks = [
        {"chunk_idx": 0, "chunk": "Let x = 1.", "depends_on": []},
        {"chunk_idx": 1, "chunk": r"So the answer is $\boxed{3}$.", "depends_on": ["0"]},
    ]
    (folder / "chunks_labeled.json").write_text(json.dumps(chunks))
    (folder / "base_solution.json").write_text('{"answer": "3"}')
    problem = folder / "problem.json"
    problem.write_text('{"problem": "x?", "gt_answer": "3", "level": "Level 2"}')
    root = tmp_path / "ta"
    key = run_key(discover([root]))
    first = load_corpus([root], stream_bytes=0).scored
    assert first["final_correct"].tolist() == [True]
    problem.write_text('{"problem": "x?", "gt_answer": "4", "level": "Level 2"}')
    assert run_key(discover([root])) != key
    again = load_corpus([root], stream_bytes=0).scored
    assert again["reference_answer"].tolist() == ["4"]
    assert again["final_correct"].tolist() == [False]
