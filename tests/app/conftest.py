"""Fixtures for the real-browser tests: a headless Streamlit server and Debian's Chromium.

- ``streamlit_server``: session-scoped factory ``start(script, *args) -> base URL``; one server
  per (script, args), all stopped at the end of the session.
- ``app_url``: the real app (``app.py``) on its own server; skipped while it does not exist.
- ``chromium_browser``: Playwright driving ``/usr/bin/chromium``; skipped when it is missing
  unless ``DAGMATH_REQUIRE_BROWSER=1``, which turns the skip into a failure.
- ``page_events`` / ``app_page``: a fresh page per test with its console errors, dialogs and
  requests recorded (``page_events.assert_clean()``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# `pytest` (unlike `python -m pytest`) does not put the repository root on sys.path.
_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from tests.app.browser import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    REPO_ROOT,
    REQUIRE_BROWSER_ENV,
    PageEvents,
    StreamlitServer,
)


def _browser_unavailable(reason: str) -> None:
    if os.environ.get(REQUIRE_BROWSER_ENV) == "1":
        pytest.fail(f"{reason} and {REQUIRE_BROWSER_ENV}=1 requires the browser tests to run")
    pytest.skip(f"{reason}; set {REQUIRE_BROWSER_ENV}=1 to make this a failure")


@pytest.fixture(scope="session")
def streamlit_server() -> Iterator[Callable[..., str]]:
    servers: dict[tuple[str, tuple[str, ...]], StreamlitServer] = {}

    def start(script: Path | str, *args: str) -> str:
        path = Path(script)
        path = path if path.is_absolute() else REPO_ROOT / path
        key = (str(path), tuple(args))
        if key not in servers:
            servers[key] = StreamlitServer(path, tuple(args))
        return servers[key].url

    yield start
    for server in servers.values():
        server.ask_to_stop()  # all at once: each shutdown takes a second or more
    for server in servers.values():
        server.stop()


@pytest.fixture(scope="session")
def app_url(streamlit_server) -> str:
    app = REPO_ROOT / "app.py"
    if not app.exists():
        pytest.skip("app.py does not exist yet")
    return streamlit_server(app)


@pytest.fixture(scope="session")
def chromium_browser():
    if not Path(CHROMIUM).exists():
        _browser_unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _browser_unavailable("the playwright Python package is not installed")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page_events() -> PageEvents:
    return PageEvents()


@pytest.fixture
def app_page(chromium_browser, page_events):
    context = chromium_browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page_events.attach(page)
    try:
        yield page
    finally:
        context.close()
