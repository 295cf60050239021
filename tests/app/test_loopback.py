"""Loopback and silence: a fresh app server listens on 127.0.0.1 only and reaches nowhere.

Each server is started as a user starts it (a plain ``streamlit run app.py`` in the checkout,
and ``dagmath app`` from another directory), under ``strace``, which logs every ``connect``
and ``send*`` of the server and its children. A page is opened in Chromium, so the app's
scripts run. Then:

- ``/proc/net/tcp`` and ``tcp6`` show the server's listening socket on 127.0.0.1 only;
- no traced call names an address other than 127.0.0.1 or ::1, nor port 53 (DNS), nor the
  name-service daemons' sockets.

Without ``server.address`` Streamlit listens on every interface and opens a socket to
8.8.8.8 to print its "Network URL"; a control test shows the log parser sees such a socket.
Needs strace (``apt-get install strace``; scripts/setup.sh installs it) and root or ptrace
rights; skipped without them unless ``DAGMATH_REQUIRE_BROWSER=1``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.app.browser import (
    REPO_ROOT,
    REQUIRE_BROWSER_ENV,
    free_port,
    wait_for_app,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LOOPBACK = {"127.0.0.1", "::1", "::ffff:127.0.0.1"}
# connect/sendto/sendmsg with an IPv4 or IPv6 socket address, as strace prints them
_INET = re.compile(r'sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)')
_INET6 = re.compile(r'sin6_port=htons\((\d+)\).*?inet_pton\(AF_INET6, "([^"]+)"')
_UNIX = re.compile(r'sun_path="([^"]+)"')
NAME_SERVICE_SOCKETS = ("nscd", "resolve", "systemd/resolve")


def _need_strace() -> str:
    strace = shutil.which("strace")
    reason = "strace is missing (apt-get install strace)" if not strace else ""
    if strace:
        probe = subprocess.run([strace, "-o", os.devnull, "true"], capture_output=True)
        reason = "" if probe.returncode == 0 else f"strace cannot trace here: {probe.stderr!r}"
    if reason:
        if os.environ.get(REQUIRE_BROWSER_ENV) == "1":
            pytest.fail(f"{reason} and {REQUIRE_BROWSER_ENV}=1", pytrace=False)
        pytest.skip(reason)
    return strace


def traced(argv: list[str], log: Path) -> list[str]:
    """``argv`` under strace: every connect and send of it and its children, to ``log``."""
    calls = "trace=connect,sendto,sendmsg,sendmmsg"
    return [_need_strace(), "-f", "-qq", "-e", calls, "-e", "signal=none", "-o", str(log), *argv]


def outside_contacts(log_text: str) -> list[str]:
    """The traced calls that reach beyond loopback, ask DNS, or ask a name-service daemon."""
    found = []
    for line in log_text.splitlines():
        for port, addr in _INET.findall(line) + _INET6.findall(line):
            if addr not in LOOPBACK or port == "53":
                found.append(line.strip())
        for path in _UNIX.findall(line):
            if any(name in path for name in NAME_SERVICE_SOCKETS):
                found.append(line.strip())
    return found


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a TCP socket listening on ``port`` (from /proc/net/tcp{,6})."""
    found = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        with contextlib.suppress(FileNotFoundError):
            for row in Path(table).read_text().splitlines()[1:]:
                local, state = row.split()[1], row.split()[3]
                addr, hex_port = local.split(":")
                if state == "0A" and int(hex_port, 16) == port:
                    found.add(_address(addr, width))
    return found


def _address(hex_addr: str, width: int) -> str:
    """/proc/net/tcp's little-endian hex words as dotted IPv4 or compressed IPv6."""
    import ipaddress

    raw = bytes.fromhex(hex_addr)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    return str(ipaddress.ip_address(words if width == 32 else words[:4]))


