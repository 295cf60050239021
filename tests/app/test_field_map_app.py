"""The app's field map (``--map`` / ``DAGMATH_MAP``, and the text input beside the
uploader) over many files: a column most files lack is one row of the load problems, not
one per file (the same library call as ``dagmath score``'s stderr: tests/test_hf_formats.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import streamlit as st

from tests.app.helpers import app_on, problems_table


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_resource.clear()
    st.cache_data.clear()
    yield


def _run_folder(root: Path) -> Path:
    """20 files of one record each; only f01 and f02 have a ``question`` column."""
    run = root / "run"
    run.mkdir()
    for k in range(1, 21):
        record = {"problem_id": f"p{k}", "steps": [{"step_id": 1, "text": "\\boxed{2}"}]}
        if k <= 2:
            record["question"] = f"What is {k} + 1?"
        (run / f"f{k:02}.json").write_text(json.dumps([record]), encoding="utf-8")
    return run.resolve()


def test_a_column_18_of_20_files_lack_is_one_row(tmp_path: Path, monkeypatch) -> None:
    run = _run_folder(tmp_path)
    monkeypatch.setenv("DAGMATH_MAP", "problem_text=question")
    at = app_on(monkeypatch, run)
    assert not at.exception, [e.value for e in at.exception]
    table = problems_table(at)
    rows = table[table["problem"].str.startswith("--map ")]
    assert rows.to_dict("records") == [
        {
            "file": str(run),
            "where": "",
            "severity": "warning",
            "problem": "--map problem_text=question: no record has the field 'question' in 18 "
            "of the 20 files read (f03.json, f04.json, f05.json and 15 more); problem_text "
            "read as if unmapped in those",
        }
    ]
