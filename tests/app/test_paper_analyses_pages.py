"""AppTest of the paper's analyses on Overview and Distributions, and the simulated-data label."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dagmath_viz.analysis.tables import leaderboard, model_spread, split_logic_strategies
from dagmath_viz.bundled import BUNDLED_NOTICE
from dagmath_viz.run.corpus import load_corpus
from tests.app.helpers import app_on, on_page, two_problem_run

APP = str(Path(__file__).resolve().parents[2] / "app.py")
RUNS = Path(APP).parent / "sample_data" / "runs"


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    """One model, two problems: the leaderboard rests on fewer than 20 problems."""
    root = two_problem_run(tmp_path_factory.mktemp("tiny"))
    (root / "answers.json").write_text(json.dumps({"1": "7", "2": "8"}))
    return root


def _page(data: Path | None, page: str) -> AppTest:
    """A fresh AppTest (caches cleared) of ``page`` on ``data`` (None: the bundled data)."""
    st.cache_resource.clear()
    st.cache_data.clear()
    with pytest.MonkeyPatch.context() as mp:
        return on_page(app_on(mp, data, timeout=120), page)


@pytest.fixture(scope="module")
def bundled():
    """``bundled(page)``: that page's one AppTest run on the bundled data, shared by every test
    here that only reads what it shows (each run costs seconds: scoring, bootstrap, charts)."""
    runs: dict[str, AppTest] = {}

    def get(page: str) -> AppTest:
        if page not in runs:
            runs[page] = _page(None, page)
        return runs[page]

    yield get
    st.cache_resource.clear()
    st.cache_data.clear()


@pytest.mark.parametrize("page", ["pages/overview.py", "pages/distributions.py"])
def test_bundled_data_is_labelled_simulated(bundled, page):
    at = bundled(page)
    assert any(BUNDLED_NOTICE in i.value for i in at.info)


def test_own_data_is_not_labelled_and_few_problems_warn(tiny_run):
    at = _page(tiny_run, "pages/overview.py")
    assert not any(BUNDLED_NOTICE in i.value for i in at.info)
    assert any("fewer than 20 problems" in w.value for w in at.warning)
    # one model on one dataset: one row, said so (not "1 of 1 rows rest ... their")
    assert any(w.value.startswith("The only row rests on fewer than 20 problems: its interval")
               for w in at.warning)  # fmt: skip


def test_overview_shows_pass_at_1_and_r_hat_per_model(bundled):
    at = bundled("pages/overview.py")
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    spread = next(c for c in charts if "PASS@1 and R̂ per model" in c["layout"]["title"]["text"])
    names = {t["name"] for t in spread["data"]}
    assert names == {"PASS@1", "R̂"}
    # the spread table: the library's numbers, in percent
    df = load_corpus([RUNS]).scored
    engine = model_spread(df).set_index("dataset")
    shown = next(f.value for f in at.dataframe if "std PASS@1 / std R̂" in f.value.columns)
    shown = shown.set_index("dataset")
    for dataset in ("arith-word", "olympiad-lite"):
        ratio = engine.at[dataset, "ratio"]
        assert shown.at[dataset, "std PASS@1 / std R̂"] == f"{ratio:.1f}" and ratio >= 3
    # one PASS@1 and one R̂ trace per dataset of models (simulated logic-program strategies
    # have a table of their own, outside the spread)
    board = leaderboard(split_logic_strategies(df)[0], n_boot=0)
    assert len(spread["data"]) == 2 * board["dataset"].nunique()


def test_overview_table1_shows_a_dash_for_an_empty_cohort(bundled):
    """The bundled gsm-bfs run (26 trajectories) is all correct and none is perfect (each
    has a dead end): its Incorrect and Perfect cohorts are empty, so their means are
    unknown; the grid shows "–" for them, not "None"."""
    at = bundled("pages/overview.py")
    grid = next(f for f in at.dataframe if "#nodes" in f.value.columns)
    assert grid.proto.placeholder == "–"
    t1 = grid.value.set_index(["model", "cohort"])
    assert t1.loc[("gsm-bfs", "Incorrect"), "n"] == 0
    assert t1.loc[("gsm-bfs", "Perfect"), "n"] == 0
    assert t1.loc[("gsm-bfs", "Incorrect"), ["#nodes", "density (%)"]].isna().all()
    assert t1.loc[("gsm-bfs", "All"), "n"] == 26


@pytest.mark.parametrize(
    "page", ["pages/overview.py", "pages/distributions.py", "pages/dead_ends.py"]
)
def test_downloads_do_not_rerun_the_app(bundled, page):
    """Every CSV download (explorer.common.download) only downloads: a click must not rerun
    a page that may hold a million rows."""
    at = bundled(page)
    buttons = at.get("download_button")
    assert buttons, page
    assert all(b.proto.ignore_rerun for b in buttons), [b.proto.label for b in buttons]


def test_distributions_show_closeness_and_shift(bundled):
    at = bundled("pages/distributions.py")
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert any("Accuracy by closeness" in t for t in titles)
    assert any("Appendix F" in t for t in titles)