class TracedServer:
    """A server command under strace, healthy on ``port``; stopped by :meth:`stop`."""

    def __init__(self, argv: list[str], cwd: Path, port: int, log: Path, env: dict):
        self.port, self.log = port, log
        self.url = f"http://127.0.0.1:{port}"
        self.output = log.with_suffix(".out")
        with open(self.output, "wb") as out:
            self.proc = subprocess.Popen(
                traced(argv, log),
                cwd=cwd,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            self._wait_healthy(90)
        except BaseException:
            self.stop()
            raise

    def _wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.output.read_text(errors="replace")[-3000:]
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(self.url + "/_stcore/health", timeout=2) as resp:
                    if resp.read() == b"ok":
                        return
            time.sleep(0.25)
        raise TimeoutError(self.output.read_text(errors="replace")[-3000:])

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


def _browse(chromium_browser, url: str) -> list[str]:
    """Open the app's first two pages; returns the requests that left 127.0.0.1."""
    from tests.app.browser import PageEvents

    events = PageEvents()
    context = chromium_browser.new_context()
    try:
        page = context.new_page()
        events.attach(page)
        page.goto(url)
        wait_for_app(page)
        assert page.get_by_text("Overview").count() > 0
        page.goto(url + "/trajectory")
        wait_for_app(page)
    finally:
        context.close()
    return events.non_local_requests()


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMLIT_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def _check_silent(server: TracedServer, chromium_browser) -> None:
    assert listening_addresses(server.port) == {"127.0.0.1"}
    assert _browse(chromium_browser, server.url) == []
    time.sleep(1)  # let the session's last calls reach the log
    server.stop()
    log = server.log.read_text(errors="replace")
    assert "HTTP/1.1 200 OK" in log  # the trace worked: it saw the server answer the browser
    assert outside_contacts(log) == []


def test_the_tracer_sees_an_outside_socket(tmp_path: Path) -> None:
    """Control: Streamlit's own way of finding its "Network URL" (a UDP socket connected to
    8.8.8.8, which sends nothing) is caught by the log parser."""
    log = tmp_path / "control.strace"
    probe = (
        "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
        "s.connect(('8.8.8.8', 80)); s.close()"
    )
    subprocess.run(traced([sys.executable, "-c", probe], log), check=True, timeout=60)
    (hit,) = outside_contacts(log.read_text())
    assert "8.8.8.8" in hit


def test_plain_streamlit_run_binds_loopback_and_reaches_nowhere(tmp_path, chromium_browser):
    """``streamlit run app.py`` in the checkout, no address given: .streamlit/config.toml."""
    port = free_port()
    argv = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)]
    server = TracedServer(argv, REPO_ROOT, port, tmp_path / "plain.strace", _env())
    try:
        _check_silent(server, chromium_browser)
    finally:
        server.stop()


def test_dagmath_app_binds_loopback_and_reaches_nowhere(tmp_path, chromium_browser):
    """``dagmath app`` from a folder with no Streamlit config: its own settings travel along."""
    port = free_port()
    argv = [sys.executable, "-m", "dagmath_viz", "app", "--server.port", str(port)]
    server = TracedServer(argv, tmp_path, port, tmp_path / "app.strace", _env())
    try:
        _check_silent(server, chromium_browser)
    finally:
        server.stop()


def test_dagmath_app_binds_elsewhere_only_when_told(tmp_path) -> None:
    """``--server.address`` is passed on (the choice is the user's); scripts/app.sh agrees."""
    import argparse

    from dagmath_viz.cli.app import app_command

    args = argparse.Namespace(
        extra=["--server.address", "0.0.0.0"], data=None, answers=None, field_map=None
    )
    command = app_command(args)
    assert "--server.address=127.0.0.1" not in command
    assert command[command.index("--server.address") + 1] == "0.0.0.0"
    default = app_command(argparse.Namespace(extra=[], data=None, answers=None, field_map=None))
    assert "--server.address=127.0.0.1" in default
    assert "--browser.gatherUsageStats=false" in default
    script = (REPO_ROOT / "scripts" / "app.sh").read_text()
    assert 'dagmath_viz app "$@"' in script  # every option reaches dagmath app
