"""Answers: ``\\boxed{}`` extraction and the one thread-safe, time-limited equivalence check.

math-verify's own timeouts use ``signal.alarm``, which raises in any non-main thread (the
Streamlit script thread is one), and with them switched off a hostile answer such as
``\\boxed{9^{9^{9^{9}}}}`` never returns. So every check runs in a worker *process* (spawn)
with a hard deadline: a worker that overruns is killed and replaced, and the verdict is
"not equivalent (timeout)". Verdicts are cached per (reference, prediction) pair, in memory
and, when the checker is given a ``cache_file``, on disk across runs; a timeout or an error
is never cached (it says how loaded the machine was, not what the answers are), so the
next check of that pair asks math-verify again.

Plain numbers (integers, decimals, ``a/b`` and ``\\frac{a}{b}``) are compared exactly with
:class:`fractions.Fraction` before the worker is asked: math-verify compares such numbers
exactly too (decimals after rounding to 6 places), so the fast path decides only where the
two agree and leaves close decimals to math-verify (``tests/test_pipeline.py`` checks the
agreement pair by pair against math-verify).

The module reads top down, each function before the ones it calls: the predicted answer
(:func:`predicted_answer`, :func:`extract_boxed`), the process-wide check
(:func:`is_equivalent`, :func:`default_checker`), :class:`AnswerChecker` (its batch check
first, the worker process last), the quick verdicts it tries before the worker (plain
numbers, exact forms), its cache file, and last :class:`Verdict`, which all of them return.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import re
import select
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import orjson

from dagmath_viz import jsonio
from dagmath_viz.places import cache_root
from dagmath_viz.schema import InputError

__all__ = [
    "AnswerChecker",
    "Verdict",
    "default_cache_file",
    "default_checker",
    "extract_boxed",
    "kept_checker",
    "is_equivalent",
    "predicted_answer",
]


# --------------------------------------------------------------------------- the predicted answer


_BOXED = ("\\boxed", "\\fbox")


def predicted_answer(final_text: str) -> str:
    """The predicted answer: the last boxed content of the final step, else its whole text."""
    boxed = extract_boxed(final_text)
    return boxed if boxed is not None else final_text.strip()


def extract_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` in ``text``, nested braces included.

    >>> extract_boxed(r"so $\\boxed{\\frac{3}{7}}$, not \\boxed{1}? no: \\boxed{2}.")
    '2'
    >>> extract_boxed("no box") is None
    True
    """
    found = None
    start = 0
    seen: dict[str, tuple[int, int]] = {}
    while True:
        hit = _next_box(text, start, seen)
        if hit is None:
            return found
        open_brace = hit
        content = _balanced(text, open_brace)
        if content is None:  # unbalanced: the box runs to the end of the text
            return found if found is not None else text[open_brace + 1 :].strip()
        found = content.strip()
        start = open_brace + len(content) + 2


def _next_box(text: str, start: int, seen: dict[str, tuple[int, int]]) -> int | None:
    """Index of the ``{`` that opens the next box at or after ``start``.

    ``seen`` keeps, per macro, where its next box was found (macro, brace; -1 for none):
    ``start`` only grows, so that answer stays right until ``start`` passes the macro, and
    a text of many boxes is searched once instead of once per box (quadratic).
    """
    best = None
    for macro in _BOXED:
        i, j = seen.get(macro) or _find_box(text, macro, start)
        if i != -1 and i < start:  # passed: search again from start
            i, j = _find_box(text, macro, start)
        seen[macro] = (i, j)
        if i != -1:
            best = j if best is None else min(best, j)
    return best


def _find_box(text: str, macro: str, start: int) -> tuple[int, int]:
    """(macro index, brace index) of the first ``macro{`` at or after ``start``, or -1s."""
    i = text.find(macro, start)
    while i != -1:
        j = i + len(macro)
        while j < len(text) and text[j] == " ":
            j += 1
        if j < len(text) and text[j] == "{":
            return i, j
        i = text.find(macro, j)
    return -1, -1


def _balanced(text: str, open_brace: int) -> str | None:
    depth = 0
    for k in range(open_brace, len(text)):
        c = text[k]
        if c == "{" and text[k - 1] != "\\":
            depth += 1
        elif c == "}" and text[k - 1] != "\\":
            depth -= 1
            if depth == 0:
                return text[open_brace + 1 : k]
    return None


# --------------------------------------------------------------------------- the process-wide check


