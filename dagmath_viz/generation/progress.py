"""Progress of a run: a bar with done/failed/ETA on a terminal, plain lines otherwise."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, TextIO

__all__ = ["Progress", "format_duration"]


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
