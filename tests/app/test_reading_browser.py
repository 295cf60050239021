"""Reading real chains comfortably (issue 34 items 2, 3, 5, 6, 7), in headless Chromium.

The app serves ``../shared/data/thought-anchors`` (skipped when absent, failing when
``DAGMATH_REQUIRE_SHARED=1``). Screenshots of the Trajectory page at 1280x800 and 1920x1080
land in ``artifacts/screenshots/reading_*.png`` (gitignored), to be looked at.
"""

from __future__ import annotations

import json
import os
from urllib.parse import parse_qs, urlsplit

import pytest

from tests import thought_anchors
from tests.app.browser import dag_frame, save_screenshot, server_script, wait_for_app

pytestmark = pytest.mark.browser

MODEL = "deepseek-r1-distill-qwen-14b"


def _root() -> str:
    root = thought_anchors.ROOT.resolve()
    if not root.is_dir():
        reason = f"shared data not found at {root}"
        if os.environ.get("DAGMATH_REQUIRE_SHARED") == "1":
            pytest.fail(f"{reason} and DAGMATH_REQUIRE_SHARED=1", pytrace=False)
        pytest.skip(reason)
    return str(root)


@pytest.fixture(scope="module")
def longest() -> tuple[str, list[dict]]:
    """(problem id, chunks) of the longest shared chain, read from the files."""
    _root()
    path = max(thought_anchors.files(), key=lambda f: len(json.loads(f.read_text())))
    return path.parent.name.removeprefix("problem_"), json.loads(path.read_text())


@pytest.fixture(scope="module")
def ta_url(streamlit_server) -> str:
    # serve.py, as `dagmath app` runs it: the data is loaded before the first visit
    return streamlit_server(server_script(), "--data", _root())


def _page(browser, page_events, width: int, height: int):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page_events.attach(page)
    return context, page


def _params(url: str) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlsplit(url).query).items()}


def _trajectory(url: str, problem: str, **extra: str) -> str:
    more = "".join(f"&{k}={v}" for k, v in extra.items())
    return f"{url}/trajectory?model={MODEL}&dataset=thought-anchors&problem={problem}{more}"


# The geometry, measured on screen in the app's page coordinates.
MEASURE = """() => {
  const f = document.querySelector('iframe[data-testid=stIFrame]');
  const fr = f.getBoundingClientRect(), d = f.contentDocument;
  const rect = (el) => { const r = el.getBoundingClientRect();
    return {top: r.top + fr.top, bottom: r.bottom + fr.top, left: r.left + fr.left,
            right: r.right + fr.left}; };
  const pane = rect(d.getElementById('dm-graph'));
  const boxes = [...d.querySelectorAll('#dm-graph .dm-node rect')].map(rect)
    .filter((b) => b.bottom > pane.top && b.top < pane.bottom);  // rows in the pane
  return {window: [innerWidth, innerHeight], frame: rect(f), pane: pane,
          list: rect(d.getElementById('dm-steps')), boxes: boxes,
          pageScroll: document.scrollingElement.scrollTop};
}"""


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)], ids=["1280x800", "1920x1080"])
def test_the_longest_chain_fits_the_window_on_arrival(chromium_browser, page_events, ta_url,
                                                      longest, size):  # fmt: skip
    problem, chunks = longest
    context, page = _page(chromium_browser, page_events, *size)
    try:
        page.goto(_trajectory(ta_url, problem))
        wait_for_app(page)
        frame = dag_frame(page)
        assert frame.locator("#dm-root").get_attribute("data-nodes") == str(len(chunks))
        page.wait_for_timeout(300)
        m = page.evaluate(MEASURE)
        width, height = size
        assert m["pageScroll"] == 0
        # graph pane and step list: both start and end inside the window, un-scrolled
        for part in ("pane", "list"):
            assert 0 < m[part]["top"] < height - 300, (part, m[part])
            assert m[part]["bottom"] <= height, (part, m[part])
        # every node box in the pane is whole across it: none cut off at the right
        assert len(m["boxes"]) >= 10
        assert all(m["pane"]["left"] <= b["left"] and b["right"] <= m["pane"]["right"]
                   for b in m["boxes"])  # fmt: skip
        # importance shown on arrival: the source's counterfactual importance as a bar in
        # each box (length |value| / the chain's largest |value|) and as a number in the list
        field = "counterfactual_importance_accuracy"
        values = [c[field] for c in chunks]
        top = max(range(len(values)), key=lambda i: abs(values[i]))
        legend = frame.locator("body").inner_text()
        assert f"Bar: {field}" in legend
        bars = frame.locator("#dm-graph .dm-node .dm-fieldbar")
        assert bars.count() == sum(1 for v in values if v != 0)  # no bar where it is 0
        badge = frame.locator(f'.dm-step[data-id="{top}"] .dm-badge', has_text=field)
        badge = badge.inner_text()
        shown = float(badge.removeprefix(field))
        assert shown == pytest.approx(values[top], rel=5e-3), badge
        save_screenshot(page, f"reading_{width}x{height}", full_page=False)
        page_events.console_errors = [e for e in page_events.console_errors if "404" not in e]
        page_events.assert_clean()
    finally:
        context.close()


