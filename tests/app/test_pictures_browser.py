"""The Trajectory page's "Graph as SVG", "Graph as PNG" and "Download as HTML" buttons, in a
real browser: the files downloaded are the graph of the trajectory shown (every step a box),
the PNG at twice the SVG's size (README "Pictures"), and the page naming its source from the
data folder down."""

from __future__ import annotations

import io
import json
import re

import pytest
from PIL import Image

from dagmath_viz.draw.pictures import PNG_SCALE, find_chromium
from tests.app.browser import REPO_ROOT, dag_frame, save_screenshot, wait_for_app

pytestmark = pytest.mark.browser

RUN = REPO_ROOT / "sample_data" / "runs" / "gsm-bfs"
PROBLEM = RUN / "gsm-logic" / "problem_10_all_samples.json"


def _download(page, label: str) -> bytes:
    button = page.get_by_role("button", name=label)
    button.scroll_into_view_if_needed()
    with page.expect_download(timeout=120_000) as download:
        button.click()
    return download.value.path().read_bytes()


def test_the_trajectory_page_downloads_the_graph_and_the_page(
    app_page, page_events, streamlit_server
):
    if find_chromium() is None:
        pytest.skip("no Chromium on PATH: the PNG button is disabled")
    steps = json.loads(PROBLEM.read_text(encoding="utf-8"))[0]["steps"]
    url = streamlit_server(REPO_ROOT / "app.py", "--data", str(RUN))
    page = app_page
    page.goto(f"{url}/trajectory?model=gsm-bfs&dataset=gsm-logic&problem=10&sample=0")
    wait_for_app(page)
    dag_frame(page)
    page.get_by_role("button", name="Graph as SVG").scroll_into_view_if_needed()
    save_screenshot(page, "trajectory-picture-buttons", full_page=False)

    svg = _download(page, "Graph as SVG").decode("utf-8")
    assert svg.startswith("<svg") and svg.count('class="dm-node') == len(steps) == 9
    labels = re.findall(r">(S\d+)</(?:text|tspan)>", svg)  # each box's label
    assert sorted(labels, key=lambda s: int(s[1:])) == [f"S{s['step_id']}" for s in steps]
    head = svg[: svg.index(">")]
    size = {k: float(re.search(f' {k}="([0-9.]+)"', head).group(1)) for k in ("width", "height")}

    png = _download(page, "Graph as PNG")
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    assert image.size == (round(size["width"] * PNG_SCALE), round(size["height"] * PNG_SCALE))
    # not a blank page: the boxes' colours are in it
    assert len(image.convert("RGB").getcolors(maxcolors=1 << 20) or ()) > 50
    # the page as one file: its source from the data folder down, no path of this machine
    html = _download(page, "Download as HTML (one offline file)").decode("utf-8")
    assert "<code>gsm-bfs/gsm-logic/problem_10_all_samples.json:item 1</code>" in html
    assert str(REPO_ROOT) not in html and "data-nodes=&quot;9&quot;" in html
    page_events.console_errors[:] = [
        e for e in page_events.console_errors if "404" not in e or "_stcore" not in e
    ]
    page_events.assert_clean()
