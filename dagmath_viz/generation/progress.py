"""The scaffold a model run shares: its totals and the loop over its units, reported
through the one progress reporter (:mod:`dagmath_viz.progress`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

from dagmath_viz.generation.client import (
    CallFailed,
    ChatClient,
    FatalAPIError,
    RetryPolicy,
    Sampling,
)
from dagmath_viz.progress import Progress, format_duration

__all__ = ["RunSettings", "RunTotals", "run_units"]

Unit = TypeVar("Unit")
Result = TypeVar("Result")


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """What every run that talks to a model server is given (``generate``, ``gold`` and
    ``depends`` each add their own fields). ``api_key`` is used for requests and never
    written."""

    base_url: str
    model: str
    out_dir: Path
    concurrency: int = 8
    sampling: Sampling = field(default_factory=Sampling)
    api_key: str | None = field(default=None, repr=False)
    structured: bool = True
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    progress_interval: float = 10.0
    #: check the server and the model(s) before the first request
    preflight: bool = True
    #: stop after this many connection failures, or identical 4xx answers, in a row
    stop_after: int = 8
    #: write each failure's reason on the stream as it happens
    verbose: bool = False


@dataclass
class RunTotals:
    """What a run did, for the closing line and the manifest (``generate`` and ``gold``)."""

    #: how the closing line names what was finished (a class constant, not a field)
    DONE: ClassVar[str] = "done"

    total: int = 0
    already_done: int = 0
    written: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0
    wall_seconds: float = 0.0

    def add_usage(self, client: ChatClient) -> None:
        """Count what ``client`` sent and was billed (a run may use several clients)."""
        self.prompt_tokens += client.usage.prompt_tokens
        self.completion_tokens += client.usage.completion_tokens
        self.requests += client.usage.requests

    def line(self) -> str:
        return (
            f"{self.total - len(self.failures)} of {self.total} {self.DONE} "
            f"({self.already_done} from an earlier run, {self.written} now), "
            f"{len(self.failures)} failed, {self.requests} requests, "
            f"{self.prompt_tokens} prompt + {self.completion_tokens} completion tokens, "
            f"{format_duration(self.wall_seconds)} wall time"
        )


class _Run(Protocol):
    stopped: bool

    @property
    def summary(self) -> RunTotals: ...  # read-only here, so a run may hold a subclass


async def run_units(
    run: _Run,
    units: Iterable[Unit],
    call: Callable[[Unit], Awaitable[Result]],
    finish: Callable[[Unit, Result], None],
    failure: Callable[[Unit, Exception], dict[str, Any]],
    *,
    concurrency: int,
    progress: Progress,
    failed: tuple[type[Exception], ...] = (CallFailed,),
) -> None:
    """The scaffolding ``generate`` and ``gold`` share: every unit once, a few at a time.

    ``call(unit)`` talks to the server with at most ``concurrency`` calls in flight;
    ``finish(unit, result)`` stores what it returned *outside* that gate, so writing a
    file never holds up the next request. A unit whose call raises one of ``failed`` is
    recorded as ``failure(unit, exc)`` in ``run.summary.failures`` and the run goes on.
    A :class:`FatalAPIError` (bad key, unknown model) sets ``run.stopped`` before the gate
    opens for the next unit, so no further request is sent, cancels what is in flight and
    propagates. Progress is shown before the first unit and closed however the run ends.
    """
    gate = asyncio.Semaphore(max(concurrency, 1))

    async def one(unit: Unit) -> None:
        async with gate:
            if run.stopped:
                return
            try:
                result = await call(unit)
            except FatalAPIError:
                run.stopped = True
                raise
            except failed as exc:
                run.summary.failures.append(failure(unit, exc))
                progress.advance(ok=False)
                return
        finish(unit, result)
        progress.advance(ok=True)

    progress.show(force=True)
    try:
        tasks = [asyncio.create_task(one(unit)) for unit in units]
        try:
            await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
    finally:
        progress.close()
