"""The real app in headless Chromium over the bad corpus and bad uploads.

Every page runs without a traceback or a console error (Streamlit's own ``/<page>/_stcore/``
404 probes aside), and hostile text from every field the corpus uses -- model, dataset,
problem id, problem text, step text, thinking/edge, answers, file and folder names -- shows
as text and never runs: nothing sets ``window.__pwned``, no dialog opens, no ``javascript:``
link or injected image appears. Uploads of the corpus's zips land only in the upload folder.

The corpus is ``tests/test_hardening.py``'s, less the two answers that stall a computer
algebra system (27, 29): the deadline on them is tested by ``dagmath score`` and AppTest,
and here it would only cost two five-second waits.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import urlencode

import pytest

from dagmath_viz.store.uploads import SWEEP_ENV
from tests.app.browser import REPO_ROOT, dag_frame, hover_node, node_points, wait_for_app
from tests.test_hardening import (
    ABSOLUTE_MEMBER,
    BAD,
    HOSTILE_BROKEN_FILE,
    HOSTILE_DATASET_DIR,
    HOSTILE_FILE,
    HOSTILE_MODEL_DIR,
    PWN,
    build_bad_corpus,
    declared_bomb,
)

pytestmark = pytest.mark.browser

HOSTILE_MODEL = f"m<script>{PWN}</script>"
HOSTILE_DATASET = f'd<img src=x onerror="{PWN}">'
INJECTED_JS = """() => [...document.querySelectorAll(
    'img[src="x"], a[href^="javascript"], script:not([src]), svg[onload], [onerror]')]
  .filter(e => (e.outerHTML || '').includes('pwned')).length"""
JAVASCRIPT_LINKS_JS = """() => [...document.querySelectorAll('a[href]')]
  .filter(a => a.getAttribute('href').trim().toLowerCase().startsWith('javascript')).length"""


@pytest.fixture(scope="module")
def bad_server(streamlit_server, tmp_path_factory):
    """The app on the bad corpus; its TMPDIR (where uploads land) is a folder we watch."""
    base = tmp_path_factory.mktemp("browser-bad")
    corpus = build_bad_corpus(base)
    for stall in ("27_power_tower.json", "29_huge_factorial.json"):
        corpus.path(stall).unlink()
    server_tmp = base / "server-tmp"
    server_tmp.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TMPDIR", str(server_tmp))
        url = streamlit_server(REPO_ROOT / "app.py", "--data", str(corpus.root))
    return url, corpus, server_tmp


def _open(page, url: str) -> None:
    page.goto(url)
    wait_for_app(page)
    assert page.locator("[data-testid=stException]").count() == 0, url
    assert "Traceback" not in page.inner_text("body"), url


def _assert_nothing_ran(page, where: str) -> None:
    assert page.evaluate("() => window.__pwned") is None, where
    assert page.evaluate(INJECTED_JS) == 0, where
    assert page.evaluate(JAVASCRIPT_LINKS_JS) == 0, where


def _clean_console(page_events) -> None:
    # Streamlit probes /<page>/_stcore/... before falling back to /_stcore/...; those 404s
    # are its own and harmless, every other console error counts.
    page_events.console_errors = [
        e for e in page_events.console_errors if "404" not in e or "_stcore" not in e
    ]
    page_events.assert_clean()


def _trajectory_url(url: str, model: str, dataset: str, problem: str, sample: str = "0") -> str:
    query = {"model": model, "dataset": dataset, "problem": problem, "sample": sample}
    return f"{url}/trajectory?{urlencode(query)}"


def _check_dag(page, expect_nodes: int, hostile: str) -> None:
    frame = dag_frame(page)
    assert frame.evaluate("() => nodes.get().length") == expect_nodes
    titles = frame.evaluate("() => nodes.get().map(n => n.title).join('\\n')")
    assert hostile in titles  # the markup travels as text
    page.locator("iframe[data-testid=stIFrame]").scroll_into_view_if_needed()
    for point in list(node_points(page, frame).values())[:1]:
        hover_node(page, frame, point, expect="Step")  # asserts the tooltip holds no elements
    assert frame.evaluate("() => window.__pwned") is None
    assert frame.evaluate("() => document.querySelectorAll('img, a, iframe').length") == 0


def _pages(url: str) -> list[str]:
    """Every page; the trajectory and compare pages opened on hostile names."""
    return [
        url,
        _trajectory_url(url, "bad", "bad", "46"),  # from the file with the hostile name
        f"{url}/compare?{urlencode({'models': ['gold', HOSTILE_MODEL]}, doseq=True)}",
        f"{url}/distributions",
        f"{url}/dead_ends",
        f"{url}/efficiency",
    ]


def test_every_page_over_the_bad_corpus(app_page, page_events, bad_server):
    url, _, _ = bad_server
    for address in _pages(url):
        _open(app_page, address)
        assert app_page.locator("h1").count() >= 1, address
        panel = app_page.get_by_text("load or scoring problems")
        assert panel.count() == 1, address  # the problems panel is on every page
        _assert_nothing_ran(app_page, address)
        body = app_page.inner_text("[data-testid=stMain]")
        if "/trajectory?" in address:  # the file name is in the caption, as text
            assert f"{HOSTILE_FILE}:item 1" in body
            _check_dag(app_page, 4, "xy = 6")
        if "/compare?" in address:  # the two hostile-named models share a hostile dataset
            assert HOSTILE_DATASET in body
    _clean_console(page_events)


HOSTILE_TRAJECTORIES = [
    # (model, dataset, problem, nodes, hostile text expected in the node titles)
    pytest.param(HOSTILE_MODEL, HOSTILE_DATASET, f'33<img src=x onerror="{PWN}">', 4,
                 f"<script>{PWN}</script>", id="model-output-fields"),
    pytest.param("gold", HOSTILE_DATASET, f"33g[click](javascript:{PWN}) ![i](x)", 2,
                 f'<a href="javascript:{PWN}">href</a>', id="gold-fields"),
    pytest.param(HOSTILE_MODEL, HOSTILE_DATASET, "33i", 3, "Step [s](javascript:",
                 id="markup-step-id"),
    pytest.param(HOSTILE_MODEL_DIR, HOSTILE_DATASET_DIR, "48", 4, "xy = 6",
                 id="folder-names"),
]  # fmt: skip


@pytest.mark.parametrize(("model", "dataset", "problem", "n", "hostile"), HOSTILE_TRAJECTORIES)
def test_hostile_trajectories_show_as_text(
    app_page, page_events, bad_server, model, dataset, problem, n, hostile
):
    url, _, _ = bad_server
    # the corpus's gold record is sample 1: a link to sample 0 is (rightly) refused now
    sample = "1" if model == "gold" else "0"
    _open(app_page, _trajectory_url(url, model, dataset, problem, sample))
    _check_dag(app_page, n, hostile)
    _assert_nothing_ran(app_page, problem)
    _clean_console(page_events)


def _upload_tree(server_tmp: Path) -> list[str]:
    return sorted(
        p.relative_to(server_tmp).as_posix()
        for p in server_tmp.rglob("*")
        if p.is_file() or p.is_symlink()
    )


def test_bad_uploads_are_refused_and_named(app_page, page_events, bad_server, tmp_path):
    url, _, server_tmp = bad_server
    before = _upload_tree(server_tmp)
    _open(app_page, url)
    app_page.get_by_text("Uploaded files", exact=True).click()
    wait_for_app(app_page)
    good = (BAD / "00_good.json").read_bytes()
    files = [
        ("30_zip_traversal.zip", (BAD / "30_zip_traversal.zip").read_bytes()),
        ("31_zip_bomb.zip", declared_bomb()),
        ("00_good.json", good),
        (HOSTILE_FILE, json.dumps([{**json.loads(good)[0], "problem_id": "46"}]).encode()),
        (HOSTILE_BROKEN_FILE, b'[{"problem_id": "47", "steps": ['),
    ]
    app_page.locator("[data-testid=stFileUploaderDropzoneInput]").set_input_files(
        [{"name": n, "mimeType": "application/octet-stream", "buffer": b} for n, b in files]
    )
    app_page.get_by_text("load or scoring problems").wait_for()
    wait_for_app(app_page)
    assert app_page.locator("[data-testid=stException]").count() == 0
    sidebar = app_page.inner_text("[data-testid=stSidebar]")
    # 00_good.json (2), the zip's good member (1), the hostile-named file (1)
    assert "4 trajectories from 4 files" in sidebar, sidebar
    # the panel lists every refusal by file: download it as the user would
    app_page.get_by_text("load or scoring problems").click()
    wait_for_app(app_page)  # a click while the page still draws can hit a replaced button
    button = app_page.get_by_text("Download the problems (CSV)")
    button.wait_for(state="visible")
    with app_page.expect_download() as download:
        button.click()
    table = Path(download.value.path()).read_text()
    for fragment in (
        "30_zip_traversal.zip,member '../30_escaped.json',error,refused",
        "30_zip_traversal.zip,member 'run/../../30_escaped_nested.json',error,refused",
        "30_zip_traversal.zip,member '/tmp/dagmath-hardening-30_absolute.json',error,refused",
        "31_zip_bomb.zip,file,error,would inflate to 4026531840 bytes",
        f"{HOSTILE_BROKEN_FILE},file,error,line 1, column 33: invalid JSON",
    ):
        assert fragment in table.replace('"', ""), (fragment, table)
    _assert_nothing_ran(app_page, "uploads")
    # nothing landed outside the upload folder, and nothing escaped it
    after = [p for p in _upload_tree(server_tmp) if p not in before]
    assert after and all(p.startswith("dagmath-viz-uploads-") for p in after), after
    assert not [p for p in after if "30_escaped" in p or "bomb" in p]
    assert not ABSOLUTE_MEMBER.exists()
    assert not list(server_tmp.parent.rglob("30_escaped*"))
    assert not os.path.exists(server_tmp.parent / "30_escaped.json")
    _clean_console(page_events)


# --------------------------------------------------------------------------- quadratic memory

STAR_STEPS = 12_000
MAX_SERVER_RSS_BYTES = 1.5 * 1024**3


def _star_trajectory_file(folder: Path) -> Path:
    """The red team's reproduction: one trajectory of 12,000 steps, all citing step 1."""
    steps = [{"step_id": 1, "text": "Let $a = 1$.", "direct_dependent_steps": None}]
    steps += [
        {"step_id": i, "text": f"Step {i}: $a_{{{i}}} = a$.", "direct_dependent_steps": [1]}
        for i in range(2, STAR_STEPS + 1)
    ]
    steps[-1]["text"] = r"The final answer is $\boxed{1}$."
    path = folder / "star" / "m" / "d" / "problem_1_all_samples.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps([{"problem_id": 1, "sample_id": 0, "steps": steps}]))
    return path.parents[2]


