"""The real app in headless Chromium: every page, the DAG's contents, hostile text, offline.

Screenshots of every page land in artifacts/screenshots/ (gitignored). The README's picture is
refreshed only on request: ``python tests/app/refresh_readme_picture.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.app.browser import (
    REPO_ROOT,
    dag_frame,
    hover_node,
    node_points,
    save_screenshot,
    wait_for_app,
)

pytestmark = pytest.mark.browser

PAGES = ["", "trajectories", "trajectory", "compare", "distributions", "dead_ends", "efficiency"]
PWN = "window.top.__pwned=1;parent.__pwned=1;alert(1)"
HOSTILE = [
    f'<img src=x onerror="{PWN}">',
    f"<script>{PWN}</script>",
    f'<a href="javascript:{PWN}">href</a>',
    "costs $5 and $",
    f"[click](javascript:{PWN}) ![i](x)",
]
# An imperfect simulated trajectory with two dead ends.
README_QUERY = "?model=sim-focus-2.5-aversion-0.6&dataset=arith-word&problem=104&sample=1"


def _hostile(i: int) -> str:
    return " ".join(HOSTILE[i % len(HOSTILE) :] + HOSTILE[: i % len(HOSTILE)])


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory) -> Path:
    """One trajectory whose every text field is an injection attempt.

    Steps 1 and 2 are givens, 3 <- 1, 4 <- 1 (nothing cites it: the one dead end),
    5 <- 2, 3 (final). So 5 nodes, 1 dead end.
    """
    root = tmp_path_factory.mktemp("hostile")
    folder = root / "model" / "data"
    folder.mkdir(parents=True)
    parents = [None, None, [1], [1], [2, 3]]
    steps = [
        {"step_id": i + 1, "thinking": _hostile(i), "direct_dependent_steps": p,
         "text": _hostile(i + 1)}
        for i, p in enumerate(parents)
    ]  # fmt: skip
    steps[-1]["text"] += r" The final answer is $\boxed{" + HOSTILE[0] + "}$."
    sample = {
        "problem_id": f"p<b>1</b>{HOSTILE[0]}",
        "sample_id": 0,
        "problem_text": _hostile(3),
        "steps": steps,
        "final_answer": steps[-1]["text"],
        "metadata": {"model": f"m<script>{PWN}</script>"},
        "dataset": f"d<img src=x onerror={PWN}>",
        "answer": HOSTILE[1],
    }
    (folder / "problem_1_all_samples.json").write_text(json.dumps([sample]))
    return root


def _open(page, url: str):
    page.goto(url)
    wait_for_app(page)


def _count(frame, kind: str) -> int:
    return frame.evaluate(f"() => nodes.get().filter(n => n.kind === '{kind}').length")


def test_every_page_renders_clean(app_page, page_events, app_url):
    for name in PAGES:
        query = README_QUERY if name == "trajectory" else ""
        _open(app_page, f"{app_url}/{name}{query}")
        assert app_page.locator("[data-testid=stException]").count() == 0, name
        assert app_page.locator("h1").count() >= 1, name
        save_screenshot(app_page, f"page_{name or 'overview'}")
        if name == "trajectory":
            frame = dag_frame(app_page)
            assert frame.evaluate("() => nodes.get().length") > 0
            app_page.locator("iframe[data-testid=stIFrame]").scroll_into_view_if_needed()
            save_screenshot(app_page, "trajectory_view", full_page=False)
    # Streamlit probes /<page>/_stcore/... before falling back to /_stcore/...; those 404s
    # are its own and harmless, every other console error counts.
    page_events.console_errors = [
        e for e in page_events.console_errors if "404" not in e or "_stcore" not in e
    ]
    page_events.assert_clean()


def test_trajectory_dag_matches_the_engine(
    app_page, page_events, app_url, shared_data, streamlit_server
):
    # The real few-shot solutions: gold problem 4 has 38 steps and no dead end.
    url = streamlit_server(REPO_ROOT / "app.py", "--data", str(shared_data))
    _open(app_page, f"{url}/trajectory?model=gold&dataset=gold&problem=4&sample=0")
    frame = dag_frame(app_page)
    assert frame.evaluate("() => nodes.get().length") == 38
    assert _count(frame, "dead_end") == 0
    assert _count(frame, "final_correct") == 1
    # 1, 2 and 3 cite nothing in problem_4.json: three givens.
    assert _count(frame, "given") == 3


def test_hostile_text_never_runs(app_page, page_events, hostile_run, streamlit_server):
    url = streamlit_server(REPO_ROOT / "app.py", "--data", str(hostile_run))
    for name in PAGES:
        _open(app_page, f"{url}/{name}")
        if name == "trajectory":
            frame = dag_frame(app_page)
            assert frame.evaluate("() => nodes.get().length") == 5
            assert _count(frame, "dead_end") == 1
            app_page.locator("iframe[data-testid=stIFrame]").scroll_into_view_if_needed()
            for point in node_points(app_page, frame).values():
                text = hover_node(app_page, frame, point, expect="Step")
                assert "<" in text  # the markup shows as text
            save_screenshot(app_page, "hostile_trajectory")
            assert frame.evaluate("() => window.__pwned") is None
            assert frame.evaluate("() => document.querySelectorAll('img, a, iframe').length") == 0
        # Nothing injected into the page itself: no images or links from model text.
        assert app_page.evaluate("() => window.__pwned") is None
        injected = app_page.evaluate(
            """() => [...document.querySelectorAll(
                     'img[src="x"], a[href^="javascript"], script:not([src])')]
                   .filter(e => (e.outerHTML || '').includes('pwned')).length"""
        )
        assert injected == 0, name
    page_events.console_errors = [
        e for e in page_events.console_errors if "404" not in e or "_stcore" not in e
    ]
    page_events.assert_clean()


def _drawn_scale(frame) -> dict:
    """What the trajectory view in ``frame`` drew: node count, its stated zoom, and the zoom
    measured on screen (CSS px per layout px: the SVG's drawn width over its viewBox width,
    and a node box's drawn height over its height in the layout)."""
    return frame.evaluate(
        """() => {
            const root = document.getElementById('dm-root');
            const svg = document.querySelector('#dm-graph svg') || document.querySelector('svg');
            const rect = document.querySelector('#dm-graph .dm-node rect');
            const vb = svg.viewBox.baseVal;
            return {
                nodes: Number(root.dataset.nodes), scale: root.dataset.scale,
                layout: root.dataset.layout, viewHeight: vb.height,
                svgScale: svg.getBoundingClientRect().width / vb.width,
                nodeScale: rect.getBoundingClientRect().height / rect.height.baseVal.value,
            };
        }"""
    )


def test_compare_draws_every_graph_at_the_same_scale(app_page, page_events, app_url):
    # Bundled gsm-logic problem 26: gsm-dfs's one proof has 13 steps, gsm-overlap's 65
    # (sample_data/runs/gsm-*/gsm-logic/problem_26_all_samples.json). Fitted to the same
    # frame, the longer one would be drawn several times smaller.
    _open(
        app_page,
        f"{app_url}/compare?models=gsm-dfs&models=gsm-overlap&dataset=gsm-logic&problem=26",
    )
    assert app_page.locator("[data-testid=stException]").count() == 0
    # iframe 0 is the aligned steps; the two graphs follow
    views = [_drawn_scale(dag_frame(app_page, i)) for i in (1, 2)]
    save_screenshot(app_page, "compare_same_scale")
    assert sorted(v["nodes"] for v in views) == [13, 65]
    short, long = sorted(views, key=lambda v: v["nodes"])
    assert long["viewHeight"] > 1.5 * short["viewHeight"]  # a fit would scale them apart
    assert short["scale"] == long["scale"] == "1.000"  # Compare's one zoom: 100 %
    for v in views:  # ... and drawn at it, the SVG and a node box alike
        assert v["svgScale"] == pytest.approx(1.0, abs=0.01), v
        assert v["nodeScale"] == pytest.approx(1.0, abs=0.01), v
    page_events.console_errors = [
        e for e in page_events.console_errors if "404" not in e or "_stcore" not in e
    ]
    page_events.assert_clean()
