"""Fixtures for the generation tests: fast retries and fake servers started per test."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from gen_fake_server import Action, FakeServer


@pytest.fixture
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retry waits of milliseconds instead of seconds."""
    monkeypatch.setenv("DAGMATH_RETRY_BASE_SECONDS", "0.01")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def serve() -> Callable[[Callable[[dict], Action]], FakeServer]:
    """Start a fake server for a script; stopped at the end of the test."""
    servers: list[FakeServer] = []

    def start(script: Callable[[dict], Action], **options) -> FakeServer:
        server = FakeServer(script, **options).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)


@pytest.fixture(scope="session")
def thought_anchors_data() -> Path:
    """``../shared/data/thought-anchors`` (20 real chains), or skip; fail instead when
    ``DAGMATH_REQUIRE_SHARED=1`` (as the ``shared_data`` fixture does)."""
    path = (Path(__file__).parents[2] / ".." / "shared" / "data" / "thought-anchors").resolve()
    if not path.is_dir():
        reason = f"thought-anchors data not found at {path}"
        if os.environ.get("DAGMATH_REQUIRE_SHARED") == "1":
            pytest.fail(f"{reason} and DAGMATH_REQUIRE_SHARED=1", pytrace=False)
        pytest.skip(f"{reason} (set DAGMATH_REQUIRE_SHARED=1 to make this a failure)")
    return path
