"""Issue 33's "Done when" for the app: every page stays up on a results folder holding the
issue's hostile inputs beside good files (``tests/redteam33_inputs.py``, the folder
``dagmath score`` meets in ``tests/test_redteam_33_done.py``), and the pages the red team
saw die open on the record that killed them: a 5,000-digit problem id (Trajectories,
Trajectory, Compare: item 5), a scored record's source position of 5,000 digits and at
``/etc/passwd`` (Trajectory, Dead ends: items 5 and 8), the look-alike names (item 10).
The companion FIFO (item 3) would hang the load for ever: AppTest's timeout is the guard.
"""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.app.helpers import (
    APP,
    PAGES,
    corpora_loaded_once,
    on_page,
    problems_table,
    short_answer_deadline,
)
from tests.redteam33_inputs import LINE_CAP, LONG_DIGITS, build


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_resource.clear()
    st.cache_data.clear()
    yield


@pytest.fixture(scope="module", autouse=True)
def _one_quick_load():
    """The app's answer checker with a 2 s deadline, and each folder loaded once for the
    module (every test still clears Streamlit's caches and draws its pages afresh): the
    answers that stall math-verify cost two seconds each, once, instead of five each on
    every test (their verdict is "not equivalent" either way)."""
    with short_answer_deadline(2.0), corpora_loaded_once():
        yield


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    return build(tmp_path_factory.mktemp("redteam33-app"))


def _app(monkeypatch, inputs, **query: str) -> AppTest:
    monkeypatch.setenv("DAGMATH_DATA", str(inputs.root))
    monkeypatch.setenv("DAGMATH_MAX_LINE_BYTES", str(LINE_CAP))
    monkeypatch.setenv("DAGMATH_FRAME_CACHE", "0")
    at = AppTest.from_file(APP, default_timeout=240)  # the hang guard (the FIFO companion)
    at.query_params.update(query)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_every_page_stays_up_beside_every_hostile_input(monkeypatch, inputs):
    at = _app(monkeypatch, inputs)
    for page in PAGES:
        on_page(at, page)
        assert at.title, page
        text = " ".join(m.value for m in [*at.markdown, *at.caption, *at.error, *at.warning])
        assert "Traceback" not in text, page
    files = set(problems_table(at)["file"])
    for bad in (inputs.long_line, inputs.fifo, *inputs.companions.values()):
        assert str(bad) in files, bad  # each bad file named in the problems panel


def test_the_good_records_are_all_there(monkeypatch, inputs):
    at = on_page(_app(monkeypatch, inputs), "pages/trajectories.py")
    (table,) = [f.value for f in at.dataframe if {"model", "problem", "class"} <= set(f.value)]
    # item 2: 3,000 scored records with a key of their own each: one frame, the known width
    assert not any(str(c).startswith("own_key_") for c in table.columns)
    mine = table[table["model"] == "m"].set_index("problem")["class"]
    assert [mine[p] for p in inputs.good] == ["perfect", "perfect"]
    assert (mine[list(inputs.crafted)] == "incorrect").all()  # item 1: each its own verdict
    assert mine[inputs.long_id] == "perfect"  # item 5: listed, sorted, shown


def test_a_5000_digit_problem_id_opens_on_trajectories_trajectory_and_compare(monkeypatch, inputs):
    at = _app(monkeypatch, inputs)
    on_page(at, "pages/trajectories.py")
    query = {"model": "m", "dataset": "data", "problem": inputs.long_id, "sample": "0"}
    at = _app(monkeypatch, inputs, **query)
    on_page(at, "pages/trajectory.py")
    assert at.get("iframe"), "the trajectory's view is drawn"
    at = _app(monkeypatch, inputs, models=["m", "ta-model"])
    on_page(at, "pages/compare.py")


@pytest.mark.parametrize(
    "source", ["/etc/passwd", f"good.json[{LONG_DIGITS}]", f"good.json:item {LONG_DIGITS}"]
)
def test_a_hostile_source_is_not_found_on_the_trajectory_page(monkeypatch, inputs, source):
    problem = {"/etc/passwd": "s0", f"good.json[{LONG_DIGITS}]": "s2"}.get(source, "s3")
    query = {"model": "scored-m", "dataset": "d", "problem": problem, "sample": "0"}
    at = on_page(_app(monkeypatch, inputs, **query), "pages/trajectory.py")
    assert not at.get("iframe")
    shown = [w.value.replace("\\", "") for w in at.warning if "cannot be shown" in w.value]
    assert len(shown) == 1 and "source file not found: " in shown[0], shown
    assert "root:" not in shown[0]


def test_look_alike_names_are_told_apart_in_the_model_list(monkeypatch, inputs):
    at = _app(monkeypatch, inputs)
    on_page(at, "pages/overview.py")
    cells = " ".join(str(v) for f in at.dataframe for v in f.value.astype(str).values.ravel())
    assert "good-model[U+200B]" in cells and "[U+202E]ledom-doog" in cells
