"""The uploads' field map in the real app: 20 files uploaded, a map typed beside the
uploader naming a column 18 of them lack. One warning says so, under the map (the sidebar)
and as one row of the load problems, where there was one per file."""

from __future__ import annotations

import json

import pytest

from tests.app.browser import save_screenshot, wait_for_app

pytestmark = pytest.mark.browser

MAP_INPUT = "input[aria-label='Field map (optional)']"
WARNING = (
    "--map problem_text=question: no record has the field 'question' in 18 of the 20 files "
    "read (f03.json, f04.json, f05.json and 15 more); problem_text read as if unmapped in those"
)


def _uploads() -> list[dict]:
    out = []
    for k in range(1, 21):
        record = {
            "problem_id": f"p{k}",
            "answer": "2",
            "steps": [{"step_id": 1, "text": "\\boxed{2}"}],
        }
        if k <= 2:
            record["question"] = f"What is {k} + 1?"
        data = json.dumps([record]).encode()
        out.append({"name": f"f{k:02}.json", "mimeType": "application/json", "buffer": data})
    return out


def test_a_column_most_uploads_lack_is_one_warning_under_the_map(app_page, app_url):
    app_page.goto(app_url)
    wait_for_app(app_page, 60_000)
    app_page.get_by_text("Uploaded files", exact=True).click()
    wait_for_app(app_page, 60_000)
    app_page.locator("[data-testid=stFileUploaderDropzoneInput]").set_input_files(_uploads())
    app_page.locator(MAP_INPUT).wait_for()
    wait_for_app(app_page, 60_000)
    app_page.locator(MAP_INPUT).fill("problem_text=question")
    app_page.locator(MAP_INPUT).press("Enter")
    sidebar = app_page.locator("[data-testid=stSidebar]")
    sidebar.get_by_text("no record has the field 'question'").wait_for(timeout=60_000)
    wait_for_app(app_page, 60_000)
    alerts = sidebar.locator("[data-testid=stAlert]").all_inner_texts()
    assert [" ".join(a.split()) for a in alerts] == [WARNING], alerts
    label = app_page.get_by_text("load or scoring problems").first.inner_text()
    assert " 1 load or scoring problems" in label, label  # one row, not 18
    sidebar.locator(MAP_INPUT).scroll_into_view_if_needed()
    save_screenshot(app_page, "field_map_upload", full_page=False)
