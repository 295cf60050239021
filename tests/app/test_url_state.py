"""State in the address (issue 34 items 6 and 7), in AppTest on the log-count data.

The log-count folder (``tests/logcount.py``): model-a's walks perfect (9 steps), imperfect
(10) and wrong (7) of problem 1, model-b's perfect walk twice.
"""

from __future__ import annotations

import json
import re

import pytest
import streamlit as st

from tests.app.helpers import app_on, on_page
from tests.logcount import write_logcount


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_resource.clear()
    st.cache_data.clear()
    yield


@pytest.fixture(scope="module")
def logcount(tmp_path_factory):
    return write_logcount(tmp_path_factory.mktemp("url-logcount"))


def _view(at) -> dict:
    html = at.get("iframe")[0].proto.srcdoc
    return json.loads(re.search(r'id="dm-data">(.*?)</script>', html, re.S).group(1))["view"]


def test_a_step_link_selects_and_moving_on_drops_it(monkeypatch, logcount):
    at = app_on(monkeypatch, logcount, model="model-a", dataset="logs", problem="1",
                sample="1", step="8")  # fmt: skip
    at = on_page(at, "pages/trajectory.py")
    view = _view(at)
    assert view["selected"] == 7 and view["link_steps"] is True  # step 8 is position 7
    assert at.query_params["step"] == "8"
    next(b for b in at.button if b.label == "Next ▶").click().run()
    assert "step" not in at.query_params  # it named a step of the trajectory left
    assert _view(at)["selected"] is None


def test_find_opens_at_the_first_matching_step(monkeypatch, logcount):
    # the imperfect walk v1 v2 v3 v4 v5 v6 v7 v9 v8 v10, each step's text "statement v<k>"
    # (tests/logcount.py): "V7" (any case) is in its 7th step only, position 6
    at = app_on(monkeypatch, logcount, model="model-a", dataset="logs", problem="1",
                sample="1", find="V7")  # fmt: skip
    at = on_page(at, "pages/trajectory.py")
    view = _view(at)
    assert view["find"] == "V7" and view["find_hits"] == [6] and view["selected"] == 6


def test_the_trajectories_page_keeps_its_filters_in_the_address(monkeypatch, logcount):
    at = app_on(monkeypatch, logcount, q="log", m="model-b", sort="class", desc="0")
    at = on_page(at, "pages/trajectories.py")
    # the address filled the boxes
    assert at.text_input(key="tt_query").value == "log"
    assert at.multiselect(key="tt_models").value == ["model-b"]
    assert at.selectbox(key="tt_sort").value == "class" and at.toggle(key="tt_desc").value is False
    # a change goes back into the address; a value from the address that names nothing is
    # dropped, not raised on
    at.text_input(key="tt_query").set_value("").run()
    assert "q" not in at.query_params and at.query_params["m"] == "model-b"
    at2 = app_on(monkeypatch, logcount, m="no-such-model", min="-5")
    at2 = on_page(at2, "pages/trajectories.py")
    assert at2.multiselect(key="tt_models").value == []
    assert at2.number_input(key="tt_min_steps").value == 7  # clamped to the shortest walk


def _shown(at) -> tuple[int, int]:
    """(shown, total) from the Trajectories page's count line."""
    (line,) = [c.value for c in at.caption if " trajectories · click a row" in c.value]
    shown, total = re.match(r"([\d,]+) of ([\d,]+) trajectories", line).groups()
    return int(shown.replace(",", "")), int(total.replace(",", ""))


def test_filters_start_afresh_on_another_data_source(monkeypatch, logcount):
    """A step range set on one source was kept, clamped into the next source's range:
    2-3 steps on one file became 7-7 on the bundled sample, hiding all but 11 of 4,430."""
    at = on_page(app_on(monkeypatch, logcount), "pages/trajectories.py")
    assert _shown(at) == (5, 5)
    at.number_input(key="tt_max_steps").set_value(8).run()
    assert _shown(at) == (1, 5)  # the wrong walk, 7 steps
    at.radio(key="data_source").set_value("Bundled sample data").run()
    shown, total = _shown(at)
    assert shown == total > 5
    assert at.query_params.get("max") is None
    at.radio(key="data_source").set_value(at.radio(key="data_source").options[0]).run()
    assert _shown(at) == (5, 5)
    assert (at.number_input(key="tt_min_steps").value, at.number_input(key="tt_max_steps").value) \
        == (7, 10)  # the walks' 7, 9 and 10 steps  # fmt: skip
