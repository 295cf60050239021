"""Compare on two real 150+-step chains of one problem, in headless Chromium at 1400x1000.

Thought Anchors problem 1591: DeepSeek-R1-distill's correct chain (160 chunks) and its
incorrect one (162), loaded as the app loads that folder (one model: its two samples are the
two sides). Checks what the issue asked: both panes show text, nothing is clipped, scrolling
one scrolls the other, aligned steps are joined. Screenshots go to ``tests/app/artifacts/``
(gitignored) to be looked at.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dagmath_viz.analysis.align import align_texts
from tests import thought_anchors
from tests.app.browser import IFRAME_SELECTOR, dag_frame, wait_for_app

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


def _chain(root: Path, kind: str):
    path = root / MODEL / f"{kind}_base_solution" / f"problem_{PROBLEM}" / "chunks_labeled.json"
    return thought_anchors.trajectory(path)


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
        """() => ['a', 'b'].map(s => [...document.querySelectorAll(
              `.cell[data-side=${s}]:not(.empty)`)].map(c => c.innerText))"""
    )
    assert [len(t) for t in texts] == [len(correct.steps), len(incorrect.steps)]
    for shown, traj in zip(texts, (correct, incorrect), strict=True):
        for cell, step in zip(shown, traj.steps, strict=True):
            assert " ".join(step.text.split())[:40] in " ".join(cell.split())

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

    # the graphs below: both drawn, one layout (reading, as both are long)
    layouts = [dag_frame(app_page, i).evaluate(
        "() => document.getElementById('dm-root').dataset.layout || ''"
    ) for i in (1, 2)]  # fmt: skip
    assert len(set(layouts)) == 1
    page_events.console_errors = [
        e for e in page_events.console_errors if "404" not in e or "_stcore" not in e
    ]
    page_events.assert_clean()
