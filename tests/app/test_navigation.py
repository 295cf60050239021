"""Navigation that tells the truth: selectors, stale deep links, scored sources, reloads.

AppTest runs the real app.py in this process (no browser); the trajectory table, drill-down
switches and the URL are checked against the library's own answers.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dagmath_viz.run.corpus import load_corpus
from tests.app.helpers import app_on, choice, on_page
from tests.logcount import write_logcount

APP = str(Path(__file__).resolve().parents[2] / "app.py")
SAMPLE = Path(APP).parent / "sample_data" / "runs"


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_resource.clear()
    st.cache_data.clear()
    yield


@pytest.fixture(scope="module")
def logcount(tmp_path_factory) -> Path:
    """model-a writes the perfect, imperfect and wrong walks; model-b the perfect one twice."""
    return write_logcount(tmp_path_factory.mktemp("nav-logcount"))


def _scored_jsonl(run: Path, out: Path, source=None) -> Path:
    """``dagmath score``'s JSONL for ``run`` (sources rewritten by ``source`` if given)."""
    frame = load_corpus([run]).scored
    with out.open("wb") as fh:
        for rec in frame.to_dict("records"):
            if source is not None:
                rec["source"] = source(rec["source"])
            fh.write(orjson.dumps(rec, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n")
    return out


def _app(monkeypatch, data: Path | None, **params) -> AppTest:
    return app_on(monkeypatch, data, timeout=90, **params)


_page = on_page


def _text(elements) -> list[str]:
    return [e.value.replace("\\", "") for e in elements]


# --- stale deep links ----------------------------------------------------------------------


def test_link_to_a_problem_that_does_not_exist_names_it_and_opens_nothing(monkeypatch, logcount):
    at = _app(monkeypatch, logcount, model="model-a", dataset="logs", problem="999", sample="0")
    _page(at, "pages/trajectory.py")
    errors = _text(at.error)
    assert any("“999” does not exist" in e and "Problem" in e for e in errors), errors
    assert not at.get("iframe"), "a graph was drawn for a problem that does not exist"
    assert not at.metric
    assert at.query_params["problem"] == "999"  # the URL is not rewritten
    assert choice(at, "traj_problem").value is None  # the box shows no other problem


def test_link_to_a_model_that_does_not_exist_names_it(monkeypatch, logcount):
    at = _app(monkeypatch, logcount, model="nonexistent", dataset="logs", problem="1")
    _page(at, "pages/trajectory.py")
    assert any("Model “nonexistent” does not exist" in e for e in _text(at.error))
    assert not at.get("iframe") and not at.metric
    # choosing a model recovers: the page then shows it
    choice(at, "traj_model").set_value("model-b").run()
    assert not at.error
    assert {m.label: m.value for m in at.metric}["Steps / edges"].startswith("9 /")


def test_compare_link_to_unknown_models_names_them(monkeypatch, logcount):
    at = _app(monkeypatch, logcount)
    at.query_params["models"] = ["model-a", "ghost"]
    _page(at, "pages/compare.py")
    assert any("“ghost”" in e for e in _text(at.error))
    assert not at.get("iframe")


# --- selectors show what the page shows ------------------------------------------------------


def test_changing_dataset_moves_every_selector_with_the_page(monkeypatch):
    at = _app(monkeypatch, None, model="sim-focus-2.4", dataset="arith-word", problem="104")
    _page(at, "pages/trajectory.py")
    assert choice(at, "traj_problem").value == "104"
    choice(at, "traj_dataset").set_value("olympiad-lite").run()
    problem = choice(at, "traj_problem").value
    engine = load_corpus([SAMPLE]).problems("sim-focus-2.4", "olympiad-lite")
    assert problem in engine and problem == engine[0]
    assert at.query_params["problem"] == problem  # the page shows the box's problem
    assert any(f"problem {problem}" in c or "Trajectory 1 of" in c for c in _text(at.caption))


def test_next_button_moves_the_box_too(monkeypatch, logcount):
    at = _app(monkeypatch, logcount, model="model-a", dataset="logs", problem="1", sample="0")
    _page(at, "pages/trajectory.py")
    next(b for b in at.button if "Next" in b.label).click().run()
    assert choice(at, "traj_sample").value == 1
    assert at.query_params["sample"] == "1"


# --- scored JSONL as a source ---------------------------------------------------------------


def test_scored_jsonl_draws_the_trajectory_from_its_source(monkeypatch, logcount, tmp_path):
    scored = _scored_jsonl(logcount, tmp_path / "scored.jsonl")
    # the scored file sits apart from the run it scored: --sources names the run's folder
    monkeypatch.setenv("DAGMATH_SOURCES", str(logcount))
    at = _app(monkeypatch, scored, model="model-a", dataset="logs", problem="1", sample="1")
    _page(at, "pages/trajectory.py")
    assert not at.warning
    html = at.get("iframe")[0].proto.srcdoc
    assert '"kind": "dead_end"' in html  # the imperfect walk's one dead end (step 8)


def test_scored_jsonl_with_missing_source_names_the_path(monkeypatch, logcount, tmp_path):
    scored = _scored_jsonl(
        logcount, tmp_path / "scored.jsonl", source=lambda s: "moved/" + Path(s).name
    )
    at = _app(monkeypatch, scored, model="model-a", dataset="logs", problem="1", sample="1")
    _page(at, "pages/trajectory.py")
    warnings = _text(at.warning)
    assert any("source file not found: moved/problem_1_all_samples.json" in w for w in warnings)
    assert not at.get("iframe")
    # Dead ends: the records' own dead ends, categories unknown, never "no dead ends"
    _page(at, "pages/dead_ends.py")
    assert not any("No dead ends" in s for s in _text(at.success))
    table = next(f.value for f in at.dataframe if "category" in f.value.columns)
    # imperfect walk: step 8; wrong walk: step 2 (as hand-counted in test_pages)
    assert sorted(table["step_id"]) == [2, 8]
    assert set(table["category"]) == {"unknown"}
    assert any("moved/problem_1_all_samples.json" in i for i in _text(at.info))


def test_scored_jsonl_dead_ends_categorised_from_readable_sources(monkeypatch, logcount, tmp_path):
    scored = _scored_jsonl(logcount, tmp_path / "scored.jsonl")
    monkeypatch.setenv("DAGMATH_SOURCES", str(logcount))  # as above
    at = _page(_app(monkeypatch, scored), "pages/dead_ends.py")
    table = next(f.value for f in at.dataframe if "category" in f.value.columns)
    assert sorted(zip(table["category"], table["step_id"], strict=True)) == [
        ("commentary", 8),
        ("unused given", 2),
    ]


# --- the trajectory table -------------------------------------------------------------------


def test_table_lists_filters_and_searches(monkeypatch, logcount):
    at = _page(_app(monkeypatch, logcount), "pages/trajectories.py")
    table = next(f.value for f in at.dataframe if "dead ends" in f.value.columns)
    assert len(table) == 5
    # sorted by steps, longest first: the imperfect walk has 10 steps
    assert table.iloc[0]["steps"] == 10 and table.iloc[0]["class"] == "imperfect"
    at.multiselect(key="tt_correct").set_value(["wrong"]).run()
    table = next(f.value for f in at.dataframe if "dead ends" in f.value.columns)
    assert list(zip(table["model"], table["sample"], strict=True)) == [("model-a", 2)]
    at.multiselect(key="tt_correct").set_value([]).run()
    at.text_input(key="tt_query").set_value("WHY V9").run()  # thinking of step v9
    table = next(f.value for f in at.dataframe if "dead ends" in f.value.columns)
    assert sorted(zip(table["model"], table["sample"], strict=True)) == [
        ("model-a", 1),
        ("model-a", 2),
    ]


# --- reload and uploads -----------------------------------------------------------------------


def test_reload_clears_only_this_data_source(monkeypatch, logcount):
    import explorer.common as common

    loads: list[str] = []
    real = common.load_corpus

    def counting(paths, **kw):
        loads.append(str(paths[0]))
        return real(paths, **kw)

    monkeypatch.setattr(common, "load_corpus", counting)
    at = _app(monkeypatch, logcount)
    at.radio(key="data_source").set_value("Bundled sample data").run()
    at.radio(key="data_source").set_value(f"--data {logcount}").run()
    assert not at.exception
    before = list(loads)  # both sources are cached now (whether loaded here or earlier)
    next(b for b in at.button if b.label == "Reload from disk").click().run()
    assert loads == [*before, str(logcount)]  # this one was read again
    at.radio(key="data_source").set_value("Bundled sample data").run()
    assert loads == [*before, str(logcount)]  # the other one is still cached


def test_uploads_gone_after_a_reload_are_announced(monkeypatch):
    at = _app(monkeypatch, None, source="upload")
    assert at.radio(key="data_source").value == "Uploaded files"
    assert any("uploaded files are gone" in w for w in _text(at.sidebar.warning))
