"""The Overview on a fresh server reads its derived values back (dagmath_viz/viewcache.py).

A second "server" (Streamlit's caches cleared) must show the same leaderboard, spread,
Table 1 and class counts without deriving any of them again: the library functions that
derive them are made to raise.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import streamlit as st

from dagmath_viz import figures, metrics, paper_figures, tables
from dagmath_viz.cli import main
from tests.app.helpers import app_on

ROOT = Path(__file__).resolve().parents[2]
DERIVERS = [
    (tables, "leaderboard"), (tables, "model_spread"), (tables, "by_difficulty"),
    (tables, "table1"), (tables, "class_counts_table"), (metrics, "auc_curve"),
    (paper_figures, "spread_figure"), (paper_figures, "difficulty_figure"),
    (figures, "auc_figure"), (figures, "class_counts_figure"),
]  # fmt: skip


@pytest.fixture
def scored(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("DAGMATH_FRAME_CACHE_DIR", str(tmp_path / "frames"))
    monkeypatch.delenv("DAGMATH_FRAME_CACHE", raising=False)
    out = tmp_path / "scored.jsonl"
    assert main(["score", str(ROOT / "sample_data" / "runs"), "-o", str(out), "--no-cache",
                 "-q"]) == 0  # fmt: skip
    return out


def _shown(at) -> list[pd.DataFrame]:
    return [d.value for d in at.dataframe]


def _refuse(name):
    def fail(*args, **kwargs):
        raise AssertionError(f"{name} derived again on a fresh server")

    return fail


def test_fresh_server_shows_the_kept_values(scored, monkeypatch):
    st.cache_resource.clear()
    first = app_on(monkeypatch, scored)  # parses the file, leaves its frame copy
    st.cache_resource.clear()
    second = app_on(monkeypatch, scored)  # reads the copy, derives and keeps the values
    assert not second.exception, [e.value for e in second.exception]
    st.cache_resource.clear()
    with monkeypatch.context() as m:
        for module, name in DERIVERS:
            m.setattr(module, name, _refuse(name))
        third = app_on(monkeypatch, scored)
        assert not third.exception, [e.value for e in third.exception]
    for at in (second, third):
        assert len(at.get("plotly_chart")) == 4
    for before, after in zip(_shown(first), _shown(third), strict=True):
        pd.testing.assert_frame_equal(after, before)
    st.cache_resource.clear()


def test_fresh_server_without_the_cache_derives_again(scored, monkeypatch):
    monkeypatch.setenv("DAGMATH_FRAME_CACHE", "0")
    st.cache_resource.clear()
    app_on(monkeypatch, scored)
    st.cache_resource.clear()
    with monkeypatch.context() as m:
        m.setattr(tables, "table1", _refuse("table1"))
        again = app_on(monkeypatch, scored)
    assert again.exception  # derived again: nothing was kept
    st.cache_resource.clear()
