"""Fixtures for the generation tests: fast retries and fake servers started per test."""

from __future__ import annotations

from collections.abc import Callable

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
