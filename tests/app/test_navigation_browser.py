"""Navigation in the real browser: boxes show what the page shows, a table row opens its
trajectory, a stale link says so. Screenshots land in artifacts/screenshots/nav_*.png."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.app.browser import save_screenshot, wait_for_app

pytestmark = pytest.mark.browser


def _open(page, url: str) -> None:
    page.goto(url)
    wait_for_app(page)


def _box(page, label: str):
    return page.locator("[data-testid=stSelectbox]").filter(has_text=label).first


def _shown(page, label: str) -> str:
    """The value a selectbox displays (its combobox input's value or its text)."""
    box = _box(page, label)
    inputs = box.locator("input")
    value = inputs.first.input_value() if inputs.count() else ""
    return value or box.inner_text().replace(label, "", 1).strip()


def _params(page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(page.url).query).items()}


def test_problem_box_follows_a_dataset_change(app_page, app_url):
    _open(app_page, f"{app_url}/trajectory?model=sim-focus-2.4&dataset=arith-word&problem=104")
    assert _shown(app_page, "Problem") == "104"
    _box(app_page, "Dataset").click()
    app_page.get_by_role("option", name="olympiad-lite").click()
    wait_for_app(app_page)
    app_page.wait_for_timeout(500)
    shown = _shown(app_page, "Problem")
    assert shown != "104"
    assert _params(app_page)["problem"] == shown  # the page shows the box's problem
    save_screenshot(app_page, "nav_dataset_changed")


def test_a_table_row_opens_its_trajectory(app_page, app_url):
    _open(app_page, f"{app_url}/trajectories")
    grid = app_page.locator("[data-testid=stDataFrame]").last  # after the problems panel
    grid.scroll_into_view_if_needed()
    save_screenshot(app_page, "nav_table", full_page=False)
    box = grid.bounding_box()
    assert box is not None
    # the first data row's selection cell: left edge, below the 35 px header
    app_page.mouse.click(box["x"] + 18, box["y"] + 35 + 17)
    app_page.wait_for_timeout(1000)
    save_screenshot(app_page, "nav_table_clicked", full_page=False)
    app_page.wait_for_function("() => location.pathname.endsWith('/trajectory')")
    wait_for_app(app_page)
    params = _params(app_page)
    assert {"model", "dataset", "problem", "sample"} <= params.keys()
    assert params["problem"] == _shown(app_page, "Problem")
    assert app_page.locator("iframe[data-testid=stIFrame]").count() >= 1
    save_screenshot(app_page, "nav_table_opened", full_page=False)


def test_a_stale_link_names_what_is_missing(app_page, app_url):
    _open(app_page, f"{app_url}/trajectory?model=sim-focus-2.4&dataset=arith-word&problem=999")
    alert = app_page.locator("[data-testid=stAlert]").filter(has_text="999")
    assert alert.count() == 1
    assert "does not exist" in alert.inner_text()
    assert app_page.locator("iframe[data-testid=stIFrame]").count() == 0
    assert _params(app_page)["problem"] == "999"  # the URL still names what was asked
    save_screenshot(app_page, "nav_stale_link", full_page=False)


def _click_first_row(page, grid) -> None:
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 18, box["y"] + 35 + 17)


def test_a_dead_end_row_opens_its_trajectory_at_that_step(app_page, app_url):
    _open(app_page, f"{app_url}/dead_ends")
    grid = app_page.locator("[data-testid=stDataFrame]").last  # the list of dead ends
    _click_first_row(app_page, grid)
    app_page.wait_for_function("() => location.pathname.endsWith('/trajectory')")
    wait_for_app(app_page)
    params = _params(app_page)
    assert {"model", "dataset", "problem", "sample", "step"} <= params.keys()
    assert params["problem"] == _shown(app_page, "Problem")
    assert app_page.locator("iframe[data-testid=stIFrame]").count() >= 1


def test_a_leaderboard_row_lists_its_trajectories(app_page, app_url):
    _open(app_page, app_url)
    grid = app_page.locator("[data-testid=stDataFrame]").nth(1)  # after the problems panel
    _click_first_row(app_page, grid)
    app_page.wait_for_function("() => location.pathname.endsWith('/trajectories')")
    wait_for_app(app_page)
    model_filter = app_page.locator("[data-testid=stMultiSelect]").filter(has_text="Model").first
    # the leaderboard's first row: the models' (the logic-program strategies are apart)
    assert "sim-focus-2.4" in model_filter.inner_text()
    assert "trajectories · click a row" in app_page.locator("body").inner_text()
    save_screenshot(app_page, "nav_leaderboard_to_table", full_page=False)


def test_an_outlier_point_opens_its_trajectory(app_page, app_url):
    _open(app_page, f"{app_url}/distributions")
    point = app_page.locator(".js-plotly-plot .boxlayer .points path.point").first
    try:
        point.wait_for(state="attached", timeout=60_000)
    finally:
        save_screenshot(app_page, "nav_distributions", full_page=False)
    point.scroll_into_view_if_needed()
    point.click(force=True)
    app_page.wait_for_function("() => location.pathname.endsWith('/trajectory')")
    wait_for_app(app_page)
    params = _params(app_page)
    assert {"model", "dataset", "problem", "sample"} <= params.keys()
    assert app_page.locator("iframe[data-testid=stIFrame]").count() >= 1
