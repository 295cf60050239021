"""End to end: files written by ``dagmath export-html``, opened from file:// in Debian's
headless Chromium with every network request refused.

Each test routes all requests to abort (except the one file) and records any attempt;
a page that asks for anything else fails.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagmath_viz.analysis import tables
from dagmath_viz.cli import main
from dagmath_viz.draw import html_export as hx
from dagmath_viz.draw.offline_assets import katex_bundle
from dagmath_viz.run.corpus import load_corpus
from dagmath_viz.schema import Step, Trajectory
from tests.app.browser import REPO_ROOT, save_screenshot
from tests.test_html_export import hostile_item, need_thought_anchors, shown

pytestmark = pytest.mark.browser

SAMPLE_RUNS = REPO_ROOT / "sample_data" / "runs"


@pytest.fixture
def offline_page(chromium_browser):
    """A page whose context is offline and aborts every request but the file it opens;
    ``page.blocked`` lists what was refused, ``page.errors`` the script errors."""
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000}, offline=True)
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.blocked, page.errors, page.allowed = [], [], set()

    def route(r):
        if r.request.url in page.allowed:
            r.continue_()
        else:
            page.blocked.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    try:
        yield page
    finally:
        context.close()


def open_file(page, path: Path) -> None:
    url = path.resolve().as_uri()
    page.allowed.add(url)
    page.goto(url)
    page.wait_for_function(
        "document.body.dataset.views !== undefined && "
        "document.body.dataset.viewsReady === document.body.dataset.views"
    )


def view_frame(page, index: int = 0):
    return page.main_frame.child_frames[index]


def step_in_view(frame, node: int) -> bool:
    return frame.evaluate(
        """(id) => { const s = document.querySelector(`.dm-step[data-id="${id}"]`);
            const l = document.getElementById('dm-steps').getBoundingClientRect();
            const r = s.getBoundingClientRect();
            return s.classList.contains('sel') && r.top >= l.top - 1 && r.top < l.bottom; }""",
        node,
    )


def test_longest_real_chain_opens_offline(offline_page, tmp_path):
    root = need_thought_anchors()
    longest = max(
        len(json.loads(p.read_text(encoding="utf-8")))
        for p in root.glob("*/*/*/chunks_labeled.json")
    )
    out = tmp_path / "chain.html"
    assert main(["export-html", str(root), "--longest", "-o", str(out), "-q"]) == 0
    page = offline_page
    open_file(page, out)
    frame = view_frame(page)

    assert frame.evaluate("document.querySelectorAll('#dm-graph .dm-node').length") == longest
    assert frame.evaluate("document.getElementById('dm-root').dataset.drawn") == str(longest)
    save_screenshot(page, "export-chain-open", full_page=False)

    # clicking a node far down the chain scrolls the step list to its step
    target = longest - 40
    assert not step_in_view(frame, target)
    frame.locator(f'#dm-graph .dm-node[data-id="{target}"]').click()
    assert frame.evaluate("document.getElementById('dm-root').dataset.selected") == str(target)
    assert step_in_view(frame, target)
    page.locator("iframe.dm-view").scroll_into_view_if_needed()
    save_screenshot(page, "export-chain-clicked", full_page=False)

    if katex_bundle() is not None:  # the problem (4164: p(n) = 1/n^2 ...) is typeset
        assert page.evaluate("document.querySelectorAll('.dm-math .katex').length") > 0
        assert page.evaluate("document.body.dataset.katex") == "1"
    assert page.blocked == [] and page.errors == []


def test_hostile_text_runs_nothing_offline(offline_page, tmp_path):
    out = tmp_path / "hostile.html"
    out.write_text(hx.trajectory_html(hostile_item()), encoding="utf-8")
    page = offline_page
    open_file(page, out)
    frame = view_frame(page)
    for node in range(4):
        frame.locator(f'#dm-graph .dm-node[data-id="{node}"]').click()
    assert page.evaluate("window.__pwned") is None
    assert frame.evaluate("window.__pwned") is None
    assert frame.evaluate("document.querySelectorAll('#dm-steps img, #dm-steps a').length") == 0
    step2 = frame.locator('.dm-step[data-id="1"] .dm-text')
    assert "\\href" in step2.text_content()  # refused as math: shown as written
    if katex_bundle() is not None:
        assert step2.locator(".katex").count() == 1  # $x^2$ typeset
        # the stray "$" and "$5" stay text
        assert frame.locator('.dm-step[data-id="2"] .katex').count() == 0
    save_screenshot(page, "export-hostile", full_page=True)
    assert page.blocked == [] and page.errors == []


def test_run_report_of_the_bundled_data_opens_offline(offline_page, tmp_path):
    out = tmp_path / "report.html"
    code = main(["export-html", str(SAMPLE_RUNS), "--report", "--limit", "3", "-o", str(out),
                 "-q"])  # fmt: skip
    assert code == 0
    page = offline_page
    open_file(page, out)
    assert page.evaluate("document.body.dataset.views") == "3"

    df = load_corpus([SAMPLE_RUNS]).scored
    models_df, strategies_df = tables.split_logic_strategies(df)  # the Overview's calls
    board = tables.leaderboard(models_df, n_boot=1000)
    strategies = tables.leaderboard(strategies_df, n_boot=1000)
    assert len(board) == 12 and len(strategies) == 4  # 6 models × 2 datasets; 4 strategies
    for name, expected in (
        ("leaderboard", tables.leaderboard_display(board)),
        ("strategies", tables.leaderboard_display(strategies)),
        ("table1", tables.table1_display(tables.table1(df))),
        ("class_counts", tables.class_counts_table(df)),
    ):
        cells = page.evaluate(
            """(name) => [...document.querySelectorAll(`table[data-table="${name}"] tbody tr`)]
                .map(tr => [...tr.cells].map(td => td.textContent))""",
            name,
        )
        assert cells == [[shown(v) for v in row] for row in expected.itertuples(index=False)]

    charts = page.evaluate("document.querySelectorAll('.plotly-graph-div').length")
    drawn = page.evaluate("document.querySelectorAll('.plotly-graph-div .main-svg').length")
    assert charts >= 4 and drawn >= charts  # each chart drew its SVG
    save_screenshot(page, "export-report-top", full_page=False)

    page.locator('table[data-table="trajectories"] a[href="#t-2"]').click()
    top = page.evaluate("document.getElementById('t-2').getBoundingClientRect().top")
    assert abs(top) < 5  # the link brought its section to the top
    frame = view_frame(page, 1)
    assert int(frame.evaluate("document.getElementById('dm-root').dataset.drawn")) > 0
    if katex_bundle() is not None:  # the simulated steps' formulas (g_4 = 24), typeset by
        # the page's one KaTeX: no view carries a copy of its own
        assert frame.evaluate("document.querySelectorAll('#dm-steps .katex').length") > 0
        assert frame.evaluate("window.dmKatex === undefined")
    save_screenshot(page, "export-report-section", full_page=False)
    assert page.blocked == [] and page.errors == []


def test_keys_step_through_the_view(offline_page, tmp_path):
    out = tmp_path / "keys.html"
    out.write_text(hx.trajectory_html(hostile_item()), encoding="utf-8")  # 4 steps
    page = offline_page
    open_file(page, out)
    frame = view_frame(page)
    frame.locator("#dm-graph").focus()
    selected = "() => document.getElementById('dm-root').dataset.selected"
    seen = []
    for key in ("j", "j", "ArrowRight", "ArrowRight", "ArrowRight", "k", "ArrowLeft"):
        page.keyboard.press(key)
        seen.append(frame.evaluate(selected))
    # from no selection: the first step, then on; the last step stops it; then back
    assert seen == ["0", "1", "2", "3", "3", "2", "1"]
    assert step_in_view(frame, 1)
    # typing in a text box is not a key for the view
    frame.evaluate("() => { const i = document.createElement('input'); i.id = 't';"
                   " document.body.appendChild(i); i.focus(); }")  # fmt: skip
    page.keyboard.press("j")
    assert frame.evaluate(selected) == "1"
    assert page.blocked == [] and page.errors == []


SUBSCRIPT_LOWERED = """(root) => {
    const sub = root.querySelector('.katex math msub');
    if (!sub) return null;
    const [base, index] = [...sub.children].map((e) => e.getBoundingClientRect());
    const size = (e) => parseFloat(getComputedStyle(e).fontSize);
    // and it is what shows: no box between it and the formula's span is narrower (a copy
    // kept for screen readers in a 1 px clipped box is not the formula on screen)
    const width = sub.getBoundingClientRect().width;
    for (let e = sub.parentElement; !e.classList.contains('katex'); e = e.parentElement) {
        if (e.getBoundingClientRect().width < width) return false;
    }
    return base.height > 0 && index.bottom > base.bottom &&
        size(sub.children[1]) < size(sub.children[0]);
}"""


def test_math_is_laid_out_as_math(offline_page, tmp_path):
    # a subscript sits lower and smaller than its base, in the problem and in a step
    # (KaTeX's HTML output with the stylesheet Streamlit ships put g_4 on the line as "g4")
    if katex_bundle() is None:
        pytest.skip("no KaTeX in the installed packages: math stays LaTeX source")
    steps = (Step(1, (), r"Given: \(g_4 = 24\)."), Step(2, (1,), r"so $$x^2 + y_1 = \frac{1}{2}$$"))
    traj = Trajectory("m", "d", "1", 0, steps, problem_text=r"Find $g_4$.")
    out = tmp_path / "math.html"
    rec = {"dead_ends": (), "final_correct": True, "class": "perfect"}
    out.write_text(hx.trajectory_html(hx.ExportedTrajectory(traj, rec)), encoding="utf-8")
    page = offline_page
    open_file(page, out)
    frame = view_frame(page)
    problem = page.evaluate_handle("document.querySelector('.dm-math')")
    assert page.evaluate(SUBSCRIPT_LOWERED, problem)
    for node in (0, 1):  # S1 (inline) and S2 (display)
        step = frame.evaluate_handle(f"document.querySelector('.dm-step[data-id=\"{node}\"]')")
        assert frame.evaluate(SUBSCRIPT_LOWERED, step), node
    assert frame.evaluate("document.querySelector('#dm-steps .dm-head').textContent").startswith(
        "2 steps · math typeset"
    )
    save_screenshot(page, "export-math", full_page=False)
    assert page.blocked == [] and page.errors == []


def test_a_comparison_typesets_its_aligned_steps(offline_page, tmp_path):
    # the aligned grid carries no KaTeX of its own: the file's one KaTeX typesets it too
    if katex_bundle() is None:
        pytest.skip("no KaTeX in the installed packages: math stays LaTeX source")
    texts = ([r"Given \(g_4 = 24\).", r"so \[y_1 = \frac{1}{2}\]"],
             [r"Given \(g_4 = 24\).", r"so \[y_1 = 0.5\]"])  # fmt: skip
    sides = []
    for model, side in zip(("a", "b"), texts, strict=True):
        steps = tuple(Step(i + 1, (i,) if i else (), t) for i, t in enumerate(side))
        rec = {"model": model, "dead_ends": (), "final_correct": True, "class": "perfect"}
        sides.append(hx.ExportedTrajectory(Trajectory(model, "d", "1", 0, steps), rec))
    page_html = hx.comparison_html(*sides)
    assert page_html.count("window.katex=") == 1
    out = tmp_path / "cmp.html"
    out.write_text(page_html, encoding="utf-8")
    page = offline_page
    open_file(page, out)
    grid = page.frame_locator("iframe.dm-aligned")
    grid.locator(".aligned").wait_for()
    # 2 formulas a side, and the pair (S2, S2) differs: its diff holds S2's two formulas
    assert grid.locator(".tex").count() == 6
    page.locator("iframe.dm-aligned").scroll_into_view_if_needed()
    grid.locator("details.diff summary").click()
    for i in range(6):
        grid.locator(".tex").nth(i).locator(".katex math").wait_for()
    handle = page.locator("iframe.dm-aligned").element_handle().content_frame()
    sub = handle.evaluate_handle("document.querySelector('.cell .tex')")
    assert handle.evaluate(SUBSCRIPT_LOWERED, sub)
    save_screenshot(page, "export-compare-math", full_page=False)
    assert page.blocked == [] and page.errors == []
