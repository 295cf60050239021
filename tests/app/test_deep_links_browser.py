"""A first visit straight to a page's address, on a server no browser has visited yet.

Streamlit 1.67 reads a ``pages/`` folder beside app.py as its legacy multipage mode until
``st.navigation`` first runs in the process. A first visit to ``/trajectories`` (the page
then lived in ``pages/table.py``) showed Streamlit's "Page not found" dialog over a page
that ran, and the dialog left the page inert. Each case here starts its own server, so the
visit really is the first.
"""

from __future__ import annotations

import pytest

from tests.app.browser import REPO_ROOT, StreamlitServer, save_screenshot, wait_for_app

pytestmark = pytest.mark.browser

#: A page's address and a text only that page shows.
PAGES = {"trajectories": "Trajectories", "dead_ends": "Dead ends"}


@pytest.mark.parametrize("script", ["serve.py", "app.py"])
@pytest.mark.parametrize("path", sorted(PAGES))
def test_a_first_visit_to_a_deep_link_opens_that_page(script, path, chromium_browser, page_events):
    server = StreamlitServer(REPO_ROOT / script, ("--data", str(REPO_ROOT / "sample_data")))
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page_events.attach(page)
    try:
        page.goto(f"{server.url}/{path}")
        wait_for_app(page)
        page.wait_for_timeout(1000)  # a dialog arrives with the first run's messages
        wait_for_app(page)
        save_screenshot(page, f"deep_link_{script.split('.')[0]}_{path}", full_page=False)
        dialogs = page.locator("[role=dialog]")
        assert dialogs.count() == 0, dialogs.first.inner_text()
        assert page.url.rstrip("/").endswith(f"/{path}")
        heading = page.locator("[data-testid=stMain] h1").first
        assert PAGES[path] in heading.inner_text()
        # Streamlit probes /<page>/_stcore/... before /_stcore/...; those 404s are its own.
        page_events.console_errors[:] = [
            e for e in page_events.console_errors if "404" not in e or "_stcore" not in e
        ]
        page_events.assert_clean()
    finally:
        context.close()
        server.stop()