def test_a_backslash_paren_formula_is_typeset_in_the_step_list(chromium_browser, page_events,
                                                               ta_url, longest):  # fmt: skip
    problem, chunks = longest
    # the last chunk that writes \( ... \), read from the file
    pos = max(i for i, c in enumerate(chunks) if "\\(" in c["chunk"])
    context, page = _page(chromium_browser, page_events, 1280, 800)
    try:
        # the app numbers Thought Anchors steps by chunk_idx (S0, S1, ...)
        page.goto(_trajectory(ta_url, problem, step=str(chunks[pos]["chunk_idx"])))
        wait_for_app(page)
        frame = dag_frame(page)
        step = frame.locator(f'.dm-step[data-id="{pos}"] .dm-text')
        frame.wait_for_function(
            f"() => document.querySelector('.dm-step[data-id=\"{pos}\"] .dm-text')"
            ".dataset.typeset === '1'"
        )
        assert step.locator("math").count() >= 1  # KaTeX's MathML, drawn by the browser
        assert "\\(" not in step.inner_text()
        save_screenshot(page, "reading_math", full_page=False)
        assert not page_events.page_errors and not page_events.non_local_requests()
    finally:
        context.close()


def test_clicking_a_step_puts_it_in_the_address_and_the_link_reopens_it(
    chromium_browser, page_events, ta_url, longest
):
    problem, _ = longest
    context, page = _page(chromium_browser, page_events, 1280, 800)
    try:
        page.goto(_trajectory(ta_url, problem))
        wait_for_app(page)
        frame = dag_frame(page)
        assert "step" not in _params(page.url)
        frame.locator('.dm-step[data-id="5"]').click()
        # node 5 is chunk_idx 5, shown as S5
        page.wait_for_function("() => new URL(location.href).searchParams.get('step') === '5'")
        link = page.url
    finally:
        context.close()
    # a fresh browser context: nothing is shared but the address
    context, page = _page(chromium_browser, page_events, 1280, 800)
    try:
        page.goto(link)
        wait_for_app(page)
        frame = dag_frame(page)
        assert frame.locator("#dm-root").get_attribute("data-selected") == "5"
        assert "sel" in frame.locator('.dm-step[data-id="5"]').get_attribute("class")
        assert frame.locator('[data-act="copy-link"]').count() == 1
    finally:
        context.close()


