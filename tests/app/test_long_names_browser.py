"""Long model names read whole at 1280x800 (sidebar open): the Trajectory page's Model box
shows a 40-character Hugging Face id (deepseek-ai/DeepSeek-R1-Distill-Qwen-14B) and a
Thought Anchors dataset name uncut, and the model chips of Trajectories, Dead ends and
Distributions wrap instead of cutting a chosen name (inside columns Streamlit scrolls a
multiselect's chips on one line, and the name was cut to "deepseek-a…").

Measured in Chromium: a box's text is cut when its input (or a chip's text) is wider than
the room it is given (``scrollWidth > clientWidth``). Screenshots go to
``artifacts/screenshots/long-names-*.png``."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.app.browser import REPO_ROOT, save_screenshot, wait_for_app

MODELS = ("deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B")


@pytest.fixture(scope="module")
def long_names(tmp_path_factory) -> Path:
    """Two models with Hugging Face ids (40 characters each) on dataset thought-anchors."""
    root = tmp_path_factory.mktemp("long-names")
    for i, model in enumerate(MODELS):
        folder = root / f"m{i}" / "thought-anchors"
        folder.mkdir(parents=True)
        steps = [  # S2 is a dead end (nothing cites it), for the Dead ends page
            {"step_id": 1, "direct_dependent_steps": None, "text": "Let $x = 2$."},
            {"step_id": 2, "direct_dependent_steps": [1], "text": "An aside."},
            {"step_id": 3, "direct_dependent_steps": [1], "text": "**Final Answer** $4$"},
        ]
        for pid in (2189, 12345):
            sample = {"problem_id": pid, "sample_id": 123, "steps": steps,
                      "metadata": {"model": model}}  # fmt: skip
            (folder / f"problem_{pid}_all_samples.json").write_text(json.dumps([sample]))
    return root


CUT_INPUTS = """() => [...document.querySelectorAll('[data-testid=stSelectbox] input')]
    .filter((i) => i.scrollWidth > i.clientWidth)
    .map((i) => [i.getAttribute('aria-label'), i.value, i.scrollWidth, i.clientWidth])"""
# A chip is cut when its text overflows it (an ellipsis) or when it reaches past the box
# that shows the chips (one line, scrolled); "+ 1" forgives sub-pixel rounding.
CUT_CHIPS = """() => [...document.querySelectorAll('[data-testid=stMultiSelect] [data-tag]')]
    .filter((chip) => {
        const text = chip.querySelector('span[title]');
        const box = chip.closest('[data-testid=stMultiSelectTagsContainer]')
            .getBoundingClientRect();
        const r = chip.getBoundingClientRect();
        return text.scrollWidth > text.clientWidth || r.right > box.right + 1
            || r.left < box.left - 1;
    })
    .map((chip) => chip.getAttribute('aria-label'))"""


def _open(page, url: str) -> None:
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(url)
    wait_for_app(page, 120_000)


def test_the_trajectory_page_shows_a_hugging_face_id_whole(app_page, streamlit_server, long_names):
    url = streamlit_server(REPO_ROOT / "app.py", "--data", str(long_names))
    query = f"model={quote(MODELS[0], safe='')}&dataset=thought-anchors&problem=12345&sample=123"
    _open(app_page, f"{url}/trajectory?{query}")
    app_page.get_by_text("Model", exact=True).first.wait_for()
    values = app_page.evaluate(
        "() => [...document.querySelectorAll('[data-testid=stSelectbox] input')]"
        ".map((i) => i.value)"
    )
    assert values[:4] == [MODELS[0], "thought-anchors", "12345", "123"]
    save_screenshot(app_page, "long-names-trajectory", full_page=False)
    assert app_page.evaluate(CUT_INPUTS) == []


@pytest.mark.parametrize(
    ("page", "query"),
    [
        ("trajectories", "&".join(f"m={quote(m, safe='')}" for m in MODELS)),
        ("distributions", ""),
    ],
)
def test_chosen_model_chips_are_never_cut(app_page, streamlit_server, long_names, page, query):
    url = streamlit_server(REPO_ROOT / "app.py", "--data", str(long_names))
    _open(app_page, f"{url}/{page}?{query}")
    chips = app_page.locator("[data-testid=stMultiSelect] [data-tag]")
    chips.first.wait_for()
    assert chips.count() >= 2
    save_screenshot(app_page, f"long-names-{page}", full_page=False)
    assert app_page.evaluate(CUT_CHIPS) == []


def test_dead_ends_model_chips_are_never_cut(app_page, streamlit_server, long_names):
    url = streamlit_server(REPO_ROOT / "app.py", "--data", str(long_names))
    _open(app_page, f"{url}/dead_ends")
    box = app_page.locator("[data-testid=stMultiSelect]").filter(has_text="Model").first
    box.scroll_into_view_if_needed()
    for model in MODELS:
        box.locator("input").fill(model)
        box.locator("input").press("Enter")
        wait_for_app(app_page, 120_000)
    app_page.mouse.click(340, 40)  # outside every box: the option list closes
    app_page.get_by_role("listbox").wait_for(state="hidden")
    # both chosen: each model's two dead ends (S2 of problems 2189 and 12345) are listed
    app_page.get_by_text("4 dead ends match", exact=True).wait_for()
    save_screenshot(app_page, "long-names-dead-ends", full_page=False)
    chips = app_page.locator("[data-testid=stMultiSelect] [data-tag]")
    assert chips.count() == 2
    assert app_page.evaluate(CUT_CHIPS) == []
