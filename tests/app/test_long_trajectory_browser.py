"""Long real chains of thought in the trajectory view, in headless Chromium at 1600x1000.

The chains are the Thought Anchors files in ``../shared/data/thought-anchors`` (DeepSeek-R1
distill, 60–251 chunks; skipped when absent, failing when ``DAGMATH_REQUIRE_SHARED=1``), drawn
by ``tests/app/fixtures/render_app.py --case file``. Screenshots of the initial view land in
``artifacts/screenshots/`` (gitignored) to be looked at.
"""

from __future__ import annotations

import json
import os

import pytest

from tests import thought_anchors
from tests.app.browser import dag_frame, save_screenshot, wait_for_app

pytestmark = pytest.mark.browser

FIXTURE = "tests/app/fixtures/render_app.py"
WINDOW = {"width": 1600, "height": 1000}


def _longest() -> tuple[str, list[dict]]:
    root = thought_anchors.ROOT
    if not root.resolve().is_dir():
        reason = f"shared data not found at {root.resolve()}"
        if os.environ.get("DAGMATH_REQUIRE_SHARED") == "1":
            pytest.fail(f"{reason} and DAGMATH_REQUIRE_SHARED=1", pytrace=False)
        pytest.skip(reason)
    files = thought_anchors.files()
    path = max(files, key=lambda f: len(json.loads(f.read_text())))
    return str(path), json.loads(path.read_text())


@pytest.fixture(scope="module")
def longest():
    return _longest()


@pytest.fixture
def wide_page(chromium_browser, page_events):
    context = chromium_browser.new_context(viewport=WINDOW)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page_events.attach(page)
    try:
        yield page
    finally:
        context.close()


def _open(page, streamlit_server, path: str, *extra: str):
    page.goto(streamlit_server(FIXTURE, "--case", "file", "--path", path, *extra))
    wait_for_app(page)
    return dag_frame(page)


def _dead_ends(chunks: list[dict]) -> list[int]:
    """Node ids (0-based positions) of chunks no later chunk depends on, final one excepted."""
    used = {int(p) for c in chunks for p in c["depends_on"]}
    return [i for i in range(len(chunks) - 1) if i not in used]


def _rect(frame, selector: str) -> dict:
    return frame.evaluate(
        "(s) => { const r = document.querySelector(s).getBoundingClientRect();"
        " return {top: r.top, bottom: r.bottom, left: r.left, right: r.right,"
        " height: r.height, width: r.width}; }",
        selector,
    )


def test_initial_view_of_a_251_step_chain_is_legible(wide_page, page_events, streamlit_server,
                                                      longest):  # fmt: skip
    path, chunks = longest
    assert len(chunks) == 251
    frame = _open(wide_page, streamlit_server, path)
    root = frame.locator("#dm-root")
    assert root.get_attribute("data-nodes") == "251"
    assert root.get_attribute("data-layout") == "reading"
    assert frame.evaluate("() => nodes.get().length") == 251

    # Labels: at least 10 CSS px on screen, for every node in view.
    heights = frame.evaluate(
        """() => { const pane = document.getElementById('dm-graph').getBoundingClientRect();
            return [...document.querySelectorAll('#dm-graph .dm-node text tspan:first-child')]
              .map(t => t.getBoundingClientRect())
              .filter(r => r.top >= pane.top && r.bottom <= pane.bottom).map(r => r.height); }"""
    )
    assert len(heights) >= 20, heights  # a screenful of steps, not a hairline
    assert min(heights) >= 10

    # Every dead end is told apart without zooming: one button each, and one orange mark
    # each in the overview strip, no two marks overlapping.
    dead = _dead_ends(chunks)
    assert len(dead) >= 5
    chips = frame.evaluate("() => [...document.querySelectorAll('#dm-dead .dm-chip')]"
                           ".map(c => c.textContent)")  # fmt: skip
    assert chips == [f"S{i + 1}" for i in dead]
    marks = frame.evaluate(
        """() => [...document.querySelectorAll('#dm-overview .dm-mark')]
            .filter(m => m.style.background.includes('242, 142, 43'))
            .map(m => { const r = m.getBoundingClientRect();
                        return [Number(m.dataset.id), r.top, r.bottom]; })"""
    )
    assert sorted(m[0] for m in marks) == dead
    tops = sorted((top, bottom) for _, top, bottom in marks)
    assert all(b[0] >= a[1] for a, b in zip(tops, tops[1:], strict=False)), tops
    strip = _rect(frame, "#dm-overview")
    assert all(strip["top"] <= t and b <= strip["bottom"] for t, b in tops)
    save_screenshot(wide_page, "long_chain_initial", full_page=False)
    page_events.assert_clean()