def _peak_rss(pid: int) -> int:
    """The process's high-water resident size (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc status")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_dead_ends_of_a_12000_step_trajectory_stay_within_memory(app_page, tmp_path):
    """Before: 72 MB -> 3.55 GB for this one file. The server's peak must stay under 1.5 GB."""
    from tests.app.browser import StreamlitServer

    server = StreamlitServer(REPO_ROOT / "app.py", ("--data", str(_star_trajectory_file(tmp_path))))
    try:
        app_page.set_default_timeout(120_000)
        app_page.goto(server.url + "/dead_ends")
        # the first run reruns once to set up navigation: wait for the page's own last line
        app_page.get_by_text("dead ends match").wait_for(timeout=300_000)
        wait_for_app(app_page, timeout_ms=120_000)
        body = app_page.inner_text("body")
        assert "Traceback" not in body
        assert app_page.locator("[data-testid=stException]").count() == 0
        assert f"{STAR_STEPS - 2:,} dead ends match" in body  # every step but 1 and the last
        assert "more than 20,000 steps are left out" in body  # the page states its cap
        peak = _peak_rss(server.proc.pid)
        print(f"server VmHWM on Dead ends of {STAR_STEPS:,} steps: {peak / 2**20:.0f} MB")
        assert peak < MAX_SERVER_RSS_BYTES
    finally:
        server.stop()


