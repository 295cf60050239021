"""The Overview on a fresh server reads its derived values back (dagmath_viz/store/views.py).

A second "server" (Streamlit's caches cleared) must show the same leaderboard, spread,
Table 1, class counts and charts (the folded ones opened) without deriving any of them
again: the library functions that derive them are made to raise.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pandas as pd
import pytest
import streamlit as st

from dagmath_viz.analysis import metrics, tables
from dagmath_viz.cli import main
from dagmath_viz.draw import figures, paper_figures
from tests.app.helpers import app_on
from tests.test_viewcache import _drop_empty  # the one test-side JSON normaliser

ROOT = Path(__file__).resolve().parents[2]
FOLDED = ("ov_difficulty_chart", "ov_auc_chart", "ov_counts_chart")
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


@contextlib.contextmanager
def _deriving_nothing(monkeypatch):
    """A fresh "server" (Streamlit's caches cleared) on which every deriver raises."""
    st.cache_resource.clear()
    with monkeypatch.context() as m:
        for module, name in DERIVERS:
            m.setattr(module, name, _refuse(name))
        yield


def _same_tables(first, again) -> None:
    assert not again.exception, [e.value for e in again.exception]
    for before, after in zip(_shown(first), _shown(again), strict=True):
        pd.testing.assert_frame_equal(after, before)


def _with_charts_open(at):
    """``at`` rerun with the three folded charts opened (as three clicks would)."""
    for key in FOLDED:
        at.session_state[key] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_fresh_server_shows_the_kept_values(scored, monkeypatch):
    st.cache_resource.clear()
    first = app_on(monkeypatch, scored)  # parses the file, leaves its frame copy
    assert len(first.get("plotly_chart")) == 1  # the spread; the other three are folded
    st.cache_resource.clear()
    second = app_on(monkeypatch, scored)  # reads the copy, derives and keeps the values
    assert not second.exception, [e.value for e in second.exception]
    specs = [c.proto.spec for c in _with_charts_open(second).get("plotly_chart")]
    with _deriving_nothing(monkeypatch):
        third = app_on(monkeypatch, scored)
        _same_tables(first, third)
        kept = [c.proto.spec for c in _with_charts_open(third).get("plotly_chart")]
    assert len(kept) == 4
    for was, now in zip(specs, kept, strict=True):  # the same figures, drawn from the cache
        assert _drop_empty(json.loads(now)) == _drop_empty(json.loads(was))
    st.cache_resource.clear()


def test_a_reopened_raw_folder_shows_the_kept_values(tmp_path, monkeypatch):
    """A raw folder, streamed as a large one is: the first server scores it and keeps its
    run copy and the derived values; the next reads both and derives nothing."""
    from dagmath_viz.run import corpus
    from tests.logcount import write_logcount

    monkeypatch.setenv("DAGMATH_FRAME_CACHE_DIR", str(tmp_path / "frames"))
    monkeypatch.delenv("DAGMATH_FRAME_CACHE", raising=False)
    monkeypatch.setattr(corpus, "STREAM_BYTES", 0)
    run = write_logcount(tmp_path / "run").resolve()
    st.cache_resource.clear()
    first = app_on(monkeypatch, run)
    assert not first.exception, [e.value for e in first.exception]
    assert first.session_state["_corpus"].run_copy is not None
    assert list((tmp_path / "frames" / "derived").iterdir())  # kept beside the copy
    with _deriving_nothing(monkeypatch):
        _same_tables(first, app_on(monkeypatch, run))
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


def test_folded_charts_are_drawn_once_opened(scored, monkeypatch):
    st.cache_resource.clear()
    at = app_on(monkeypatch, scored)
    labels = [e.label for e in at.expander if e.label.startswith("Chart:")]
    assert len(labels) == 3
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"]
              for c in _with_charts_open(at).get("plotly_chart")]  # fmt: skip
    assert len(titles) == 4
    assert "PASS@1 and R̂ per model" in titles[0]
    # each folded chart has its legend and its CSV download beside it
    for spec in at.get("plotly_chart")[1:]:
        figure = json.loads(spec.proto.spec)
        assert figure["layout"].get("showlegend", True) is not False
        legend = [t["name"] for t in figure["data"] if t.get("showlegend", True) and t["name"]]
        assert len(legend) >= 2, legend
    downloads = {b.proto.label for b in at.get("download_button")}
    for label in ("Download by difficulty group (CSV)", "Download the AUC curves (CSV)",
                  "Download the class counts (CSV)"):  # fmt: skip
        assert label in downloads
    st.cache_resource.clear()
