"""No request leaves 127.0.0.1 from any page, whatever the models, datasets and steps say.

Plotly renders a subset of HTML in names (``<span style>`` included), so a CSS ``url(…)``
in a model name used to be fetched from the browser (issue 16, item 1). Here every name,
problem text, step text and thinking carries a beacon on 127.0.0.2, and every request
Chromium makes on every page, after charts are drawn and hovered, is recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.app.browser import REPO_ROOT, save_screenshot, wait_for_app

pytestmark = pytest.mark.browser

PAGES = ["", "trajectories", "trajectory", "compare", "distributions", "dead_ends", "efficiency"]
BEACON_HOST = "127.0.0.2"


def _beacon(tag: str) -> str:
    return f'm<span style="background:url(http://{BEACON_HOST}:9/{tag}.png)">x</span>'


def _img(tag: str) -> str:
    return f'<img src="http://{BEACON_HOST}:9/{tag}.png"> ![i](http://{BEACON_HOST}:9/{tag}-md.png)'


@pytest.fixture(scope="module")
def beacon_run(tmp_path_factory) -> Path:
    """Two models with beacon names, each with two trajectories of one problem.

    Steps: 1 and 2 givens, 3 <- 1, 4 <- 1 (a dead end), 5 <- 2, 3 (final, answer 7).
    """
    root = tmp_path_factory.mktemp("beacon")
    parents = [None, None, [1], [1], [2, 3]]
    for m in range(2):
        model = _beacon(f"model{m}")
        folder = root / f"model{m}" / "data"
        folder.mkdir(parents=True)
        samples = []
        for s in range(2):
            steps = [
                {"step_id": i + 1, "direct_dependent_steps": p,
                 "thinking": _img(f"think{m}{s}{i}") + _beacon(f"thinkspan{m}{s}{i}"),
                 "text": _img(f"text{m}{s}{i}") + _beacon(f"textspan{m}{s}{i}")}
                for i, p in enumerate(parents)
            ]  # fmt: skip
            steps[-1]["text"] += r" The final answer is $\boxed{7}$."
            samples.append(
                {
                    "problem_id": 1, "sample_id": s, "problem_text": _img("problem"),
                    "steps": steps, "metadata": {"model": model},
                    "dataset": _beacon("dataset"), "answer": "7" if s == 0 else "8",
                }
            )  # fmt: skip
        (folder / "problem_1_all_samples.json").write_text(json.dumps(samples))
    return root


def test_no_page_requests_anything_outside_localhost(
    app_page, page_events, beacon_run, streamlit_server
):
    url = streamlit_server(REPO_ROOT / "app.py", "--data", str(beacon_run))
    for name in PAGES:
        app_page.goto(f"{url}/{name}")
        wait_for_app(app_page)
        # open the charts a page folds (the Overview's below its first screen), one by one
        for _ in range(app_page.locator("[data-testid=stExpander] summary").count()):
            folded = app_page.locator("[data-testid=stExpander] summary", has_text="Chart:")
            closed = [s for s in folded.all() if not s.evaluate("e => e.closest('details').open")]
            if not closed:
                break
            closed[0].click()
            wait_for_app(app_page)
        app_page.wait_for_timeout(1500)  # charts draw after the script finishes
        # hover every chart so that hover labels (which render markup too) are drawn
        for chart in app_page.locator(".js-plotly-plot .nsewdrag").all():
            box = chart.bounding_box()
            if box:
                for fx in (0.1, 0.3, 0.5, 0.7, 0.9):
                    app_page.mouse.move(box["x"] + box["width"] * fx, box["y"] + box["height"] / 2)
                    app_page.wait_for_timeout(50)
        assert app_page.locator("[data-testid=stException]").count() == 0, name
        save_screenshot(app_page, f"beacon_{name or 'overview'}")
    beacons = [u for u in page_events.requests if BEACON_HOST in u]
    assert not beacons, f"requests to the beacon host: {beacons}"
    assert not page_events.non_local_requests(), page_events.non_local_requests()
    assert page_events.requests, "no request was recorded at all: the listener is not working"
