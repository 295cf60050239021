"""The pyvis view and the step-field encodings, drawn by headless Chromium.

The standalone pages (``render_vis_html``, ``render_trajectory_html``) are opened with
``page.set_content`` (no server), then the Trajectory page of the app is driven through its
View control. Screenshots land in ``artifacts/screenshots/vis_*.png`` (gitignored), to be
looked at. Real chains come from ``../shared/data/thought-anchors`` (skipped when absent,
failing when ``DAGMATH_REQUIRE_SHARED=1``).
"""

from __future__ import annotations

import json
import re

import pytest

from dagmath_viz.draw.render import render_trajectory_html
from dagmath_viz.draw.vis_view import BOX_RADIUS, VIS_LONG, render_vis_html, vis_geometry
from dagmath_viz.formats.discovery import load_paths
from dagmath_viz.schema import Trajectory
from tests import thought_anchors
from tests.app.browser import dag_frame, save_screenshot, server_script, wait_for_app
from tests.test_layout import _require_shared

pytestmark = pytest.mark.browser

MODEL = "deepseek-r1-distill-qwen-14b"

# What vis-network drew, read back from it: every node's position (getPositions, whole px)
# and every box node's drawn size (its bounding box, which vis-network grows by the corner
# radius), after its first drawing.
DRAWN = """(radius) => new Promise((done) => {
  const read = () => {
    const pos = network.getPositions();
    const size = {};
    for (const id of nodes.getIds()) {
      if (typeof id !== 'number') continue;
      const b = network.getBoundingBox(id);
      size[id] = [b.right - b.left - 2 * radius, b.bottom - b.top - 2 * radius];
    }
    done({pos: pos, size: size});
  };
  network.once('afterDrawing', () => setTimeout(read, 0));
  network.redraw();
})"""


# A node's centre on screen, from vis-network's own canvas-to-page transform.
CENTRE = """(id) => { const d = network.canvasToDOM(network.getPositions([id])[id]);
  const r = document.getElementById('mynetwork').getBoundingClientRect();
  return [d.x + r.left, d.y + r.top]; }"""


def _loaded() -> list[Trajectory]:
    """The shared chains as the app loads them (fields, tags and summaries kept)."""
    _require_shared(thought_anchors.ROOT)
    return list(load_paths([thought_anchors.ROOT]).trajectories)


def _open(browser, page_events, html: str, size=(1280, 800), ready="body[data-ready='1']"):
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page_events.attach(page)
    page.set_content(html)
    page.wait_for_selector(ready)
    return context, page


def _handed(html: str) -> dict:
    """The node positions the page hands to vis-network, read from its DataSet."""
    nodes = json.loads(re.search(r"nodes = new vis\.DataSet\((\[.*?\])\);", html, re.S)[1])
    return {str(n["id"]): (n["x"], n["y"]) for n in nodes}


def test_vis_network_draws_every_node_where_it_was_told(chromium_browser, page_events):
    chains = [t for t in _loaded() if len(t.steps) <= VIS_LONG]
    assert len(chains) == 12
    for traj in chains:
        html = render_vis_html(traj, height_px=700)
        geometry = vis_geometry(traj)
        context, page = _open(chromium_browser, page_events, html)
        try:
            drawn = page.evaluate(DRAWN, BOX_RADIUS)
            handed = _handed(html)
            assert len(drawn["pos"]) == len(handed)  # steps and way-points, none dropped
            for nid, (x, y) in handed.items():
                assert (drawn["pos"][nid]["x"], drawn["pos"][nid]["y"]) == (x, y), nid
            for i, box in enumerate(geometry.layout.boxes):
                assert drawn["size"][str(i)] == pytest.approx([box.w, box.h], abs=0.01), i
            # the geometry test's boxes are the ones drawn: centres match too
            assert all(handed[str(i)] == (b.cx, b.cy) for i, b in enumerate(geometry.layout.boxes))
        finally:
            context.close()
    page_events.assert_clean()


def test_clicking_a_node_selects_its_step_and_a_step_its_node(chromium_browser, page_events):
    traj = min((t for t in _loaded() if len(t.steps) <= VIS_LONG), key=lambda t: len(t.steps))
    fields = dict(traj.steps[0].fields)
    assert "counterfactual_importance_kl" in fields and traj.steps[0].tags
    html = render_vis_html(traj, height_px=760, bar_field="counterfactual_importance_kl",
                           color_by="tag")  # fmt: skip
    context, page = _open(chromium_browser, page_events, html)
    try:
        page.evaluate(DRAWN, BOX_RADIUS)
        # S3 (position 3): its centre on screen, from vis-network's own transform.
        point = page.evaluate(CENTRE, 3)
        page.mouse.click(*point)
        assert page.evaluate("() => document.body.dataset.selected") == "3"
        assert "sel" in page.locator('.dm-step[data-id="3"]').get_attribute("class")
        assert page.evaluate("() => network.getSelectedNodes()") == [3]
        # and back: a step in the list selects its node
        page.locator('.dm-step[data-id="1"]').click()
        assert page.evaluate("() => network.getSelectedNodes()") == [1]
        assert page.locator(".dm-step.k-dead_end").count() == sum(
            1 for n in json.loads(page.evaluate(
                "() => JSON.stringify(window.dagmath.data.nodes.map(n => n.kind))"))
            if n == "dead_end"
        )  # fmt: skip
        # math in the list is typeset: the first step written with \( \), read from the data
        pos = next(i for i, s in enumerate(traj.steps) if "\\(" in s.text)
        page.locator(f'.dm-step[data-id="{pos}"]').scroll_into_view_if_needed()
        box = page.locator(f'.dm-step[data-id="{pos}"] .dm-text')
        page.wait_for_function(
            f"() => document.querySelector('.dm-step[data-id=\"{pos}\"] .dm-text')"
            ".dataset.typeset === '1'"
        )
        assert box.locator("math").count() >= 1 and "\\(" not in box.inner_text()
        save_screenshot(page, "vis_view_fields_1280x800", full_page=False)
        page_events.assert_clean()
    finally:
        context.close()


