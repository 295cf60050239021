"""End to end: render_dag_html inside st.iframe, in Debian's headless Chromium.

Uses tests/app/fixtures/render_app.py (see its docstring for the hand-worked graphs).
"""

from __future__ import annotations

import pytest

from tests.app.browser import (
    dag_frame,
    hover_node,
    node_points,
    save_screenshot,
    wait_for_app,
)

pytestmark = pytest.mark.browser

FIXTURE = "tests/app/fixtures/render_app.py"

KINDS_JS = """() => { const c = {};
    for (const n of nodes.get()) { c[n.kind] = (c[n.kind] || 0) + 1; }
    return c; }"""


def _open(app_page, streamlit_server, *args: str):
    app_page.goto(streamlit_server(FIXTURE, *args))
    wait_for_app(app_page)
    frame = dag_frame(app_page)
    app_page.locator("iframe[data-testid=stIFrame]").scroll_into_view_if_needed()
    return frame


def _pwned(page, frame) -> list:
    return [
        page.evaluate("() => window.__pwned"),
        frame.evaluate("() => window.__pwned"),
    ]


def test_hostile_trajectory_draws_safely(app_page, page_events, streamlit_server):
    frame = _open(app_page, streamlit_server, "--case", "hostile")

    # Hand-worked in the fixture's docstring: 7 steps + 1 placeholder, 1 dead end.
    assert frame.evaluate("() => nodes.get().length") == 8
    assert frame.evaluate("() => nodes.get().filter(n => n.kind === 'dead_end').length") == 1
    assert frame.evaluate(KINDS_JS) == {
        "given": 2,
        "step": 3,
        "dead_end": 1,
        "final_incorrect": 1,
        "missing": 1,
    }
    assert frame.evaluate("() => nodes.get().filter(n => n.fault).map(n => n.label)") == ["S6"]
    assert (
        frame.evaluate("() => edges.get().length") == 8
    )  # 7 well-formed + 1 dashed from "missing 42"

    # Layered top-down: every well-formed edge points down the page.
    points = node_points(app_page, frame)
    for e in frame.evaluate("() => edges.get().filter(e => !e.bad)"):
        assert points[e["to"]][1] > points[e["from"]][1] + 20, e

    # Hover every node: the tooltip shows the hostile text as text, nothing runs.
    labels = {n["id"]: n["label"] for n in frame.evaluate("() => nodes.get()")}
    for node_id, point in sorted(points.items()):
        label = labels[node_id]
        expect = f"Step {label[1:]}\n" if label.startswith("S") else "missing 42"
        assert hover_node(app_page, frame, point, expect).startswith(expect)
    first = hover_node(app_page, frame, points[0], "Step 1\n")
    assert "<img src=x onerror=window.top.__pwned=1" in first
    assert "<script>window.top.__pwned=1" in first
    assert "</script><script>" in hover_node(app_page, frame, points[1], "Step 2\n")
    assert "el.innerHTML = y" in hover_node(app_page, frame, points[4], "Step 5\n")

    assert _pwned(app_page, frame) == [None, None]
    assert frame.evaluate("() => document.querySelectorAll('img, iframe, a, object').length") == 0
    assert frame.evaluate("() => document.querySelectorAll('svg').length") == 1  # the graph
    assert frame.evaluate("() => document.getElementById('dagmath-legend').innerText").startswith(
        "Given"
    )
    page_events.assert_clean()
    app_page.mouse.move(5, 5)
    save_screenshot(app_page, "render_hostile")


def test_layered_graph_draws(app_page, page_events, streamlit_server):
    frame = _open(app_page, streamlit_server, "--case", "layers")
    # 60 steps: 10 givens, the last layer's 9 non-final steps are dead ends, 1 final.
    assert frame.evaluate(KINDS_JS) == {"given": 10, "step": 40, "dead_end": 9, "final_correct": 1}
    levels = frame.evaluate("() => Object.fromEntries(nodes.get().map(n => [n.id, n.level]))")
    points = node_points(app_page, frame)
    by_level: dict[int, set[float]] = {}
    for node_id, level in levels.items():
        by_level.setdefault(level, set()).add(round(points[int(node_id)][1]))
    assert sorted(by_level) == [0, 1, 2, 3, 4, 5]
    rows = [by_level[lv] for lv in sorted(by_level)]
    assert all(len(r) == 1 for r in rows), rows  # one row per level
    assert [next(iter(r)) for r in rows] == sorted(next(iter(r)) for r in rows)
    page_events.assert_clean()
    save_screenshot(app_page, "render_layers")
