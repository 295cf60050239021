"""Issue 11's "Done when", walked in the real browser on ``../shared/data/thought-anchors``,
from the folder and from its scored JSONL: find the longest incorrect trajectory from the
Trajectories table, read its dead ends in the graph and the text (chips, no mouse wheel),
and follow a dead end from the Dead ends page to its node. Screenshots land in
``artifacts/screenshots/walk_<source>_*.png``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.app.browser import REPO_ROOT, dag_frame, save_screenshot, server_script, wait_for_app

pytestmark = pytest.mark.browser

TA = (REPO_ROOT / ".." / "shared" / "data" / "thought-anchors").resolve()


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, Path]:
    if not TA.exists():
        reason = f"{TA} not found"
        if os.environ.get("DAGMATH_REQUIRE_SHARED") == "1":
            pytest.fail(f"{reason} and DAGMATH_REQUIRE_SHARED=1", pytrace=False)
        pytest.skip(f"{reason} (set DAGMATH_REQUIRE_SHARED=1 to make this a failure)")
    scored = tmp_path_factory.mktemp("walk") / "ta.jsonl"
    subprocess.run(
        [sys.executable, "-m", "dagmath_viz", "score", str(TA), "-o", str(scored)],
        check=True, cwd=REPO_ROOT, capture_output=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
    )  # fmt: skip
    return {"folder": TA, "scored": scored}


def _longest_incorrect(scored: Path) -> dict:
    records = [json.loads(line) for line in scored.read_text().splitlines() if line.strip()]
    wrong = [r for r in records if r["final_correct"] is False]
    return max(wrong, key=lambda r: r["n_nodes"])


def _click_first_row(page, grid) -> None:
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 18, box["y"] + 35 + 17)


def _selected(frame) -> str:
    return frame.evaluate("() => document.getElementById('dm-root').dataset.selected")


@pytest.mark.parametrize("kind", ["folder", "scored"])
def test_done_when_walkthrough(kind, sources, streamlit_server, chromium_browser, page_events):
    # serve.py, as `dagmath app` runs it: the data is loaded before the first visit
    # the scored file sits in a temporary folder, apart from the chains it scored
    where = ["--sources", str(TA)] if kind == "scored" else []
    url = streamlit_server(server_script(), "--data", str(sources[kind]), *where)
    target = _longest_incorrect(sources["scored"])
    context = chromium_browser.new_context(viewport={"width": 1600, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page_events.attach(page)
    try:
        # (a) The table, wrong answers only, sorted by steps (its default): the first row.
        page.goto(f"{url}/trajectories")
        wait_for_app(page)
        page.locator("[data-testid=stMultiSelect]").filter(has_text="Final answer").click()
        page.get_by_role("option", name="wrong").click()
        page.keyboard.press("Escape")
        wait_for_app(page)
        page.wait_for_timeout(500)
        save_screenshot(page, f"walk_{kind}_table", full_page=False)
        _click_first_row(page, page.locator("[data-testid=stDataFrame]").first)
        page.wait_for_function("() => location.pathname.endsWith('/trajectory')")
        wait_for_app(page)
        params = parse_qs(urlsplit(page.url).query)
        assert params["problem"] == [str(target["problem_id"])]
        frame = dag_frame(page)
        assert int(frame.locator("#dm-root").get_attribute("data-nodes")) == target["n_nodes"]

        # (b) Its dead ends: one chip each; a chip selects the node and shows its step.
        chips = frame.locator("#dm-dead .dm-chip")
        assert chips.count() == len(target["dead_ends"])
        dead = target["dead_ends"][len(target["dead_ends"]) // 2]
        chips.nth(len(target["dead_ends"]) // 2).click()
        assert _selected(frame) == str(dead)
        step = frame.locator(f'.dm-step[data-id="{dead}"]')
        assert "sel" in step.get_attribute("class")
        box = step.bounding_box()
        pane = frame.locator("#dm-steps").bounding_box()
        assert pane["y"] <= box["y"] and box["y"] + 20 <= pane["y"] + pane["height"]
        node = frame.locator(  # the box, not the importance bar or tag stripe drawn on it
            f'#dm-graph .dm-node[data-id="{dead}"] rect:not(.dm-fieldbar):not(.dm-stripe)'
        ).bounding_box()
        graph = frame.locator("#dm-graph").bounding_box()
        assert graph["y"] <= node["y"] <= graph["y"] + graph["height"]  # centred in view
        label_px = frame.evaluate(
            "() => parseFloat(getComputedStyle(document.querySelector('#dm-graph .dm-node text'))"
            ".fontSize) * dagmath.state.scale"
        )
        assert label_px >= 10
        page.locator("iframe").first.scroll_into_view_if_needed()
        save_screenshot(page, f"walk_{kind}_trajectory", full_page=False)

        # (c) The Dead ends page: its first row opens that trajectory at that step.
        page.goto(f"{url}/dead_ends")
        wait_for_app(page)
        save_screenshot(page, f"walk_{kind}_dead_ends", full_page=False)
        # Which kinds of step end up unused: the breakdown by Thought Anchors' function_tags.
        tags = page.locator("[data-testid=stExpander]").filter(has_text="Dead ends by step tag")
        tags.locator("[data-testid=stPlotlyChart]").wait_for()
        tags.locator("[data-testid=stDataFrame]").scroll_into_view_if_needed()
        save_screenshot(page, f"walk_{kind}_dead_end_tags", full_page=False)
        _click_first_row(page, page.locator("[data-testid=stDataFrame]").last)
        page.wait_for_function("() => location.pathname.endsWith('/trajectory')")
        wait_for_app(page)
        wanted = parse_qs(urlsplit(page.url).query)["step"][0]
        frame = dag_frame(page)
        frame.wait_for_function(
            f"() => document.getElementById('dm-root').dataset.selected === '{wanted}'"
        )
        page.locator("iframe").first.scroll_into_view_if_needed()
        save_screenshot(page, f"walk_{kind}_dead_end_opened", full_page=False)
        # Streamlit probes /<page>/_stcore/... before /_stcore/...; those 404s are its own.
        page_events.console_errors[:] = [
            e for e in page_events.console_errors if "404" not in e or "_stcore" not in e
        ]
        page_events.assert_clean()
    finally:
        context.close()
