"""Helpers for driving the real Streamlit app in Debian's headless Chromium (Playwright).

Nothing here downloads anything: Chromium is ``/usr/bin/chromium`` (``apt-get install
chromium``), never ``playwright install``. The fixtures live in ``tests/app/conftest.py``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

REPO_ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO_ROOT / "artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
LOGS = ARTIFACTS / "logs"

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: Set to 1 (as CI does) to make a missing Chromium a failure instead of a skip.
REQUIRE_BROWSER_ENV = "DAGMATH_REQUIRE_BROWSER"

LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
LOCAL_SCHEMES = {"data", "blob", "about"}

APP_SELECTOR = "[data-testid=stApp][data-test-script-state=notRunning]"
SKELETON_SELECTOR = "[data-testid=stSkeleton]"
IFRAME_SELECTOR = "iframe[data-testid=stIFrame]"


def free_port() -> int:
    """A TCP port that was free a moment ago on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_script(root: Path = REPO_ROOT) -> Path:
    """The script ``dagmath app`` serves in the source tree ``root``: its ``serve.py``
    (``streamlit run app.py``, the data source loading as the server starts), or
    ``app.py`` in a tree from before serve.py (a benchmark's "before" tree)."""
    serve = Path(root) / "serve.py"
    return serve if serve.is_file() else Path(root) / "app.py"


def launch_prefix(script: Path | str) -> list[str]:
    """The command that serves ``script`` (options and ``-- ARGS`` follow): ``python
    serve.py``, or ``python -m streamlit run`` for any other script; both take the same
    Streamlit options."""
    script = Path(script)
    if script.name == "serve.py":
        return [sys.executable, str(script)]
    return [sys.executable, "-m", "streamlit", "run", str(script)]


class StreamlitServer:
    """``streamlit run <script>`` on a free local port, stopped by :meth:`stop`; the
    repository's ``serve.py`` (``dagmath app``'s server: app.py, its data preloaded) runs
    as ``python serve.py`` with the same options.

    Output goes to ``artifacts/logs/streamlit-<script>-<port>.log``; its tail is quoted when
    the server does not come up.
    """

    def __init__(self, script: Path | str, args: tuple[str, ...] = (), timeout: float = 60.0):
        self.script = Path(script)
        self.args = tuple(args)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        LOGS.mkdir(parents=True, exist_ok=True)
        self.log_path = LOGS / f"streamlit-{self.script.stem}-{self.port}.log"
        cmd = [
            *launch_prefix(self.script),
            "--server.headless",
            "true",
            "--server.address",
            "127.0.0.1",
            "--server.port",
            str(self.port),
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
        ]
        if self.args:
            cmd += ["--", *self.args]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
        self._asked = False  # SIGTERM sent (ask_to_stop)
        self._log = open(self.log_path, "wb")  # closed in stop()
        # A new session so stop() can end the server and anything it spawned, by its group id.
        self.proc = subprocess.Popen(
            cmd,
            cwd=REPO_ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            self._wait_healthy(timeout)
        except BaseException:
            self.stop()
            raise

    def _wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        health = self.url + "/_stcore/health"
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"streamlit exited with {self.proc.returncode}:\n{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(health, timeout=2) as resp:
                    if resp.read().decode().strip() == "ok":
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(0.25)
        raise TimeoutError(f"{health} did not say ok within {timeout:.0f}s:\n{self.log_tail()}")

    def log_tail(self, n: int = 40) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-n:])

    def ask_to_stop(self) -> None:
        """SIGTERM to the server's group, without waiting: :meth:`stop` waits. Stopping many
        servers, ask them all first, so their shutdowns overlap."""
        if self.proc.poll() is None and not self._asked:
            self._asked = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.ask_to_stop()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self._log.close()


@dataclass
class PageEvents:
    """What a page did: console errors, uncaught exceptions, dialogs and every URL requested."""

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def attach(self, page) -> None:
        page.on("console", self._on_console)
        page.on("pageerror", lambda err: self.page_errors.append(str(err)))
        page.on("dialog", self._on_dialog)
        page.on("request", lambda req: self.requests.append(req.url))
        page.on("websocket", lambda ws: self.requests.append(ws.url))

    def _on_console(self, msg) -> None:
        if msg.type == "error":
            loc = msg.location or {}
            self.console_errors.append(f"{msg.text} ({loc.get('url', '')})")

    def _on_dialog(self, dialog) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def non_local_requests(self) -> list[str]:
        return [u for u in self.requests if not is_local_url(u)]

    def assert_clean(self) -> None:
        """No dialog, no console error, no uncaught exception, no request leaving the host."""
        assert not self.dialogs, f"JS dialogs fired: {self.dialogs}"
        assert not self.page_errors, f"uncaught page errors: {self.page_errors}"
        assert not self.console_errors, f"console errors: {self.console_errors}"
        assert not self.non_local_requests(), f"non-local requests: {self.non_local_requests()}"


