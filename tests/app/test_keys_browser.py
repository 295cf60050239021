"""The view's keys in a real browser: in the app's Trajectory page (keys pressed on the page,
not in the frame) and in a file written by export-html.

j/k step, a toggles the path to the answer, n/p press the page's own Next/Prev buttons (so
the app's selected trajectory and its address change), c copies the link with the step, ?
lists the keys and Esc closes the list; nothing happens while typing in a text box.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from dagmath_viz.analysis.trajectory_table import trajectory_index
from dagmath_viz.draw import html_export as hx
from dagmath_viz.run.corpus import load_corpus
from dagmath_viz.schema import CLASSES
from tests.app.browser import REPO_ROOT, dag_frame, save_screenshot, wait_for_app
from tests.app.test_export_browser import offline_page, open_file, view_frame  # noqa: F401
from tests.test_html_export import hostile_item

pytestmark = pytest.mark.browser

RUN = REPO_ROOT / "sample_data" / "runs" / "gsm-bfs"
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
    assert page.locator("[role=dialog]").count() == 0  # not Streamlit's "clear caches"

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