def test_the_step_graph_draws_the_bar_and_stripe_inside_the_boxes(chromium_browser, page_events):
    traj = max(_loaded(), key=lambda t: len(t.steps))  # a long chain: reading order
    field = "counterfactual_importance_kl"
    values = [dict(s.fields).get(field) for s in traj.steps]
    largest = max(abs(v) for v in values if isinstance(v, float))
    html = render_trajectory_html(traj, height_px=780, bar_field=field, color_by="tag",
                                  label_by="summary")  # fmt: skip
    context, page = _open(chromium_browser, page_events, html, ready='#dm-root[data-ready="1"]')
    try:
        assert page.locator("#dm-root").get_attribute("data-layout") == "reading"
        bars = page.evaluate("""() => [...document.querySelectorAll('.dm-node')].map((g) => {
            const r = g.querySelector('rect'), b = g.querySelector('.dm-fieldbar');
            return [Number(g.dataset.id), Number(r.getAttribute('x')),
                    Number(r.getAttribute('width')),
                    b ? Number(b.getAttribute('x')) : null,
                    b ? Number(b.getAttribute('width')) : null]; })""")
        assert len(bars) == len(traj.steps)
        for node, x, w, bx, bw in bars:
            v = values[node]
            if not v:
                assert bw is None
                continue
            # inside the box, and as long as |value| / largest of the box's inner width
            assert x < bx and bx + bw <= x + w
            assert bw == pytest.approx(max((w - 4) * abs(v) / largest, 1.5), abs=0.01)
        # the row text is the source's own summary of the step
        first = page.locator('.dm-node[data-id="0"] .dm-snip').text_content()
        assert first and first.rstrip("…") in dict(traj.steps[0].fields)["summary"]
        assert page.locator(".dm-stripe").count() == sum(1 for s in traj.steps if s.tags)
        save_screenshot(page, "vis_step_graph_fields_1280x800", full_page=False)
        page_events.assert_clean()
    finally:
        context.close()


def test_the_trajectory_page_switches_to_the_pyvis_drawing(
    chromium_browser, page_events, streamlit_server
):
    _require_shared(thought_anchors.ROOT)
    url = streamlit_server(server_script(), "--data", str(thought_anchors.ROOT.resolve()))
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page_events.attach(page)
    try:
        # problem 2238 has two chains (60 and 104 steps), both under VIS_LONG
        page.goto(f"{url}/trajectory?model={MODEL}&dataset=thought-anchors&problem=2238")
        wait_for_app(page)
        page.get_by_role("button", name="View").click()
        page.get_by_text("Layers through pyvis (vis-network)").click()
        wait_for_app(page)
        frame = dag_frame(page)
        frame.wait_for_function("() => document.body.dataset.view === 'vis'")
        n = int(frame.locator("body").get_attribute("data-nodes"))
        assert n in (60, 104)
        assert frame.evaluate("() => nodes.get().filter(n => typeof n.id === 'number').length") == n
        assert frame.evaluate("() => nodes.get().filter(n => n.dead_end).length") > 0
        page.keyboard.press("Escape")
        page.wait_for_timeout(500)
        save_screenshot(page, "vis_trajectory_page_1280x800", full_page=False)
        page_events.console_errors = [e for e in page_events.console_errors if "404" not in e]
        page_events.assert_clean()
    finally:
        context.close()


HOSTILE = (
    "</script><script>window.__pwned=1</script><img src=x onerror=window.__pwned=2> "
    "<a href=javascript:window.__pwned=3>x</a> $5 \\(x^2\\)"
)


def test_hostile_text_is_shown_as_text_and_never_runs(chromium_browser, page_events):
    from dagmath_viz.schema import Step

    steps = (Step(1, (), HOSTILE, "why " + HOSTILE, tags=(HOSTILE,),
                  fields=(("summary", HOSTILE), (HOSTILE, 1.0))),
             Step(2, (1,), "ok"), Step(3, (1, 2), "so"))  # fmt: skip
    traj = Trajectory("m", "d", "1", 0, steps)
    html = render_vis_html(traj, bar_field=HOSTILE[:40], color_by="tag")
    context, page = _open(chromium_browser, page_events, html)
    try:
        page.evaluate(DRAWN, BOX_RADIUS)
        point = page.evaluate(CENTRE, 0)
        page.mouse.move(*point)
        page.wait_for_selector("div.vis-tooltip", state="visible")
        tip = page.locator("div.vis-tooltip").inner_text()
        assert "<script>window.__pwned=1</script>" in tip  # shown, as text
        page.mouse.click(*point)
        assert page.evaluate("() => window.__pwned") is None
        assert page.locator("img, a").count() == 0  # no markup from the text became elements
        text = page.locator('.dm-step[data-id="0"] .dm-text').inner_text()
        assert "onerror=window.__pwned=2" in text
        page_events.assert_clean()
    finally:
        context.close()
