"""Answers: ``\\boxed{}`` extraction and the one thread-safe, time-limited equivalence check.

math-verify's own timeouts use ``signal.alarm``, which raises in any non-main thread (the
Streamlit script thread is one), and with them switched off a hostile answer such as
``\\boxed{9^{9^{9^{9}}}}`` never returns. So every check runs in a worker *process* (spawn)
with a hard deadline: a worker that overruns is killed and replaced, and the verdict is
"not equivalent (timeout)". Verdicts are cached per (reference, prediction) pair.
"""

from __future__ import annotations

import atexit
import json
import select
import subprocess
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "AnswerChecker",
    "Verdict",
    "default_checker",
    "extract_boxed",
    "is_equivalent",
    "predicted_answer",
]

_BOXED = ("\\boxed", "\\fbox")


def extract_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` in ``text``, nested braces included.

    >>> extract_boxed(r"so $\\boxed{\\frac{3}{7}}$, not \\boxed{1}? no: \\boxed{2}.")
    '2'
    >>> extract_boxed("no box") is None
    True
    """
    found = None
    start = 0
    while True:
        hit = _next_box(text, start)
        if hit is None:
            return found
        open_brace = hit
        content = _balanced(text, open_brace)
        if content is None:  # unbalanced: the box runs to the end of the text
            return found if found is not None else text[open_brace + 1 :].strip()
        found = content.strip()
        start = open_brace + len(content) + 2


def _next_box(text: str, start: int) -> int | None:
    """Index of the ``{`` that opens the next box at or after ``start``."""
    best = None
    for macro in _BOXED:
        i = text.find(macro, start)
        while i != -1:
            j = i + len(macro)
            while j < len(text) and text[j] == " ":
                j += 1
            if j < len(text) and text[j] == "{":
                best = j if best is None else min(best, j)
                break
            i = text.find(macro, j)
    return best


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


def predicted_answer(final_text: str) -> str:
    """The predicted answer: the last boxed content of the final step, else its whole text."""
    boxed = extract_boxed(final_text)
    return boxed if boxed is not None else final_text.strip()


@dataclass(frozen=True, slots=True)
class Verdict:
    """Outcome of one equivalence check; ``reason`` is equal|verified|different|timeout|error."""

    equivalent: bool
    reason: str


def _normalise(answer: str) -> str:
    return " ".join(answer.split()).strip().strip("$").strip()


class AnswerChecker:
    """Thread-safe, time-limited, caching ``verify(reference, prediction)``.

    Args:
        timeout: seconds one check may take in the worker before it is killed.

    Example:
        >>> checker = AnswerChecker(timeout=10)
        >>> checker.check("3/7", r"\\frac{3}{7}").equivalent  # doctest: +SKIP
        True
    """

    def __init__(self, timeout: float = 5.0) -> None:
        self.timeout = timeout
        self._cache: dict[tuple[str, str], Verdict] = {}
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None

    def check(self, reference: str, prediction: str) -> Verdict:
        """Is ``prediction`` equivalent to ``reference``? Never raises, never hangs."""
        key = (reference, prediction)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        if _normalise(reference) == _normalise(prediction):
            verdict = Verdict(True, "equal")
        elif not _normalise(prediction) or not _normalise(reference):
            verdict = Verdict(False, "different")
        else:
            with self._lock:
                verdict = self._cache.get(key) or self._ask_worker(reference, prediction)
        self._cache[key] = verdict
        return verdict

    def check_many(self, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Verdict]:
        """Verdicts for many pairs, each distinct pair checked once."""
        return {pair: self.check(*pair) for pair in dict.fromkeys(pairs)}

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

    def _readline(self, timeout: float) -> str | None:
        """One line from the worker, or None when the deadline passes first."""
        out = self._proc.stdout
        ready, _, _ = select.select([out], [], [], timeout)
        return out.readline() if ready else None

    def _start(self) -> None:
        self._proc = subprocess.Popen(  # noqa: S603 - our own module, fixed arguments
            [sys.executable, "-m", "dagmath_viz._verify_worker"],
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

    def close(self) -> None:
        """Stop the worker process (it is restarted on the next check)."""
        with self._lock:
            self._stop()


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


def is_equivalent(reference: str, prediction: str) -> bool:
    """``verify(reference, prediction)`` through the default checker."""
    return default_checker().check(reference, prediction).equivalent