def test_graph_and_text_are_linked_both_ways(wide_page, page_events, streamlit_server, longest):
    path, chunks = longest
    frame = _open(wide_page, streamlit_server, path)
    # Click node S200 (scroll the graph to it first, as a reader would).
    frame.evaluate("() => { const g = dagmath.nodeElement(199);"
                   " document.getElementById('dm-graph').scrollTop ="
                   " g.getBBox().y * dagmath.state.scale - 200; }")  # fmt: skip
    frame.locator('#dm-graph .dm-node[data-id="199"]').click()
    step = frame.locator('.dm-step[data-id="199"]')
    assert "sel" in step.get_attribute("class")
    box, pane = _rect(frame, '.dm-step[data-id="199"]'), _rect(frame, "#dm-steps")
    assert pane["top"] <= box["top"] and box["top"] + 20 <= pane["bottom"]  # in view
    assert frame.evaluate("() => document.getElementById('dm-root').dataset.selected") == "199"

    # Click step S40 in the list: its node is selected and centred in the graph pane.
    frame.evaluate(
        "() => { const s = dagmath.stepElement(39); const l ="
        " document.getElementById('dm-steps'); l.scrollTop = s.offsetTop - 50; }"
    )
    frame.locator('.dm-step[data-id="39"] .dm-text').click()
    node = frame.locator('#dm-graph .dm-node[data-id="39"]')
    assert "sel" in node.get_attribute("class")
    r, g = _rect(frame, '#dm-graph .dm-node[data-id="39"] rect'), _rect(frame, "#dm-graph")
    centre = r["top"] + r["height"] / 2
    assert abs(centre - (g["top"] + g["bottom"]) / 2) < 30
    save_screenshot(wide_page, "long_chain_linked", full_page=False)
    page_events.assert_clean()


def test_step_deep_link_selects_and_shows_both_on_arrival(wide_page, page_events,
                                                           streamlit_server, longest):  # fmt: skip
    path, _ = longest
    frame = _open(wide_page, streamlit_server, path, "--step", "180")
    assert frame.evaluate("() => document.getElementById('dm-root').dataset.selected") == "179"
    r, g = _rect(frame, '#dm-graph .dm-node[data-id="179"] rect'), _rect(frame, "#dm-graph")
    assert abs(r["top"] + r["height"] / 2 - (g["top"] + g["bottom"]) / 2) < 30  # centred
    step, pane = _rect(frame, '.dm-step[data-id="179"]'), _rect(frame, "#dm-steps")
    assert pane["top"] <= step["top"] < pane["bottom"] - 20
    page_events.assert_clean()


