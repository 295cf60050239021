"""The answer-check worker process: one JSON pair per stdin line, one verdict per stdout line.

Run by :class:`dagmath_viz.answers.check.AnswerChecker` as
``python -m dagmath_viz.answers._verify_worker``; a plain subprocess (not multiprocessing) so it
never re-imports the caller's ``__main__``.
The parent enforces the deadline, so math-verify's own signal timeouts are off here.
Parsed answers are memoised: a reference meets many predictions, and parsing is half the
cost of a check.

The worker must not outlive the process that started it (a scorer killed with SIGKILL, or
SIGTERM to its main process only, while ``\\boxed{9^{9^{9^{9}}}}`` is being checked would
leave it at full CPU for ever). Its own loop ends at stdin's end of file, but a check stuck
in C code (a huge integer power) holds the interpreter and never gets back to that loop,
and neither would a watchdog thread or a signal handler. So a *watchdog process*, forked
before math-verify is imported, watches the starter from outside and kills the worker when
the starter is gone. ``PR_SET_PDEATHSIG`` is not set on the worker itself: Linux sends it
when the *thread* that started the child ends, and the scorer starts its worker from
short-lived threads. The watchdog sets it instead, on itself, with the worker's main thread
as its parent, so it dies with the worker.

The module reads top down, each function before the ones it calls: :func:`main`, the
watchdog it starts first, and the watchdog's two helpers (its own parent-death signal, a
pid's parent read from ``/proc``).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import time

MEMO_SIZE = 4096
WATCH_INTERVAL = 0.25  # seconds between the watchdog's looks at the starter


def main() -> None:  # pragma: no cover - exercised through AnswerChecker
    _start_watchdog()
    logging.disable(logging.WARNING)  # math-verify warns that its timeouts are off
    from math_verify import parse, verify

    memo: dict[str, list] = {}

    def parsed(answer: str) -> list:
        hit = memo.get(answer)
        if hit is None:
            if len(memo) >= MEMO_SIZE:
                memo.clear()
            hit = memo[answer] = parse("\\boxed{" + answer + "}", parsing_timeout=None)
        return hit

    for line in sys.stdin:
        try:
            reference, prediction = json.loads(line)
            ok = bool(verify(parsed(reference), parsed(prediction), timeout_seconds=None))
            out = ["verified" if ok else "different", ok]
        except BaseException as exc:  # noqa: BLE001 - math-verify raises BaseException subclasses
            out = [f"error: {type(exc).__name__}", False]
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


def _start_watchdog() -> None:
    """Fork the watchdog (POSIX); it holds none of the worker's pipes."""
    if not hasattr(os, "fork"):
        return
    worker, starter = os.getpid(), os.getppid()
    if os.fork() == 0:  # pragma: no cover - the child
        try:
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):  # keep no end of the worker's pipes open
                os.dup2(devnull, fd)
            _watch(worker, starter)
        finally:
            os._exit(0)


def _watch(worker: int, starter: int) -> None:  # pragma: no cover - runs in the fork
    """The watchdog's life: kill ``worker`` once ``starter`` is gone, end once it is."""
    _set_parent_death_signal()  # our parent is the worker's main thread: die with it
    while True:
        if os.getppid() != worker:
            os._exit(0)  # the worker has ended
        parent = _parent_of(worker)
        if parent is None:
            try:
                os.kill(starter, 0)  # no /proc: ask whether the starter still exists
                gone = False
            except ProcessLookupError:
                gone = True
            except PermissionError:
                gone = False
        else:
            gone = parent != starter  # an orphan is adopted at once, even by a zombie
        if gone:
            try:
                os.kill(worker, signal.SIGKILL)
            finally:
                os._exit(0)
        time.sleep(WATCH_INTERVAL)


def _set_parent_death_signal() -> None:
    """Ask Linux to SIGKILL this process when its parent thread ends (best effort)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _parent_of(pid: int) -> int | None:
    """The parent pid of ``pid`` as the kernel has it now (Linux), else None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after it
    return int(stat[stat.rindex(b")") + 2 :].split()[1])


if __name__ == "__main__":
    main()
