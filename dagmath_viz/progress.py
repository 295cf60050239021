"""How far a long command is: one reporter for ``dagmath score``, ``dagmath app``'s preload
and (once merged) ``generate``/``gold``.

On a terminal it is a bar redrawn in place, at most ten times a second, with the count,
the rate, the time elapsed and an ETA. Anywhere else (``nohup``, SLURM, CI logs) a bar
would be a wall of carriage returns, so it writes one plain line when the work starts,
then every ``interval`` seconds (10 by default), and one when it ends:

    dagmath: scoring: 120/465 files, 35.2 files/s, 0:03 elapsed, ETA 0:10

A :class:`Progress` is also the ``progress(done, total)`` callback the library's long
calls take (:func:`dagmath_viz.score_paths`, :func:`dagmath_viz.run.distributed.score_on_dask`),
so the library itself never prints. The clock is a parameter: tests drive time by hand.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["BAR_WIDTH", "Progress", "format_duration"]

#: Characters of the bar on a terminal.
BAR_WIDTH = 30
#: Seconds between two redraws of the bar (a terminal is not a video).
REDRAW_EVERY = 0.1


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
    """Counts the units of one piece of work and shows them on ``stream`` (stderr).

    Feed it either way: call it as ``progress(done, total)`` (absolute counts, as the
    library's callbacks give them) or :meth:`advance` one unit at a time. ``already``
    units were done before (a resumed run): they count as done, not in the rate.
    ``bar=False`` writes plain lines even on a terminal (the app's server shares its
    terminal with Streamlit's log). The work ends when ``done`` reaches ``total`` or at
    :meth:`close`, whichever comes first; either writes the closing line once.
    """

    def __init__(
        self,
        label: str,
        total: int = 0,
        *,
        unit: str = "",
        already: int = 0,
        stream: TextIO | None = None,
        interval: float = 10.0,
        bar: bool = True,
        prefix: str = "dagmath: ",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label, self.unit, self.prefix = label, unit, prefix
        self.total, self.done, self.already, self.failed = total, already, already, 0
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bar and bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval
        self.clock = clock
        self.start = clock()
        self._shown_at: float | None = None
        self._closed = False

    # ------------------------------------------------------------------ feeding it

    def __call__(self, done: int, total: int | None = None) -> None:
        """``done`` of ``total`` units are finished (the library's callback shape)."""
        if total is not None:
            self.total = total
        self.done = done
        self._after_change()

    def advance(self, ok: bool = True) -> None:
        """One more unit finished (``ok``) or failed."""
        if ok:
            self.done += 1
        else:
            self.failed += 1
        self._after_change()

    def _after_change(self) -> None:
        if self.total and self.done + self.failed >= self.total:
            self._shown_at = self.clock()  # the end is always said
            self.close()
        else:
            self.show()

    # ------------------------------------------------------------------ what it says

    def elapsed(self) -> float:
        return self.clock() - self.start

    def rate(self) -> float | None:
        """Units a second this run (None before the first unit, or before any time)."""
        now_done = self.done - self.already + self.failed
        seconds = self.elapsed()
        return now_done / seconds if now_done > 0 and seconds > 0 else None

    def eta(self) -> str:
        remaining = self.total - self.done - self.failed
        if remaining <= 0:
            return "0:00"
        rate = self.rate()
        return "?" if rate is None else format_duration(remaining / rate)

    def line(self) -> str:
        """``120/465 files, 35.2 files/s, 0:03 elapsed, ETA 0:10`` (``2 failed`` too)."""
        unit = f" {self.unit}" if self.unit else ""
        count = f"{self.done}/{self.total}{unit}" if self.total else f"{self.done}{unit}"
        failed = f", {self.failed} failed" if self.failed else ""
        rate = self.rate()
        speed = "?" if rate is None else f"{rate:.1f}" if rate < 100 else f"{rate:,.0f}"
        per = f"{self.unit}/s" if self.unit else "/s"
        tail = f", ETA {self.eta()}" if self.total else ""
        elapsed = format_duration(self.elapsed())
        return f"{count}{failed}, {speed} {per}, {elapsed} elapsed{tail}"

    def show(self, force: bool = False) -> None:
        """Redraw the bar, or write a plain line if the interval has passed (or ``force``)."""
        if self._closed:
            return
        now = self.clock()
        wait = REDRAW_EVERY if self.tty else self.interval
        if not force and self._shown_at is not None and now - self._shown_at < wait:
            return
        self._shown_at = now
        self._write()

    def _write(self) -> None:
        if self.tty:
            finished = self.done + self.failed
            filled = BAR_WIDTH * min(finished, self.total) // max(self.total, 1)
            drawn = "#" * filled + "." * (BAR_WIDTH - filled)
            self.stream.write(f"\r{self.label} [{drawn}] {self.line()}\x1b[K")
        else:
            self.stream.write(f"{self.prefix}{self.label}: {self.line()}\n")
        self.stream.flush()

    def close(self) -> None:
        """The closing line (the bar's last state and a newline), written once; nothing
        if nothing was shown (a run that found no file has no progress to end)."""
        if self._closed:
            return
        self._closed = True
        if self._shown_at is None:
            return
        self._write()
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()