def is_local_url(url: str) -> bool:
    """True for 127.0.0.1 / localhost (any scheme and port) and data:, blob:, about: URLs."""
    parts = urlsplit(url)
    if parts.scheme in LOCAL_SCHEMES:
        return True
    return parts.scheme in {"http", "https", "ws", "wss"} and parts.hostname in LOCAL_HOSTS


def wait_for_app(page, timeout_ms: int = 30_000) -> None:
    """Wait as Streamlit's own e2e suite does: script finished and no skeleton left."""
    page.wait_for_selector(APP_SELECTOR, timeout=timeout_ms)
    page.wait_for_selector(SKELETON_SELECTOR, state="detached", timeout=timeout_ms)


def dag_frame(page, index: int = 0, timeout_ms: int = 30_000):
    """The Frame of the ``index``-th ``st.iframe`` once its graph is drawn: the trajectory view
    (``#dm-root[data-ready]``, see ``dagmath_viz/assets/trajectory_view.js``) or a
    vis-network proof graph (globals ``network`` and ``nodes``).

    Both expose ``nodes.get()``, the list of drawn nodes with their data fields.
    """
    locator = page.locator(IFRAME_SELECTOR).nth(index)
    locator.wait_for(state="attached", timeout=timeout_ms)
    frame = locator.element_handle().content_frame()
    assert frame is not None, "st.iframe has no content frame"
    frame.wait_for_function(
        """() => (document.querySelector('#dm-root[data-ready="1"]') !== null)
                 || (typeof network !== 'undefined' && network !== null
                     && typeof nodes !== 'undefined')""",
        timeout=timeout_ms,
    )
    return frame


def is_trajectory_view(frame) -> bool:
    """True for the trajectory view, False for a vis-network drawing."""
    return frame.evaluate("() => document.getElementById('dm-root') !== null")


def save_screenshot(page, name: str, *, full_page: bool = True) -> Path:
    """Save ``artifacts/screenshots/<name>.png`` (the folder is gitignored) and return it."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


def node_points(page, frame, index: int = 0) -> dict[int, tuple[float, float]]:
    """Page coordinates (CSS px) of every drawn node's centre in the ``index``-th iframe."""
    if is_trajectory_view(frame):
        local = frame.evaluate(
            """() => { const out = {};
                for (const g of document.querySelectorAll('#dm-graph .dm-node')) {
                    const r = g.querySelector('rect').getBoundingClientRect();
                    out[g.dataset.id] = [r.left + r.width / 2, r.top + r.height / 2];
                }
                return out; }"""
        )
    else:
        local = frame.evaluate(
            """() => {
                const box = document.getElementById('mynetwork').getBoundingClientRect();
                const out = {};
                const pos = network.getPositions();
                for (const id of Object.keys(pos)) {
                    const p = network.canvasToDOM(pos[id]);
                    out[id] = [p.x + box.left, p.y + box.top];
                }
                return out;
            }"""
        )
    iframe_box = page.locator(IFRAME_SELECTOR).nth(index).bounding_box()
    assert iframe_box is not None, "iframe is not visible"
    return {int(k): (iframe_box["x"] + x, iframe_box["y"] + y) for k, (x, y) in local.items()}


def hover_node(
    page, frame, point: tuple[float, float], expect: str = "", timeout_ms: int = 3_000
) -> str:
    """Move the mouse onto a node and return the text of its tooltip once it is visible and
    starts with ``expect`` (so a previous node's tooltip is not read).

    Also checks the tooltip holds text only (no element inside it but line breaks).
    """
    tip = "#dm-tip" if is_trajectory_view(frame) else "div.vis-tooltip"
    page.mouse.move(point[0] + 40, point[1] + 40)
    page.mouse.move(point[0], point[1], steps=4)
    frame.wait_for_function(
        """([sel, expect]) => { const t = document.querySelector(sel);
                   const shown = t && getComputedStyle(t).display !== 'none'
                                 && getComputedStyle(t).visibility !== 'hidden';
                   return shown && t.innerText.length > 0 && t.innerText.startsWith(expect); }""",
        arg=[tip, expect],
        timeout=timeout_ms,
    )
    return frame.evaluate(
        """(sel) => { const t = document.querySelector(sel);
                   const tags = [...t.querySelectorAll('*')].map(e => e.tagName)
                                 .filter(tag => tag !== 'BR');
                   if (tags.length) { throw new Error('tooltip holds elements: ' + tags); }
                   return t.innerText; }""",
        tip,
    )
