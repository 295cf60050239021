"""The view's keys in a real browser: in the app's Trajectory page (keys pressed on the page,
not in the frame) and in a file written by export-html; and the Compare and Overview pages'
"Download as HTML" files, opened offline.

j/k step, a toggles the path to the answer, n/p press the page's own Next/Prev buttons (so
the app's selected trajectory and its address change), c copies the link with the step, ?
lists the keys and Esc closes the list; nothing happens while typing in a text box.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from dagmath_viz.analysis import tables
from dagmath_viz.analysis.align import align_texts
from dagmath_viz.analysis.trajectory_table import trajectory_index
from dagmath_viz.draw import html_export as hx
from dagmath_viz.run.corpus import load_corpus
from dagmath_viz.schema import CLASSES
from tests.app import test_export_browser as exported
from tests.app.browser import REPO_ROOT, dag_frame, save_screenshot, wait_for_app
from tests.app.test_export_browser import open_file, view_frame
from tests.test_html_export import hostile_item, shown

pytestmark = pytest.mark.browser
#: A page offline, every request but the file refused (the export tests' fixture).
offline_page = exported.offline_page

SAMPLE_RUNS = REPO_ROOT / "sample_data" / "runs"  # the app's bundled data (app_url)
RUN = SAMPLE_RUNS / "gsm-bfs"
SELECTED = "() => document.getElementById('dm-root').dataset.selected"
KEY_ROWS = """() => [...document.querySelectorAll('#dm-keys tr')]
                     .map(tr => tr.cells[0].textContent.trim())"""
OVERLAY_SHOWN = "() => getComputedStyle(document.getElementById('dm-keys')).display !== 'none'"


def _query(url: str) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlsplit(url).query).items()}


@pytest.fixture
def keys_page(chromium_browser, page_events):
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = context.new_page()
    page.set_default_timeout(30_000)
    page_events.attach(page)
    try:
        yield page
    finally:
        context.close()


def test_keys_on_the_trajectory_page(keys_page, page_events, streamlit_server):
    url = streamlit_server(REPO_ROOT / "app.py", "--data", str(RUN))
    df = load_corpus([RUN]).scored
    order, _ = trajectory_index(df).order("gsm-bfs", "gsm-logic", CLASSES)
    problem, sample = order[1]  # the second: both Prev and Next can move
    page = keys_page
    page.goto(f"{url}/trajectory?model=gsm-bfs&dataset=gsm-logic&problem={problem}&sample={sample}")
    wait_for_app(page)
    frame = dag_frame(page)
    page.locator("[data-testid=stMain] h1").first.click()  # the focus on the page, not the frame

    page.keyboard.press("j")
    assert frame.evaluate(SELECTED) == "0"
    first_id = frame.evaluate("() => window.dagmath.data.nodes[0].sid")
    page.wait_for_function("(s) => location.search.includes('step=' + s)", arg=str(first_id))
    page.keyboard.press("ArrowRight")
    assert frame.evaluate(SELECTED) == "1"

    page.keyboard.press("a")
    assert frame.evaluate("() => window.dagmath.state.pathOnly") is True
    assert frame.evaluate("() => document.querySelector('input[data-key=pathOnly]').checked")
    page.keyboard.press("a")
    assert frame.evaluate("() => window.dagmath.state.pathOnly") is False

    page.keyboard.press("c")  # the address with the step, to the clipboard, and a note
    frame.wait_for_function("() => document.getElementById('dm-note').textContent"
                            ".startsWith('Link copied')")  # fmt: skip
    copied = page.evaluate("() => navigator.clipboard.readText()")
    assert copied == page.url and _query(copied)["step"] == str(
        frame.evaluate("() => window.dagmath.data.nodes[1].sid")
    )
    assert page.locator("[role=dialog]").count() == 0  # no dialog of the app's own

    page.keyboard.press("?")
    assert frame.evaluate(OVERLAY_SHOWN)
    assert frame.evaluate(KEY_ROWS) == ["j  or  →", "k  or  ←", "a", "n", "p", "c", "?", "Esc"]
    page.locator("iframe[data-testid=stIFrame]").scroll_into_view_if_needed()
    save_screenshot(page, "keys-overlay-app", full_page=False)
    page.keyboard.press("Escape")
    assert not frame.evaluate(OVERLAY_SHOWN)

    # typing in a text box (the Model choice) is not a key for the view
    page.locator("[data-testid=stSelectbox] input").first.focus()
    page.keyboard.press("n")
    page.keyboard.press("Escape")
    page.wait_for_timeout(500)
    assert (_query(page.url)["problem"], _query(page.url)["sample"]) == (problem, str(sample))

    # n and p: the page's own Next/Prev, so the app's trajectory and its address change
    page.locator("[data-testid=stMain] h1").first.click()
    for key, (want_problem, want_sample) in (("n", order[2]), ("p", order[1]), ("p", order[0])):
        page.keyboard.press(key)
        page.wait_for_function(
            "([p, s]) => { const q = new URLSearchParams(location.search);"
            " return q.get('problem') === p && q.get('sample') === s; }",
            arg=[str(want_problem), str(want_sample)],
        )
        wait_for_app(page)
    frame = dag_frame(page)
    assert _query(page.url).get("step") is None  # step= belonged to the trajectory left
    page.locator("[data-testid=stMain] h1").first.click()
    page.keyboard.press("p")  # the first: a note, no move
    frame.wait_for_function(
        "() => document.getElementById('dm-note').textContent.includes('first trajectory')"
    )
    page_events.console_errors[:] = [
        e for e in page_events.console_errors if "404" not in e or "_stcore" not in e
    ]
    page_events.assert_clean()


def test_copy_link_without_a_clipboard(chromium_browser, page_events, streamlit_server):
    # as on a plain-http address other than localhost, where browsers give no clipboard
    url = streamlit_server(REPO_ROOT / "app.py", "--data", str(RUN))
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script("Object.defineProperty(Navigator.prototype, 'clipboard', "
                            "{get: () => undefined})")  # fmt: skip
    page = context.new_page()
    page.set_default_timeout(30_000)
    page_events.attach(page)
    try:
        page.goto(f"{url}/trajectory?model=gsm-bfs&dataset=gsm-logic&problem=10&sample=0")
        wait_for_app(page)
        frame = dag_frame(page)
        page.locator("[data-testid=stMain] h1").first.click()
        page.keyboard.press("j")
        page.keyboard.press("c")
        box = frame.locator("#dm-bar input.dm-link")
        box.wait_for(state="visible")
        assert box.input_value() == page.url and "step=" in page.url
        assert frame.evaluate("() => document.getElementById('dm-note').textContent").startswith(
            "No clipboard here"
        )
        # the link box has the focus now: keys typed there are not the view's
        page.keyboard.press("j")
        assert frame.evaluate(SELECTED) == "0"
    finally:
        context.close()


def test_keys_in_an_exported_file(offline_page, tmp_path):
    out = tmp_path / "keys.html"
    out.write_text(hx.trajectory_html(hostile_item()), encoding="utf-8")  # 4 steps
    page = offline_page
    open_file(page, out)
    frame = view_frame(page)
    page.locator("h1").first.click()  # keys pressed on the page reach the view on screen
    page.keyboard.press("j")
    page.keyboard.press("j")
    assert frame.evaluate(SELECTED) == "1"
    page.keyboard.press("a")
    assert frame.evaluate("() => window.dagmath.state.pathOnly") is True
    page.keyboard.press("?")
    assert frame.evaluate(OVERLAY_SHOWN)
    # no app here: no next trajectory, no link to copy
    assert frame.evaluate(KEY_ROWS) == ["j  or  →", "k  or  ←", "a", "?", "Esc"]
    save_screenshot(page, "keys-overlay-export", full_page=False)
    page.keyboard.press("Escape")
    assert not frame.evaluate(OVERLAY_SHOWN)
    page.keyboard.press("n")  # not a key here: nothing changes
    assert frame.evaluate(SELECTED) == "1"
    assert page.blocked == [] and page.errors == []


def _download(page, label: str, out) -> None:
    button = page.get_by_role("button", name=label)
    button.scroll_into_view_if_needed()
    with page.expect_download() as download:
        button.click()
    download.value.save_as(str(out))


def _cells(page, name: str) -> list[list[str]]:
    return page.evaluate(
        """(name) => [...document.querySelectorAll(`table[data-table="${name}"] tbody tr`)]
            .map(tr => [...tr.cells].map(td => td.textContent))""",
        name,
    )


def test_compare_downloads_the_comparison(
    app_page,
    page_events,
    app_url,
    offline_page,
    tmp_path,
):
    # bundled gsm-logic problem 26: gsm-dfs's proof has 13 steps, gsm-overlap's 65
    app_page.goto(
        f"{app_url}/compare?models=gsm-dfs&models=gsm-overlap&dataset=gsm-logic&problem=26"
    )
    wait_for_app(app_page)
    dag_frame(app_page, 2)
    label = "Download this comparison as HTML (one offline file)"
    app_page.get_by_role("button", name=label).scroll_into_view_if_needed()
    save_screenshot(app_page, "compare-download", full_page=False)
    out = tmp_path / "compare.html"
    _download(app_page, label, out)
    page_events.console_errors[:] = [
        e for e in page_events.console_errors if "404" not in e or "_stcore" not in e
    ]
    page_events.assert_clean()

    page = offline_page
    open_file(page, out)
    assert page.evaluate("document.body.dataset.views") == "2"
    has_view = "!!document.getElementById('dm-root')"
    frames = [f for f in page.main_frame.child_frames if f.evaluate(has_view)]
    drawn = [int(f.evaluate("document.getElementById('dm-root').dataset.drawn")) for f in frames]
    assert drawn == [13, 65]
    df = load_corpus([SAMPLE_RUNS]).scored
    corpus = load_corpus([SAMPLE_RUNS])
    texts = []
    for model in ("gsm-dfs", "gsm-overlap"):
        row = corpus.row_of(model, "gsm-logic", "26", 0)
        texts.append([s.text for s in corpus.trajectory(row).steps])
    pairs = len(align_texts(*texts).pairs)
    aligned = page.frame_locator("iframe.dm-aligned").locator(".aligned")
    assert aligned.get_attribute("data-pairs") == str(pairs)
    assert aligned.locator(".row.pair").count() == pairs
    dfs = df[(df["model"] == "gsm-dfs") & (df["problem_id"].astype(str) == "26")]
    assert _cells(page, "facts-a")[3] == ["Steps / edges", f"13 / {dfs['n_edges'].iloc[0]}"]
    save_screenshot(page, "compare-download-file", full_page=False)
    page.locator("iframe.dm-aligned").scroll_into_view_if_needed()
    save_screenshot(page, "compare-download-file-aligned", full_page=False)
    assert page.blocked == [] and page.errors == []


def test_overview_downloads_the_run_report(
    app_page,
    page_events,
    app_url,
    offline_page,
    tmp_path,
):
    app_page.goto(app_url)
    wait_for_app(app_page)
    label = "Download this report as HTML (one offline file)"
    app_page.get_by_role("button", name=label).scroll_into_view_if_needed()
    save_screenshot(app_page, "overview-download", full_page=False)
    out = tmp_path / "report.html"
    _download(app_page, label, out)
    page_events.console_errors[:] = [
        e for e in page_events.console_errors if "404" not in e or "_stcore" not in e
    ]
    page_events.assert_clean()

    page = offline_page
    open_file(page, out)
    df = load_corpus([SAMPLE_RUNS]).scored
    # the Overview's own calls (pages/overview.py): the four logic-program strategies apart
    models_df, strategies_df = tables.split_logic_strategies(df)
    assert sorted(strategies_df["model"].unique()) == ["gsm-bfs", "gsm-dfs", "gsm-overlap",
                                                       "gsm-shortest"]  # fmt: skip
    board = tables.leaderboard(models_df, n_boot=1000)
    strategies = tables.leaderboard(strategies_df, n_boot=1000)
    for name, expected in (
        ("leaderboard", tables.leaderboard_display(board)),
        ("strategies", tables.leaderboard_display(strategies)),
        ("spread", tables.spread_display(tables.model_spread(models_df, board=board))),
        ("table1", tables.table1_display(tables.table1(df))),
        ("class_counts", tables.class_counts_table(df)),
    ):
        want = [[shown(v) for v in row] for row in expected.itertuples(index=False)]
        assert _cells(page, name) == want, name
    assert int(page.evaluate("document.body.dataset.views")) == min(
        10, int(((df["class"] == "incorrect") & (df["dead_ends"].map(len) > 0)).sum())
    )
    save_screenshot(page, "overview-download-file", full_page=False)
    assert page.blocked == [] and page.errors == []
