"""No request leaves 127.0.0.1 from any page, whatever the models, datasets and steps say.

Plotly renders a subset of HTML in names (``<span style>`` included), so a CSS ``url(…)``
in a model name used to be fetched from the browser (issue 16, item 1). Here every name,
problem text, step text and thinking carries a beacon on 127.0.0.2, and every request
Chromium makes on every page, after charts are drawn and hovered, is recorded.
"""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path

import pytest

from tests.app.browser import REPO_ROOT, save_screenshot, wait_for_app

pytestmark = pytest.mark.browser

PAGES = ["", "trajectories", "trajectory", "compare", "distributions", "dead_ends", "efficiency"]
BEACON_HOST = "127.0.0.2"


def _beacon(tag: str) -> str:
    return f'm<span style="background:url(http://{BEACON_HOST}:9/{tag}.png)">x</span>'


def _img(tag: str) -> str:
    return f'<img src="http://{BEACON_HOST}:9/{tag}.png"> ![i](http://{BEACON_HOST}:9/{tag}-md.png)'


@pytest.fixture(scope="module")
def beacon_run(tmp_path_factory) -> Path:
    """Two models with beacon names, each with two trajectories of one problem.

    Steps: 1 and 2 givens, 3 <- 1, 4 <- 1 (a dead end), 5 <- 2, 3 (final, answer 7).
    """
    root = tmp_path_factory.mktemp("beacon")
    parents = [None, None, [1], [1], [2, 3]]
    for m in range(2):
        model = _beacon(f"model{m}")
        folder = root / f"model{m}" / "data"
        folder.mkdir(parents=True)
        samples = []
        for s in range(2):
            steps = [
                {"step_id": i + 1, "direct_dependent_steps": p,
                 "thinking": _img(f"think{m}{s}{i}") + _beacon(f"thinkspan{m}{s}{i}"),
                 "text": _img(f"text{m}{s}{i}") + _beacon(f"textspan{m}{s}{i}")}
                for i, p in enumerate(parents)
            ]  # fmt: skip
            steps[-1]["text"] += r" The final answer is $\boxed{7}$."
            samples.append(
                {
                    "problem_id": 1, "sample_id": s, "problem_text": _img("problem"),
                    "steps": steps, "metadata": {"model": model},
                    "dataset": _beacon("dataset"), "answer": "7" if s == 0 else "8",
                }
            )  # fmt: skip
        (folder / "problem_1_all_samples.json").write_text(json.dumps(samples))
    return root


def test_no_page_requests_anything_outside_localhost(
    app_page, page_events, beacon_run, streamlit_server
):
    url = streamlit_server(REPO_ROOT / "app.py", "--data", str(beacon_run))
    for name in PAGES:
        app_page.goto(f"{url}/{name}")
        wait_for_app(app_page)
        # open the charts a page folds (the Overview's below its first screen), one by one
        for _ in range(app_page.locator("[data-testid=stExpander] summary").count()):
            folded = app_page.locator("[data-testid=stExpander] summary", has_text="Chart:")
            closed = [s for s in folded.all() if not s.evaluate("e => e.closest('details').open")]
            if not closed:
                break
            closed[0].click()
            wait_for_app(app_page)
        app_page.wait_for_timeout(1500)  # charts draw after the script finishes
        # hover every chart so that hover labels (which render markup too) are drawn
        for chart in app_page.locator(".js-plotly-plot .nsewdrag").all():
            box = chart.bounding_box()
            if box:
                for fx in (0.1, 0.3, 0.5, 0.7, 0.9):
                    app_page.mouse.move(box["x"] + box["width"] * fx, box["y"] + box["height"] / 2)
                    app_page.wait_for_timeout(50)
        assert app_page.locator("[data-testid=stException]").count() == 0, name
        save_screenshot(app_page, f"beacon_{name or 'overview'}")
    beacons = [u for u in page_events.requests if BEACON_HOST in u]
    assert not beacons, f"requests to the beacon host: {beacons}"
    assert not page_events.non_local_requests(), page_events.non_local_requests()
    assert page_events.requests, "no request was recorded at all: the listener is not working"


# --------------------------------------------------------------------------- Efficiency page

PWN = "window.top.__pwned=1;parent.__pwned=1"
INJECTED_JS = """() => [...document.querySelectorAll(
    'img[src="x"], a[href^="javascript"], script:not([src]), svg[onload], [onerror]')]
  .filter(e => (e.outerHTML || '').includes('pwned')).length"""


