"""``dagmath app --data A --data B`` shows the models of both (issue 34 item 8), in Chromium.

The server is started as ``dagmath app`` starts it (``serve.py -- --data A --data B``; that
the CLI passes every ``--data`` on is tests/app/test_serve.py's), on two real sources of
different layouts: ``../shared/data/thought-anchors`` (the model is the folder above each
solution) and ``../shared/data/dagmath-fewshot`` (the model is ``metadata.model`` in
``fewshot_solutions.json``). The expected models are read from those files with ``json``.
Skipped without ``../shared``, failing with ``DAGMATH_REQUIRE_SHARED=1``.
"""

from __future__ import annotations

import json

import pytest

from tests import thought_anchors
from tests.app.browser import save_screenshot, server_script, wait_for_app

pytestmark = pytest.mark.browser


def test_two_data_sources_show_the_models_of_both(chromium_browser, page_events,
                                                   streamlit_server, shared_data):  # fmt: skip
    ta = thought_anchors.ROOT.resolve()
    if not ta.is_dir():
        pytest.skip(f"thought-anchors data not found at {ta}")
    ta_models = {f.parents[2].name for f in thought_anchors.files()}
    records = json.loads((shared_data / "fewshot_solutions.json").read_text(encoding="utf-8"))
    fewshot_models = {r["metadata"]["model"] for r in records}
    assert ta_models and fewshot_models and not ta_models & fewshot_models
    url = streamlit_server(server_script(), "--data", str(ta), "--data", str(shared_data))
    context = chromium_browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(60_000)
    page_events.attach(page)
    try:
        page.goto(f"{url}/trajectory")
        wait_for_app(page, 120_000)
        # the source is named by both folders
        sidebar = page.locator("[data-testid=stSidebar]").inner_text()
        assert f"{ta.name} + {shared_data.name} (--data)" in sidebar
        page.locator("[data-testid=stSelectbox]").filter(has_text="Model").click()
        options = {o.inner_text().strip() for o in page.get_by_role("option").all()}
        assert ta_models | fewshot_models <= options, options
        save_screenshot(page, "two_sources_models", full_page=False)
        page.keyboard.press("Escape")
        assert not page_events.page_errors and not page_events.non_local_requests()
    finally:
        context.close()