def is_equivalent(reference: str, prediction: str) -> bool:
    """``verify(reference, prediction)`` through the default checker."""
    return default_checker().check(reference, prediction).equivalent


_default: AnswerChecker | None = None
_default_lock = threading.Lock()


def default_checker() -> AnswerChecker:
    """The process-wide checker (one worker, one cache)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = AnswerChecker()
            atexit.register(_default.close)
        return _default


#: Environment variable that, set to ``0``, keeps the app's verdicts in memory only (as
#: ``dagmath score --no-cache`` does for the command line).
VERDICT_CACHE_ENV = "DAGMATH_VERDICT_CACHE"

_kept: dict[Path | None, AnswerChecker] = {}


def kept_checker() -> AnswerChecker:
    """The process-wide checker whose verdicts are kept on disk, in the same file as
    ``dagmath score``'s (:func:`default_cache_file`), so the app and the command line
    share them: a folder scored once by either is not checked by math-verify again.

    One per cache file (``$DAGMATH_CACHE_DIR`` may differ between calls, as in tests);
    memory only when ``$DAGMATH_VERDICT_CACHE`` is ``0``. Call :meth:`AnswerChecker.save`
    after a load to keep what it learned.
    """
    off = os.environ.get(VERDICT_CACHE_ENV, "").strip() == "0"
    path = None if off else default_cache_file()
    with _default_lock:
        checker = _kept.get(path)
        if checker is None:
            checker = _kept[path] = AnswerChecker(cache_file=path)
            atexit.register(checker.close)
        return checker


# --------------------------------------------------------------------------- the checker


class AnswerChecker:
    """Thread-safe, time-limited, caching ``verify(reference, prediction)``.

    Args:
        timeout: seconds one check may take in the worker before it is killed.
        cache_file: a JSONL file of verdicts kept between runs (read on first use,
            merged into by :meth:`save`, one line per pair); ``None`` keeps verdicts in
            memory only.

    Example:
        >>> checker = AnswerChecker(timeout=10)
        >>> checker.check("3/7", r"\\sqrt{9}/7").equivalent  # doctest: +SKIP
        True
    """

    def __init__(self, timeout: float = 5.0, cache_file: str | Path | None = None) -> None:
        self.timeout = timeout
        self.cache_file = None if cache_file is None else Path(cache_file)
        self._cache: dict[tuple[str, str], Verdict] = {}
        self._learned: list[tuple[str, str, Verdict]] = []  # worker verdicts not yet saved
        self._disk_loaded = cache_file is None
        self._disk_lock = threading.Lock()
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._starter: threading.Thread | None = None

    #: a check running this long is presumed pathological: another worker may join
    SLOW_CHECK_SECONDS = 0.5

    def check_many(
        self, pairs: Iterable[tuple[str, str]], workers: int = 1
    ) -> dict[tuple[str, str], Verdict]:
        """Verdicts for many pairs, each distinct pair checked once.

        Args:
            pairs: (reference, prediction) pairs, repeats allowed.
            workers: how many math-verify workers may run at once. This checker's own worker
                takes the pairs one after another; while every running worker has been on
                one check for :attr:`SLOW_CHECK_SECONDS` and pairs are still waiting,
                another worker joins (up to ``workers``), so pathological answers, which
                cost the whole deadline each, are waited for side by side rather than one
                after another. Ordinary checks take milliseconds, so no extra worker (and
                its second of start-up) is paid for them. The extra workers' verdicts are
                cached here, and they are stopped before this returns.
        """
        order = list(dict.fromkeys(pairs))
        out: dict[tuple[str, str], Verdict] = {}
        waiting: queue.SimpleQueue = queue.SimpleQueue()
        for pair in order:
            verdict = self.quick_verdict(*pair)
            if verdict is None:
                waiting.put(pair)
            else:
                out[pair] = verdict
        if workers <= 1 or waiting.qsize() <= 1:
            while not waiting.empty():
                pair = waiting.get()
                out[pair] = self.check(*pair)
            return {pair: out[pair] for pair in order}
        self._check_side_by_side(waiting, out, workers)
        return {pair: out[pair] for pair in order}

    def _check_side_by_side(self, waiting: queue.SimpleQueue, out: dict, workers: int) -> None:
        busy_since: list[float | None] = []  # per thread: when its current check began
        helpers: list[AnswerChecker] = []

        def run(slot: int, checker: AnswerChecker) -> None:
            while True:
                try:
                    pair = waiting.get_nowait()
                except queue.Empty:
                    busy_since[slot] = None
                    return
                busy_since[slot] = time.monotonic()
                out[pair] = checker.check(*pair)

        def spawn(checker: AnswerChecker) -> threading.Thread:
            busy_since.append(time.monotonic())
            thread = threading.Thread(
                target=run, args=(len(busy_since) - 1, checker), name="dagmath-verify", daemon=True
            )
            thread.start()
            return thread

        threads = [spawn(self)]
        try:
            while alive := [t for t in threads if t.is_alive()]:
                alive[0].join(self.SLOW_CHECK_SECONDS / 2)  # a pause, or an end
                now = time.monotonic()
                all_slow = all(
                    since is not None and now - since >= self.SLOW_CHECK_SECONDS
                    for since, t in zip(busy_since, threads, strict=True)
                    if t.is_alive()
                )
                if len(threads) < workers and not waiting.empty() and all_slow:
                    helper = type(self)(timeout=self.timeout)
                    helpers.append(helper)
                    threads.append(spawn(helper))
        finally:
            for thread in threads:
                thread.join()
            for helper in helpers:  # their verdicts (learn() keeps no timeout)
                for (reference, prediction), verdict in list(helper._cache.items()):
                    self.learn(reference, prediction, verdict)
                helper.close()

    def learn(self, reference: str, prediction: str, verdict: Verdict) -> None:
        """Take a verdict found elsewhere (another process's checker, a cluster worker);
        a timeout or an error is not kept (see :attr:`Verdict.settled`)."""
        key = (reference, prediction)
        if key not in self._cache and verdict.settled:
            self._cache[key] = verdict
            if verdict.reason in ("verified", "different"):
                self._learned.append((reference, prediction, verdict))

    def learned(self) -> list[tuple[str, str, Verdict]]:
        """The worker verdicts this checker found and has not yet saved, as
        ``(reference, prediction, verdict)``: what another checker can :meth:`learn`."""
        return list(self._learned)

    def check(self, reference: str, prediction: str) -> Verdict:
        """Is ``prediction`` equivalent to ``reference``? Never raises, never hangs."""
        verdict = self.quick_verdict(reference, prediction)
        if verdict is not None:
            return verdict
        key = (reference, prediction)
        with self._lock:
            verdict = self._cache.get(key)
            if verdict is None:
                verdict = self._ask_worker(reference, prediction)
                if verdict.reason in ("verified", "different"):
                    self._learned.append((reference, prediction, verdict))
                if verdict.settled:  # a timeout or an error: asked again next time
                    self._cache[key] = verdict
        return verdict

    def quick_verdict(self, reference: str, prediction: str) -> Verdict | None:
        """The verdict when no worker is needed (cached, equal texts, plain numbers), else None."""
        key = (reference, prediction)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        if not self._disk_loaded:
            self._load_cache_file()
            cached = self._cache.get(key)
            if cached is not None:
                return cached
        ref, pred = _normalise(reference), _normalise(prediction)
        if ref == pred:
            verdict = Verdict(True, "equal")
        elif not ref or not pred:
            verdict = Verdict(False, "different")
        else:
            verdict = _fast_verdict(ref, pred)
        if verdict is not None:
            self._cache[key] = verdict
        return verdict

    def _load_cache_file(self) -> None:
        with self._disk_lock:
            if self._disk_loaded:
                return
            for key, verdict in _read_verdicts(self.cache_file)[0].items():
                self._cache.setdefault(key, verdict)
            self._disk_loaded = True

    def save(self) -> None:
        """Merge the worker's verdicts found since the last save into ``cache_file``.

        Concurrent runs stay correct and the file compact: under an exclusive lock on its
        folder, the file is read, this run's new verdicts are added to
        those already there (each key once), and the result replaces the file atomically
        (a temporary file beside it, then a rename). Readers never take the lock: they see
        the old file or the new one, never a part of either. Without new verdicts the file
        is not touched, so a warm run costs no write.

        Best effort: a cache that cannot be written is skipped silently. Timeouts and
        errors are never saved (they depend on the machine's load, not on the answers).
        """
        if self.cache_file is None or not self._learned:
            return
        learned, self._learned = self._learned, []
        try:
            self.cache_file.parent.mkdir(parents=True, exist_ok=True)
            with _exclusive_lock(self.cache_file.parent):
                on_disk, lines = _read_verdicts(self.cache_file)
                merged = dict(on_disk)
                for ref, pred, verdict in learned:
                    merged.setdefault((ref, pred), verdict)
                if len(merged) == len(on_disk) == lines:
                    return  # nothing new, nothing to compact
                jsonio.write_atomic(  # a rename: readers see the old file or the new one
                    self.cache_file,
                    b"".join(
                        orjson.dumps([ref, pred, v.equivalent, v.reason]) + b"\n"
                        for (ref, pred), v in merged.items()
                    ),
                )
        except OSError:
            pass

    def prestart(self) -> None:
        """Start the worker in the background, so that the first check finds it ready.

        Importing math-verify takes a second or two; a caller that knows checks will come
        (``dagmath score`` on meeting the first pair no fast path decides) overlaps it with
        other work.
        """

        def start() -> None:
            with self._lock:
                if self._proc is None or self._proc.poll() is not None:
                    try:
                        self._start()
                    except (OSError, RuntimeError):
                        pass  # the next check retries and reports the error

        if self._starter is None or not self._starter.is_alive():
            self._starter = threading.Thread(target=start, name="dagmath-verify-start", daemon=True)
            self._starter.start()

    def _ask_worker(self, reference: str, prediction: str) -> Verdict:
        if self._proc is None or self._proc.poll() is not None:
            try:
                self._start()
            except (OSError, RuntimeError) as exc:
                return Verdict(False, f"error: {exc}")
        try:
            self._proc.stdin.write(json.dumps([reference, prediction]) + "\n")
            self._proc.stdin.flush()
            line = self._readline(self.timeout)
        except (OSError, ValueError):
            line = None
        if line:
            reason, ok = json.loads(line)
            return Verdict(bool(ok), reason)
        self._stop()
        return Verdict(False, "timeout")

    def close(self) -> None:
        """Stop the worker process (it is restarted on the next check)."""
        with self._lock:
            self._stop()

    def _start(self) -> None:
        self._proc = subprocess.Popen(  # noqa: S603 - our own module, fixed arguments
            [sys.executable, "-m", "dagmath_viz.answers._verify_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )
        # The first check pays for importing sympy in the worker: wait for it generously.
        self._proc.stdin.write(json.dumps(["1", "1"]) + "\n")
        self._proc.stdin.flush()
        if not self._readline(max(60.0, self.timeout)):
            self._stop()
            raise RuntimeError("the answer-check worker did not start")

    def _readline(self, timeout: float) -> str | None:
        """One line from the worker, or None when the deadline passes first."""
        out = self._proc.stdout
        ready, _, _ = select.select([out], [], [], timeout)
        return out.readline() if ready else None

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.kill()
            proc.wait(5)
            for stream in (proc.stdin, proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass


# --------------------------------------------------------------------------- quick verdicts


# Canonical plain numbers only: no leading zeros, no spaces, at most 12 digits per integer
# part, so math-verify reads them as the same exact Integer/Rational (or a 15-digit Float).
_DIGITS = r"(?:0|[1-9]\d{0,11})"
_PLAIN_NUMBER = re.compile(
    rf"(?P<sign>-?)(?:(?P<int>{_DIGITS})(?:\.(?P<dec>\d{{1,12}}))?"
    rf"|(?P<num>{_DIGITS})/(?P<den>[1-9]\d{{0,11}})"
    rf"|\\[dt]?frac\{{(?P<fnum>{_DIGITS})\}}\{{(?P<fden>[1-9]\d{{0,11}})\}})"
)
#: decimals this close are left to math-verify (it compares floats after rounding to 6 places)
_DECIMAL_MARGIN = Fraction(1, 10**5)


def number_verdict(reference: str, prediction: str) -> Verdict | None:
    """The verdict on two plain numbers when it is certain without math-verify, else None.

    >>> number_verdict("3/7", r"\\frac{6}{14}")
    Verdict(equivalent=True, reason='verified')
    >>> number_verdict("12", "-12")
    Verdict(equivalent=False, reason='different')
    >>> number_verdict("x + 1", "1") is None
    True
    """
    a = _plain_number(_normalise(reference))
    if a is None:
        return None
    b = _plain_number(_normalise(prediction))
    if b is None:
        return None
    if a[0] == b[0]:
        return Verdict(True, "verified")
    if a[1] and b[1]:
        return Verdict(False, "different")
    if abs(a[0] - b[0]) > _DECIMAL_MARGIN * max(1, abs(a[0]), abs(b[0])):
        return Verdict(False, "different")
    return None  # close decimals: math-verify's rounding decides


def _plain_number(text: str) -> tuple[Fraction, bool] | None:
    """(value, is_exact) of a canonical plain number, else None (decimals are not exact)."""
    m = _PLAIN_NUMBER.fullmatch(text)
    if m is None:
        return None
    sign = -1 if m["sign"] else 1
    if m["int"] is not None:
        if m["dec"] is None:
            return Fraction(sign * int(m["int"])), True
        if len(m["int"].lstrip("0")) + len(m["dec"]) > 12:
            return None  # beyond what a 15-digit float holds with room to spare
        return sign * Fraction(int(m["int"] + m["dec"]), 10 ** len(m["dec"])), False
    num, den = (m["num"], m["den"]) if m["num"] is not None else (m["fnum"], m["fden"])
    return sign * Fraction(int(num), int(den)), True


def _fast_verdict(reference: str, prediction: str) -> Verdict | None:
    """Plain numbers, then exact forms; None (the worker decides) if either goes wrong.

    Both run in this process on model text, outside the worker's deadline: they bound their
    own work, and this is the boundary that keeps a fault in them (a ``RecursionError``, an
    ``OverflowError``, a ``ValueError`` from a 5,000-digit ``int()``) one pair's business,
    never the run's.
    """
    try:
        return number_verdict(reference, prediction) or _exact_verdict(reference, prediction)
    except (ArithmeticError, ValueError, RecursionError, MemoryError):
        return None


def _exact_verdict(reference: str, prediction: str) -> Verdict | None:
    """Common forms (radicals, pi, tuples, intervals, sets, matrices, polynomials, words,
    multiple choice, degrees and units dropped) read exactly: see exactforms."""
    from dagmath_viz.answers.exactforms import exact_verdict

    ok = exact_verdict(reference, prediction)
    return None if ok is None else Verdict(ok, "verified" if ok else "different")


def _normalise(answer: str) -> str:
    return " ".join(answer.split()).strip().strip("$").strip()


# --------------------------------------------------------------------------- the cache file


def default_cache_file() -> Path:
    """Where ``dagmath score`` keeps verdicts between runs.

    In the package's cache folder (:func:`dagmath_viz.places.cache_root`); one file per
    math-verify version, so an upgrade starts afresh.
    """
    return cache_root() / f"verdicts-v1-math-verify-{_math_verify_version()}.jsonl"


def _math_verify_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("math-verify")
    except PackageNotFoundError:
        return "unknown"


def _read_verdicts(path: Path) -> tuple[dict[tuple[str, str], Verdict], int]:
    """The verdicts a cache file holds (first one per key), and its count of lines.

    A missing or unreadable file holds none; a torn or foreign line is ignored.
    """
    try:
        documents = list(jsonio.read_jsonl(path))
    except InputError:
        return {}, 0  # no cache yet, or an unreadable one: start empty
    verdicts: dict[tuple[str, str], Verdict] = {}
    for document in documents:
        try:
            ref, pred, ok, reason = document.value
        except (TypeError, ValueError):
            continue  # a torn or foreign line (or an InputError): ignore it
        if (
            isinstance(ref, str)
            and isinstance(pred, str)
            and (reason, ok) in (("verified", True), ("different", False))
        ):
            verdicts.setdefault((ref, pred), Verdict(ok, reason))
    return verdicts, len(documents)


class _exclusive_lock:  # noqa: N801 - used as a context manager, like a function
    """An exclusive ``flock`` on the folder ``path`` for the ``with`` block.

    The cache's folder is locked rather than a lock file beside the cache: nothing more is
    written there, and the cache file itself cannot hold the lock, since each save
    replaces it. Where a folder cannot be locked (Windows), this locks nothing and
    concurrent saves may drop each other's new verdicts, never corrupt the file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None

    def __enter__(self) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            return
        self.fd = os.open(self.path, os.O_RDONLY)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except OSError:
            os.close(self.fd)
            self.fd = None
            raise

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing releases the lock
            self.fd = None


# --------------------------------------------------------------------------- the verdict


@dataclass(frozen=True, slots=True)
class Verdict:
    """Outcome of one equivalence check; ``reason`` is equal|verified|different|timeout|error
    (or ``source``: the source's own grade, :func:`dagmath_viz.score.reference.given_verdict`)."""

    equivalent: bool
    reason: str

    @property
    def settled(self) -> bool:
        """True when the verdict is about the answers (equal, verified, different, or the
        source's own grade), False
        for a timeout or an error, which depend on the machine: those are never cached."""
        return self.reason in ("equal", "verified", "different", "source")