# --------------------------------------------------------------------------- upload lifetime


def test_a_closed_tabs_uploads_are_deleted_and_sessions_share_nothing(
    chromium_browser, tmp_path, monkeypatch
):
    """Two tabs upload the same zip (one member refused): each keeps its own copy and its own
    warning. Closing a tab deletes its copy (a background sweep asks the runtime, every
    minute by default: here every second, so the test does not wait out a minute); the
    other tab's copy stays. The folder is private (0700) and fresh."""
    import stat
    import time

    from tests.app.browser import StreamlitServer

    server_tmp = tmp_path / "server-tmp"
    server_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(server_tmp))
    monkeypatch.setenv(SWEEP_ENV, "1")
    zipped = (BAD / "30_zip_traversal.zip").read_bytes()
    server = StreamlitServer(REPO_ROOT / "app.py")
    contexts, counts = [], []
    try:
        for _ in range(2):
            context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
            contexts.append(context)
            page = context.new_page()
            page.set_default_timeout(120_000)
            _open(page, server.url)
            page.get_by_text("Uploaded files", exact=True).click()
            wait_for_app(page)
            page.locator("[data-testid=stFileUploaderDropzoneInput]").set_input_files(
                [{"name": "t.zip", "mimeType": "application/zip", "buffer": zipped}]
            )
            page.get_by_text("load or scoring problems").wait_for()
            wait_for_app(page)
            label = page.get_by_text("load or scoring problems").first.inner_text()
            counts.append(int(label.split("load or scoring")[0].split()[-1].replace(",", "")))
        # the zip's three escaping members are refused and named in both tabs
        assert counts[0] == counts[1] >= 3, counts
        (root,) = [p for p in server_tmp.iterdir() if p.name.startswith("dagmath-viz-uploads-")]
        assert stat.S_IMODE(root.stat().st_mode) == 0o700
        sessions = sorted(p for p in root.iterdir() if p.is_dir())
        assert len(sessions) == 2  # one copy per tab
        contexts.pop(0).close()  # close the first tab
        for _ in range(120):  # a hang guard: the sweep runs every second
            left = sorted(p for p in root.iterdir() if p.is_dir())
            if len(left) == 1:
                break
            time.sleep(0.5)
        assert len(left) == 1 and any(left[0].rglob("*.json"))  # the open tab's copy stays
    finally:
        for context in contexts:
            context.close()
        server.stop()