class _Beacon(http.server.BaseHTTPRequestHandler):
    """A listener on 127.0.0.1 that only counts what reaches it (a CSS ``url()`` or an
    ``<img>`` pointing at the local machine is no outside host, so the listener is the
    witness: Chromium would fetch it)."""

    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the handler's name
        self.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def _hostile(tag: str, port: int) -> str:
    """Markup of every kind a name may hold: a CSS url() to the local listener and to the
    outside beacon, an image, a link, a script and an event handler."""
    return (
        f'{tag}<span style="background:url(http://127.0.0.1:{port}/{tag}-css.png)">'
        f'<b>x</b></span><img src="http://127.0.0.1:{port}/{tag}-img.png">'
        f'<a href="http://{BEACON_HOST}:9/{tag}-a">a</a>'
        f'<span style="background:url(http://{BEACON_HOST}:9/{tag}.png)">y</span>'
        f'<script>{PWN}</script><img src=x onerror="{PWN}">'
    )


def _efficiency_uploads(port: int) -> list[tuple[str, bytes]]:
    """The bundled gsm problems and proofs with hostile overlap (the legend), strategy (the
    axis and the select box), problem text, and a scored file with a hostile model name."""
    gsm = REPO_ROOT / "sample_data" / "gsm"
    problems = [json.loads(x) for x in (gsm / "problems.jsonl").read_text().splitlines()]
    proofs = [json.loads(x) for x in (gsm / "proofs.jsonl").read_text().splitlines()]
    overlap = _hostile("overlap", port)
    for record in (*problems, *proofs):
        record["overlap"] = overlap
        record["problem_text"] = _hostile("problem", port) + str(record.get("problem_text"))
    for proof in proofs:
        proof["strategy"] = _hostile("strategy", port) + proof["strategy"]
    scored = [
        {"model": _hostile("model", port), "problem_id": p["problem_id"], "correct": True,
         "efficiency": 0.5, "efficiency_non_axiom": 0.5, "recall": 1.0, "exact_match": False}
        for p in problems[:3]
    ]  # fmt: skip

    def lines(records: list[dict]) -> bytes:
        return "".join(json.dumps(r) + "\n" for r in records).encode()

    return [
        ("problems.jsonl", lines(problems)),
        ("proofs.jsonl", lines(proofs)),
        ("scored.jsonl", lines(scored)),
    ]


@pytest.fixture
def beacon_listener():
    _Beacon.hits = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Beacon)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], _Beacon.hits
    finally:
        server.shutdown()
        server.server_close()


def test_efficiency_page_with_hostile_names_requests_nothing_and_runs_nothing(
    app_page, page_events, beacon_listener, streamlit_server
):
    port, hits = beacon_listener
    url = streamlit_server(REPO_ROOT / "app.py")
    app_page.goto(f"{url}/efficiency")
    wait_for_app(app_page)
    app_page.get_by_text("Use your own problems and proofs").click()
    wait_for_app(app_page)
    inputs = app_page.locator("[data-testid=stFileUploaderDropzoneInput]")
    for i, (name, data) in enumerate(_efficiency_uploads(port)):
        inputs.nth(i).set_input_files(
            [{"name": name, "mimeType": "application/octet-stream", "buffer": data}]
        )
        wait_for_app(app_page)
    app_page.get_by_text("Records: uploaded").wait_for()
    app_page.wait_for_timeout(1500)  # charts draw after the script finishes
    for chart in app_page.locator(".js-plotly-plot .nsewdrag").all():
        box = chart.bounding_box()
        if box:  # hover labels render markup too
            for fx in (0.1, 0.3, 0.5, 0.7, 0.9):
                app_page.mouse.move(box["x"] + box["width"] * fx, box["y"] + box["height"] / 2)
                app_page.wait_for_timeout(50)
    assert hits == [], f"the page fetched from the local listener: {hits}"
    beacons = [u for u in page_events.requests if BEACON_HOST in u or f":{port}/" in u]
    assert not beacons, f"requests to the beacons: {beacons}"
    assert app_page.locator("[data-testid=stException]").count() == 0
    body = app_page.inner_text("body")
    assert "Traceback" not in body and "Could not read" not in body
    # the markup is shown as the characters typed: in the legend, the axis and the tables
    legend = app_page.locator(".js-plotly-plot .legend").first.text_content() or ""
    assert "overlap<span style=" in legend, legend  # SVG text: the characters as typed
    axis = app_page.locator(".js-plotly-plot .xaxislayer-above").first.text_content() or ""
    assert "strategy<span style=" in axis, axis
    save_screenshot(app_page, "beacon_efficiency_hostile")
    assert app_page.evaluate("() => window.__pwned") is None
    assert app_page.evaluate(INJECTED_JS) == 0
    for frame in app_page.frames:  # the proof graph's iframe too
        assert frame.evaluate("() => window.__pwned") is None
    styled = """() => [...document.querySelectorAll('[style]')]
        .filter(e => e.getAttribute('style').includes('url(')).length"""
    assert app_page.evaluate(styled) == 0
    assert not page_events.non_local_requests(), page_events.non_local_requests()
    assert page_events.requests, "no request was recorded at all: the listener is not working"
