"""Compare on two real 150+-step chains of one problem, in headless Chromium at 1400x1000.

Thought Anchors problem 1591: DeepSeek-R1-distill's correct chain (160 chunks) and its
incorrect one (162), loaded as the app loads that folder (one model: its two samples are the
two sides). Checks what the issue asked: both panes show text, nothing is clipped, scrolling
one scrolls the other, aligned steps are joined. Screenshots go to ``tests/app/artifacts/``
(gitignored) to be looked at.

Math in the grid: problem 1591 writes no ``\\( \\)`` (only a bare ``\\boxed{6.17}``, also
typeset); problem 3448's two chains write ``\\( \\)`` and ``\\[ \\]`` throughout, and the grid
typesets them with the app's offline KaTeX. Hostile math stays inert on the grid
(``render_app.py --case hostile_math_aligned``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from dagmath_viz.analysis.align import align_texts
from tests import thought_anchors
from tests.app.browser import IFRAME_SELECTOR, dag_frame, save_screenshot, wait_for_app

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).parent / "artifacts"
PROBLEM = "1591"
MODEL = "deepseek-r1-distill-qwen-14b"


@pytest.fixture(scope="module")
def ta_root() -> Path:
    root = thought_anchors.ROOT.resolve()
    if not root.is_dir():
        reason = f"shared data not found at {root}"
        if os.environ.get("DAGMATH_REQUIRE_SHARED") == "1":
            pytest.fail(f"{reason} and DAGMATH_REQUIRE_SHARED=1", pytrace=False)
        pytest.skip(reason)
    return root


def _chain(root: Path, kind: str, problem: str = PROBLEM):
    path = root / MODEL / f"{kind}_base_solution" / f"problem_{problem}" / "chunks_labeled.json"
    return thought_anchors.trajectory(path)


#: A cell's text as written: its text nodes, and each formula's TeX (typeset or not) as
#: the file has it between its delimiters (whitespace aside).
CELL_SOURCE = """(c) => { const out = [];
  const walk = (n) => { for (const k of n.childNodes) {
      if (k.nodeType === 3) out.push(k.textContent);
      else if (k.classList && k.classList.contains('tex')) out.push(' ' + k.dataset.tex + ' ');
      else if (k.nodeType === 1) walk(k); } };
  walk(c); return out.join(''); }"""


def _words(text: str) -> str:
    """Text with delimiters, whitespace and bold markers dropped, to compare a cell with its
    step (R1's "**Final Answer**" shows as bold: the cell holds its words, not the stars)."""
    return "".join(re.sub(r"\\[()\[\]]|\$|\*\*", " ", text).split())


def _shot(target, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    target.screenshot(path=str(path))
    return path


VISIBLE_TOPS = """() => {
  const box = document.querySelector('.aligned').getBoundingClientRect();
  const first = side => [...document.querySelectorAll(`.cell[data-side=${side}]:not(.empty)`)]
      .find(c => c.getBoundingClientRect().bottom > box.top + 40);
  const a = first('a'), b = first('b');
  return {a: a.dataset.step, b: b.dataset.step,
          scroll: document.querySelector('.aligned').scrollTop};
}"""


def test_two_long_chains_side_by_side(app_page, page_events, streamlit_server, ta_root):
    correct, incorrect = _chain(ta_root, "correct"), _chain(ta_root, "incorrect")
    assert min(len(correct.steps), len(incorrect.steps)) >= 150
    url = streamlit_server("app.py", "--data", str(ta_root))
    app_page.goto(f"{url}/compare?dataset=thought-anchors&problem={PROBLEM}")
    wait_for_app(app_page, timeout_ms=60_000)
    # a cold server is still loading the folder on the first run: wait for the page proper
    app_page.get_by_text("Side by side", exact=True).wait_for(timeout=60_000)
    wait_for_app(app_page, timeout_ms=60_000)
    assert app_page.locator("[data-testid=stException]").count() == 0
    # the by-design note is on the page
    assert "one it marks incorrect" in app_page.inner_text("body")

    handle = app_page.locator(IFRAME_SELECTOR).nth(0)
    handle.scroll_into_view_if_needed()
    frame = handle.element_handle().content_frame()
    frame.wait_for_selector(".aligned")

    # both panes show text: every step of each chain, in order, with its words
    texts = frame.evaluate(
        f"""() => ['a', 'b'].map(s => [...document.querySelectorAll(
              `.cell[data-side=${{s}}]:not(.empty)`)].map({CELL_SOURCE}))"""
    )
    assert [len(t) for t in texts] == [len(correct.steps), len(incorrect.steps)]
    for shown, traj in zip(texts, (correct, incorrect), strict=True):
        for cell, step in zip(shown, traj.steps, strict=True):
            assert _words(step.text)[:40] in _words(cell)
    # markdown bold in the files (R1's closing "**Final Answer**") is bold in the cells
    bold = frame.evaluate(
        "() => [...document.querySelectorAll('.cell strong')].map(e => e.textContent)"
    )
    written = sum(s.text.count("**Final Answer**") for t in (correct, incorrect) for s in t.steps)
    assert written >= 1 and bold.count("Final Answer") == written

    # aligned steps are joined: the library's pairs (computed here from the raw files),
    # each one row with a join between its two cells
    expected = align_texts([s.text for s in correct.steps], [s.text for s in incorrect.steps])
    assert len(expected.pairs) >= 10
    joined = frame.evaluate(
        """() => [...document.querySelectorAll('.row.pair')].map(r => {
             const [a, j, b] = [...r.children].map(e => e.getBoundingClientRect());
             return {a: +r.dataset.a, b: +r.dataset.b, kind: r.dataset.kind,
                     between: a.right <= j.left + 1 && j.right <= b.left + 1,
                     level: Math.abs(a.top - b.top) < 1 && Math.abs(a.top - j.top) < 1,
                     mark: r.querySelector('.join .mark').textContent};
           })"""
    )
    assert [(r["a"], r["b"], r["kind"]) for r in joined] == [
        (p.a, p.b, p.kind) for p in expected.pairs
    ]
    assert all(r["between"] and r["level"] for r in joined)
    assert {r["mark"] for r in joined} <= {"=", "≈"}

    # nothing clipped: no cell, no pane, no page wider than its box
    clipped = frame.evaluate(
        """() => [...document.querySelectorAll('.cell, .aligned, body')]
              .filter(e => e.scrollWidth > e.clientWidth + 1).length"""
    )
    assert clipped == 0
    frame_box = handle.bounding_box()
    assert frame_box["x"] >= 0 and frame_box["x"] + frame_box["width"] <= 1400
    before = frame.evaluate(VISIBLE_TOPS)
    app_page.get_by_text("Paired outcomes", exact=True).scroll_into_view_if_needed()
    _shot(app_page, "compare_paired_outcomes")
    handle.scroll_into_view_if_needed()
    _shot(app_page, "compare_aligned_page")
    _shot(handle, "compare_aligned_top")

    # scrolling one pane scrolls the other: the wheel over A's half moves B too
    app_page.mouse.move(frame_box["x"] + frame_box["width"] * 0.25, frame_box["y"] + 400)
    for _ in range(8):
        app_page.mouse.wheel(0, 600)
    frame.wait_for_function("() => document.querySelector('.aligned').scrollTop > 2000")
    # ... and wait until the eight wheel turns are all spent: under load the first check can
    # pass mid-scroll, and which rows are in view would then depend on the machine's speed
    frame.wait_for_function(
        """() => new Promise(done => {
             const box = document.querySelector('.aligned'), top = box.scrollTop;
             setTimeout(() => done(box.scrollTop === top), 400); })""",
        polling=100,
        timeout=30_000,
    )
    after = frame.evaluate(VISIBLE_TOPS)
    assert int(after["a"]) > int(before["a"]) and int(after["b"]) > int(before["b"])
    # ... and the rows still line up: what sits at one height on the left is the same row
    # as what sits there on the right
    same_row = frame.evaluate(
        """() => { const box = document.querySelector('.aligned').getBoundingClientRect();
             const y = box.top + box.height / 2;
             const l = document.elementFromPoint(box.left + box.width * 0.2, y).closest('.row');
             const r = document.elementFromPoint(box.left + box.width * 0.8, y).closest('.row');
             return l !== null && l === r; }"""
    )
    assert same_row
    # both panes show text where the view now is (the unpaired steps between two pairs
    # face each other rather than leaving one side blank)
    in_view = frame.evaluate(
        """() => { const box = document.querySelector('.aligned').getBoundingClientRect();
             return ['a', 'b'].map(s => [...document.querySelectorAll(
                 `.cell[data-side=${s}]:not(.empty)`)].filter(c => {
                   const r = c.getBoundingClientRect();
                   return r.bottom > box.top && r.top < box.bottom && c.innerText.trim(); }
                 ).length); }"""
    )
    assert min(in_view) >= 3, in_view
    _shot(handle, "compare_aligned_scrolled")

    # 1591 writes no \( \) but ends in a bare \boxed{6.17}: typeset when it comes into view
    last = frame.locator(".cell[data-side=a]:not(.empty)").nth(len(correct.steps) - 1)
    assert "\\boxed{6.17}" in correct.steps[-1].text
    last.scroll_into_view_if_needed()
    last.locator(".tex .katex math").wait_for(timeout=30_000)
    assert last.locator("annotation").text_content() == "\\boxed{6.17}"

    # the graphs below: both drawn, one layout (reading, as both are long)
    layouts = [dag_frame(app_page, i).evaluate(
        "() => document.getElementById('dm-root').dataset.layout || ''"
    ) for i in (1, 2)]  # fmt: skip
    assert len(set(layouts)) == 1
    page_events.console_errors = [
        e for e in page_events.console_errors if "404" not in e or "_stcore" not in e
    ]
    page_events.assert_clean()


#: Every cell of the grid typeset: the grid scrolled top to bottom, a screen at a time (a
#: formula is typeset as it comes near the view), then back to the top.
TYPESET_ALL = """async () => {
  const box = document.querySelector('.aligned');
  for (let y = 0; y <= box.scrollHeight; y += box.clientHeight / 2) {
    box.scrollTop = y;
    await new Promise((done) => setTimeout(done, 60));
  }
  box.scrollTop = 0;
  await new Promise((done) => setTimeout(done, 60));
  return [...document.querySelectorAll('.cell .tex')].filter(
    (t) => t.dataset.typeset !== '1').length;
}"""


def _first_formula(text: str, open_: str, close: str) -> str | None:
    """The body of the first ``open_ … close`` formula in ``text``, whitespace folded."""
    m = re.search(re.escape(open_) + r"(.+?)" + re.escape(close), text, re.S)
    return " ".join(m.group(1).split()) if m else None


def test_math_typeset_in_the_aligned_steps(app_page, page_events, streamlit_server, ta_root):
    problem = "3448"  # both chains write \( \) and \[ \] (1591 writes neither)
    correct, incorrect = _chain(ta_root, "correct", problem), _chain(ta_root, "incorrect", problem)
    inline = next(i for i, s in enumerate(correct.steps) if _first_formula(s.text, "\\(", "\\)"))
    display = next(i for i, s in enumerate(correct.steps) if _first_formula(s.text, "\\[", "\\]"))
    url = streamlit_server("app.py", "--data", str(ta_root))
    app_page.goto(f"{url}/compare?dataset=thought-anchors&problem={problem}")
    wait_for_app(app_page, timeout_ms=60_000)
    app_page.get_by_text("Side by side", exact=True).wait_for(timeout=60_000)
    wait_for_app(app_page, timeout_ms=60_000)
    handle = app_page.locator(IFRAME_SELECTOR).nth(0)
    handle.scroll_into_view_if_needed()
    frame = handle.element_handle().content_frame()
    frame.wait_for_selector(".aligned")
    assert frame.evaluate("() => document.body.dataset.katex") == "1"  # the page's own KaTeX
    counts = frame.evaluate(
        "() => ['a', 'b'].map(s => document.querySelectorAll("
        "`.cell[data-side=${s}]:not(.empty)`).length)"
    )
    assert counts == [len(correct.steps), len(incorrect.steps)]

    # the first step of A with \( \) and the first with \[ \]: typeset, as MathML, from the
    # TeX the file has between those delimiters
    for pos, open_, close, block in ((inline, "\\(", "\\)", False), (display, "\\[", "\\]", True)):
        cell = frame.locator(".cell[data-side=a]:not(.empty)").nth(pos)
        cell.scroll_into_view_if_needed()
        tex = cell.locator(f'.tex[data-display="{int(block)}"]').first
        tex.locator(".katex math").wait_for(timeout=30_000)
        source = tex.locator("annotation").text_content()
        assert " ".join(source.split()) == _first_formula(correct.steps[pos].text, open_, close)
        assert (tex.locator("math").get_attribute("display") == "block") is block
        assert "\\(" not in cell.inner_text() and "\\[" not in cell.inner_text()
    frame.locator(".cell[data-side=a]:not(.empty)").nth(inline).scroll_into_view_if_needed()
    _shot(app_page, "compare_aligned_math_page")
    _shot(handle, "compare_aligned_math")

    # every formula typesets; none is wider than its cell, no cell wider than its column
    assert frame.evaluate(TYPESET_ALL) == 0
    typeset = frame.evaluate("() => document.querySelectorAll('.cell .tex .katex').length")
    assert typeset >= 100, typeset
    clipped = frame.evaluate(
        """() => [...document.querySelectorAll('.cell, .aligned, body')]
              .filter(e => e.scrollWidth > e.clientWidth + 1)
              .map(e => (e.dataset.side || '') + (e.dataset.step || e.className))"""
    )
    assert clipped == []
    page_events.console_errors = [
        e for e in page_events.console_errors if "404" not in e or "_stcore" not in e
    ]
    page_events.assert_clean()
    assert not page_events.non_local_requests()


def test_math_that_tries_to_run_or_link_stays_inert_on_the_grid(
    chromium_browser, page_events, streamlit_server
):
    """Markup inside \\( \\) and \\[ \\] is shown as typed; KaTeX's \\href, \\url, \\html*,
    \\includegraphics do nothing (trust off); a macro bomb ends (maxExpand): in the cells
    and in the (opened) word diffs."""
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page_events.attach(page)
    try:
        page.goto(streamlit_server("tests/app/fixtures/render_app.py", "--case",
                                   "hostile_math_aligned"))  # fmt: skip
        wait_for_app(page)
        frame = page.locator(IFRAME_SELECTOR).first.element_handle().content_frame()
        frame.wait_for_selector(".aligned")
        assert frame.evaluate(TYPESET_ALL) == 0  # every formula went through KaTeX
        found = frame.evaluate(
            """() => ({
              pwned: (window.__pwned || window.parent.__pwned || window.top.__pwned) || null,
              formulas: document.querySelectorAll('.tex').length,
              typeset: document.querySelectorAll('.tex .katex math').length,
              img: document.querySelectorAll('.aligned img, .aligned script, .aligned svg, '
                + '.aligned iframe').length,
              links: document.querySelectorAll('.aligned a, .aligned [href]').length,
              ids: document.querySelectorAll('#pwn, .tex [data-a]').length,
              styled: [...document.querySelectorAll('.aligned *')]
                .filter((e) => (e.getAttribute('style') || '').includes('url(')).length,
              cell2: document.querySelector('.cell[data-side=a][data-step="2"]').textContent,
              cell3: document.querySelector('.cell[data-side=a][data-step="3"]').textContent,
            })"""
        )
        # per side: 1 (x^2 = 4), 1 (\htmlId ...), 2 (\includegraphics, the bomb), 1 (boxed),
        # steps 2 and 3 none; A's five once more in the diffs (B only adds "again"): 15
        assert found["formulas"] == 15, found
        # the honest formulas are MathML; the refused commands and the bomb show as KaTeX's
        # error text (red), not as what they ask for
        assert found["typeset"] >= 3 * 3, found
        assert found["pwned"] is None and found["img"] == 0 and found["links"] == 0
        assert found["ids"] == 0 and found["styled"] == 0
        assert "\\( <img src=x onerror=" in found["cell2"]  # shown as typed
        assert "\\href{javascript:" in found["cell3"]  # never handed to KaTeX
        save_screenshot(page, "compare_aligned_hostile_math", full_page=False)
        assert not page_events.dialogs and not page_events.page_errors
        assert not page_events.non_local_requests()
    finally:
        context.close()