def test_a_search_hit_opens_at_the_matching_step_and_back_restores_the_filters(
    chromium_browser, page_events, ta_url, longest
):
    problem, chunks = longest
    # "interpolation" occurs in two chains only, both of problem 4164 (read from the files):
    # the correct solution (the longest chain, class imperfect) and the incorrect one
    word = "interpolation"
    having = [f for f in thought_anchors.files() if word in f.read_text(encoding="utf-8").lower()]
    assert sorted(f.parent.parent.name for f in having) == [
        "correct_base_solution", "incorrect_base_solution"]  # fmt: skip
    assert {f.parent.name for f in having} == {f"problem_{problem}"}
    hits = [i for i, c in enumerate(chunks) if word in c["chunk"].lower()]
    assert len(hits) > 1
    context, page = _page(chromium_browser, page_events, 1400, 1000)
    try:
        # the user types the search and picks a class, as on the page
        page.goto(f"{ta_url}/trajectories")
        wait_for_app(page)
        search = page.get_by_role("textbox", name="Search")
        search.fill(word)
        search.press("Enter")
        wait_for_app(page)
        page.locator("[data-testid=stMultiSelect]").filter(has_text="Class").click()
        page.get_by_role("option", name="imperfect").click()
        page.keyboard.press("Escape")
        wait_for_app(page)
        page.wait_for_function(
            "() => new URL(location.href).searchParams.get('cls') === 'imperfect'"
        )
        assert _params(page.url)["q"] == word  # both in the address
        body = page.locator("body").inner_text()
        assert "1 of 20 trajectories" in body  # the correct 4164 alone
        grid = page.locator("[data-testid=stDataFrame]").last
        grid.scroll_into_view_if_needed()
        box = grid.bounding_box()
        page.wait_for_timeout(1000)  # the grid takes clicks once it has drawn its rows
        page.mouse.click(box["x"] + 18, box["y"] + 35 + 17)  # the first row's selection cell
        page.wait_for_function("() => location.pathname.endsWith('/trajectory')")
        wait_for_app(page)
        frame = dag_frame(page)
        params = _params(page.url)
        assert (params["problem"], params["sample"], params["find"]) == (problem, "0", word)
        # opened at the first chunk holding the word, marked; find-next goes to the second
        assert frame.locator("#dm-root").get_attribute("data-selected") == str(hits[0])
        assert "dm-hit" in frame.locator(f'.dm-step[data-id="{hits[0]}"]').get_attribute("class")
        save_screenshot(page, "reading_search_hit", full_page=False)
        frame.locator('[data-act="find-next"]').click()
        assert frame.locator("#dm-root").get_attribute("data-selected") == str(hits[1])
        page.go_back()
        page.wait_for_function("() => location.pathname.endsWith('/trajectories')")
        wait_for_app(page)
        from playwright.sync_api import expect

        # the search, the class filter and the rows they leave are all back (waited for: under
        # load the page can still be drawing the widgets when the app first reads as idle)
        expect(page.get_by_role("textbox", name="Search")).to_have_value(word, timeout=30_000)
        expect(page.locator("body")).to_contain_text("1 of 20 trajectories", timeout=30_000)
        classes = page.locator("[data-testid=stMultiSelect]").filter(has_text="Class")
        assert "imperfect" in classes.inner_text()
        assert (_params(page.url).get("q"), _params(page.url).get("cls")) == (word, "imperfect")
        assert "1 of 20 trajectories" in page.locator("body").inner_text()
    finally:
        context.close()


def test_math_that_tries_to_run_or_link_stays_inert(chromium_browser, page_events,
                                                    streamlit_server):  # fmt: skip
    """Markup inside \\( \\) and \\[ \\] is shown as typed; KaTeX's \\href, \\url,
    \\html*, \\includegraphics do nothing (trust off); a macro bomb ends (maxExpand)."""
    context, page = _page(chromium_browser, page_events, 1280, 800)
    try:
        page.goto(streamlit_server("tests/app/fixtures/render_app.py", "--case", "hostile_math"))
        wait_for_app(page)
        frame = dag_frame(page)
        # bring every step into the list's view, so each is typeset
        for pos in range(6):
            frame.evaluate(f"() => window.dagmath.select({pos}, {{list: true}})")
            frame.wait_for_timeout(100)
        # steps 1, 4 and 5 go to KaTeX (2 and 3 hold markup or links: shown as typed)
        frame.wait_for_function(
            "() => [0, 3, 4].every((i) => document.querySelector("
            "`.dm-step[data-id=\"${i}\"] .dm-text`).dataset.typeset === '1')"
        )
        assert frame.locator('.dm-step[data-id="0"] math').count() == 1  # the honest formula
        found = frame.evaluate(
            """() => ({
              pwned: (window.__pwned || window.parent.__pwned || window.top.__pwned) || null,
              img: document.querySelectorAll('#dm-steps img, #dm-steps script').length,
              links: document.querySelectorAll('#dm-steps a, #dm-steps [href]').length,
              ids: document.querySelectorAll('#pwn, [data-a]').length,
              styled: [...document.querySelectorAll('#dm-steps *')]
                .filter((e) => (e.getAttribute('style') || '').includes('url(')).length,
              step2: document.querySelector('.dm-step[data-id="1"] .dm-text').textContent,
            })"""
        )
        assert found["pwned"] is None and found["img"] == 0 and found["links"] == 0
        assert found["ids"] == 0 and found["styled"] == 0
        assert "<img src=x onerror=" in found["step2"]  # shown as typed
        assert not page_events.dialogs and not page_events.page_errors
        assert not page_events.non_local_requests()
    finally:
        context.close()
