"""Progress of a run: a bar with done/failed/ETA on a terminal, plain lines otherwise."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TextIO, TypeVar

from dagmath_viz.generation.client import CallFailed, FatalAPIError

__all__ = ["Progress", "RunTotals", "format_duration", "run_units"]

Unit = TypeVar("Unit")
Result = TypeVar("Result")


def format_duration(seconds: float) -> str:
    """``h:mm:ss`` (or ``m:ss``) for a number of seconds.

    >>> format_duration(75.4), format_duration(3725)
    ('1:15', '1:02:05')
    """
    whole = int(round(max(seconds, 0)))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress:
    """Counts finished and failed units of one run and shows them on ``stream``.

    On a terminal the bar is redrawn in place (at most ten times a second); elsewhere
    (a log file, CI) one plain line is written every ``interval`` seconds and at the end.
    ``already`` units were finished by an earlier run: they count as done but not in
    the rate the ETA is based on.
    """

    def __init__(
        self, label: str, total: int, already: int, stream: TextIO, interval: float = 10.0
    ) -> None:
        self.label = label
        self.total = total
        self.done = already
        self.already = already
        self.failed = 0
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.interval = interval
        self.start = time.monotonic()
        self._last_shown = 0.0

    def advance(self, ok: bool) -> None:
        if ok:
            self.done += 1
        else:
            self.failed += 1
        self.show()

    def eta(self) -> str:
        finished_now = self.done - self.already + self.failed
        remaining = self.total - self.done - self.failed
        if remaining <= 0:
            return "0:00"
        if finished_now <= 0:
            return "?"
        elapsed = time.monotonic() - self.start
        return format_duration(elapsed / finished_now * remaining)

    def line(self) -> str:
        return (
            f"{self.label}: {self.done}/{self.total} done, {self.failed} failed, ETA {self.eta()}"
        )

    def show(self, force: bool = False) -> None:
        now = time.monotonic()
        finished = self.done + self.failed >= self.total
        if self.tty:
            if not (force or finished or now - self._last_shown >= 0.1):
                return
            width = 30
            filled = width * (self.done + self.failed) // max(self.total, 1)
            bar = "#" * filled + "." * (width - filled)
            self.stream.write(f"\r{self.label} [{bar}] " + self.line().split(": ", 1)[1])
            self.stream.write("\x1b[K")  # clear what a longer previous line left
        else:
            if not (force or finished or now - self._last_shown >= self.interval):
                return
            self.stream.write(f"dagmath: {self.line()}\n")
        self._last_shown = now
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.show(force=True)
            self.stream.write("\n")
            self.stream.flush()


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