def test_controls_zoom_fit_path_prune_focus(wide_page, page_events, streamlit_server, longest):
    path, chunks = longest
    frame = _open(wide_page, streamlit_server, path)

    def scale() -> float:
        return float(frame.locator("#dm-root").get_attribute("data-scale"))

    start = scale()
    frame.locator("button[data-act=zoom-in]").click()
    assert scale() == pytest.approx(start * 1.25, rel=1e-3)
    frame.locator("button[data-act=zoom-out]").click()
    frame.locator("button[data-act=zoom-out]").click()
    assert scale() == pytest.approx(start / 1.25, rel=1e-3)
    frame.locator("button[data-act=fit]").click()
    svg, pane = _rect(frame, "#dm-graph svg"), _rect(frame, "#dm-graph")
    assert svg["height"] <= pane["height"] + 1 and svg["width"] <= pane["width"] + 1
    frame.locator("button[data-act=actual]").click()
    assert scale() == 1

    # The answer path, by hand from depends_on: the final chunk and everything it needs.
    parents = {i: [int(p) for p in c["depends_on"]] for i, c in enumerate(chunks)}
    need, stack = {len(chunks) - 1}, [len(chunks) - 1]
    while stack:
        for p in parents[stack.pop()]:
            if p not in need:
                need.add(p)
                stack.append(p)
    frame.get_by_label("Path to the answer").check()
    dim = frame.evaluate("() => [...document.querySelectorAll('#dm-graph .dm-node.dm-dim')]"
                         ".map(g => Number(g.dataset.id))")  # fmt: skip
    assert sorted(dim) == sorted(set(range(len(chunks))) - need)
    frame.get_by_label("Path to the answer").uncheck()
    frame.get_by_label("Hide dead-end branches").check()
    assert frame.locator("#dm-root").get_attribute("data-drawn") == str(len(need))
    frame.get_by_label("Hide dead-end branches").uncheck()
    assert frame.locator("#dm-root").get_attribute("data-drawn") == str(len(chunks))

    # Focus: select S10; its ancestors and descendants stay lit, the rest is dimmed.
    frame.get_by_label("Focus on selected").check()
    frame.evaluate("() => dagmath.select(9, {})")
    children: dict[int, list[int]] = {}
    for child, ps in parents.items():
        for p in ps:
            children.setdefault(p, []).append(child)

    def reach(start: int, nxt) -> set[int]:
        seen, todo = set(), [start]
        while todo:
            for v in nxt(todo.pop()):
                if v not in seen:
                    seen.add(v)
                    todo.append(v)
        return seen

    lit = reach(9, lambda v: parents[v]) | reach(9, lambda v: children.get(v, [])) | {9}
    dim = frame.evaluate("() => [...document.querySelectorAll('#dm-graph .dm-node.dm-dim')]"
                         ".map(g => Number(g.dataset.id))")  # fmt: skip
    assert sorted(dim) == sorted(set(range(len(chunks))) - lit)
    page_events.assert_clean()


def test_drawn_positions_are_the_computed_layout(wide_page, page_events, streamlit_server,
                                                 longest):  # fmt: skip
    path, _ = longest
    frame = _open(wide_page, streamlit_server, path)
    boxes = frame.evaluate("() => dagmath.layout().boxes")
    s = float(frame.locator("#dm-root").get_attribute("data-scale"))
    drawn = frame.evaluate(
        """() => [0, 1, 5, 20].map(i => { const r = dagmath.nodeElement(i)
                  .querySelector('rect').getBoundingClientRect(); return [r.left, r.top]; })"""
    )
    for (x, y), i in zip(drawn, [0, 1, 5, 20], strict=True):
        assert x - drawn[0][0] == pytest.approx((boxes[i][0] - boxes[0][0]) * s, abs=0.6)
        assert y - drawn[0][1] == pytest.approx((boxes[i][1] - boxes[0][1]) * s, abs=0.6)
    page_events.assert_clean()


@pytest.fixture(scope="module")
def formula_flood(tmp_path_factory):
    """Issue 16 item 9: one 2 MB trajectory with 240,000 small formulas (120 steps of 2,000
    ``$x_{k}$``), in the official layout."""
    folder = tmp_path_factory.mktemp("flood") / "model" / "flood"
    folder.mkdir(parents=True)
    body = " ".join(f"$x_{{{k}}}$" for k in range(2000))
    steps = [
        {"step_id": i, "direct_dependent_steps": [i - 1] if i > 1 else None, "text": body,
         "thinking": body[:2000]}
        for i in range(1, 121)
    ]  # fmt: skip
    steps[-1]["text"] += r" The final answer is $\boxed{1}$."
    sample = {"problem_id": 1, "sample_id": 0, "steps": steps, "answer": "1"}
    path = folder / "problem_1_all_samples.json"
    path.write_text(json.dumps([sample]))
    assert path.stat().st_size > 2_000_000
    return folder.parent.parent


def test_a_formula_flood_does_not_freeze_the_page(wide_page, page_events, streamlit_server,
                                                   formula_flood):  # fmt: skip
    url = streamlit_server("app.py", "--data", str(formula_flood))
    wide_page.goto(f"{url}/trajectory?model=model&dataset=flood&problem=1&sample=0")
    wait_for_app(wide_page)  # 30 s at most, else this fails
    frame = dag_frame(wide_page)
    assert frame.locator("#dm-root").get_attribute("data-nodes") == "120"
    # The step list in the view shows text as written: no formula is typeset there.
    assert frame.evaluate("() => document.querySelectorAll('.katex').length") == 0
    wide_page.get_by_text("Typeset the steps' math").click()
    wait_for_app(wide_page)
    warning = wide_page.get_by_text("Formula budget")
    warning.wait_for()
    assert "more than 300 formulas" in warning.inner_text()
    assert wide_page.locator(".katex").count() <= 300
    save_screenshot(wide_page, "formula_flood", full_page=False)
    page_events.console_errors = [
        e for e in page_events.console_errors if "404" not in e or "_stcore" not in e
    ]
    page_events.assert_clean()


def test_a_300_step_chain_is_legible_at_its_initial_view(wide_page, page_events,
                                                          streamlit_server):  # fmt: skip
    frame = dag_frame(_goto(wide_page, streamlit_server(FIXTURE, "--case", "chain300")))
    assert frame.locator("#dm-root").get_attribute("data-nodes") == "300"
    heights = frame.evaluate(
        """() => { const pane = document.getElementById('dm-graph').getBoundingClientRect();
            return [...document.querySelectorAll('#dm-graph .dm-node text tspan:first-child')]
              .map(t => t.getBoundingClientRect())
              .filter(r => r.top >= pane.top && r.bottom <= pane.bottom).map(r => r.height); }"""
    )
    assert len(heights) >= 20 and min(heights) >= 10
    # The 19 dead ends (steps 15, 30, ..., 285: positions 14, 29, ...), by hand.
    dead = list(range(14, 285, 15))
    chips = frame.evaluate("() => [...document.querySelectorAll('#dm-dead .dm-chip')]"
                           ".map(c => Number(c.textContent.slice(1)) - 1)")  # fmt: skip
    assert chips == dead
    marks = frame.evaluate(
        """() => [...document.querySelectorAll('#dm-overview .dm-mark')]
            .filter(m => m.style.background.includes('242, 142, 43'))
            .map(m => { const r = m.getBoundingClientRect(); return [r.top, r.bottom]; })"""
    )
    marks.sort()
    assert len(marks) == 19
    assert all(b[0] > a[1] for a, b in zip(marks, marks[1:], strict=False))  # gaps between
    save_screenshot(wide_page, "chain300_initial", full_page=False)
    page_events.assert_clean()


def _goto(page, url: str):
    page.goto(url)
    wait_for_app(page)
    return page


def test_app_step_link_selects_the_dead_end_on_arrival(wide_page, page_events, app_url):
    # Bundled data: sim-focus-2.4 / arith-word / 109 / sample 10, step 13 (position 12) is a
    # dead end (its record's dead_ends are [13], 14 steps; read from the rebuilt data).
    query = "model=sim-focus-2.4&dataset=arith-word&problem=109&sample=10&step=13"
    frame = dag_frame(_goto(wide_page, f"{app_url}/trajectory?{query}"))
    assert frame.evaluate("() => dagmath.data.nodes[12].kind") == "dead_end"
    assert frame.locator("#dm-root").get_attribute("data-selected") == "12"
    assert "sel" in frame.locator('#dm-graph .dm-node[data-id="12"]').get_attribute("class")
    assert "sel" in frame.locator('.dm-step[data-id="12"]').get_attribute("class")
    step, pane = _rect(frame, '.dm-step[data-id="12"]'), _rect(frame, "#dm-steps")
    assert pane["top"] <= step["top"] < pane["bottom"] - 20
    # ... and the view itself is brought into the window, the node on screen.
    wide_page.wait_for_timeout(300)
    box = wide_page.locator('iframe[data-testid="stIFrame"]').bounding_box()
    node = _rect(frame, '#dm-graph .dm-node[data-id="12"] rect')
    assert 0 <= box["y"] + node["top"] and box["y"] + node["bottom"] <= WINDOW["height"]
    save_screenshot(wide_page, "app_step_link", full_page=False)
    page_events.console_errors = [
        e for e in page_events.console_errors if "404" not in e or "_stcore" not in e
    ]
    page_events.assert_clean()
