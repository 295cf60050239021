"""The gold arithmetic-check worker: a JSON list of node texts per stdin line, one JSON
answer per stdout line (the first false claim, or ``null``).

Run by :class:`dagmath_viz.generation.gold_checks.ArithmeticChecker` as ``python -m
dagmath_viz.generation.arith_worker PARENT_PID``. SymPy on a node a model wrote can run
for ever inside C code (``\\binom{100000000}{50000000} = 1`` computes the binomial), where
no thread or signal of the caller can stop it: here the caller's deadline kills the whole
process. The worker dies with its starter (``PR_SET_PDEATHSIG`` on Linux, checked against
``PARENT_PID`` for a starter that ended before it was set), and its address space is
capped, so a claim that builds a huge number ends in ``MemoryError``, not in swapping.
"""

from __future__ import annotations

import json
import os
import signal
import sys

#: Address space the worker may use (SymPy and the LaTeX parser need about 200 MB).
MEMORY_CAP_BYTES = 2 * 1024**3
#: Longest answer line written (a fault quotes its equation).
MAX_ANSWER_CHARS = 400


def main() -> None:  # pragma: no cover - exercised through ArithmeticChecker
    _die_with_parent(int(sys.argv[1]) if len(sys.argv) > 1 else None)
    _cap_memory()
    from dagmath_viz.generation.gold_checks import arithmetic_faults

    arithmetic_faults(["$1 + 1 = 2$"])  # imports SymPy and the parser before the first check
    for line in sys.stdin:
        try:
            fault = arithmetic_faults(json.loads(line))
        except Exception as exc:  # noqa: BLE001 - MemoryError, a parser's own errors
            fault = f"the arithmetic check failed ({type(exc).__name__})"
        if fault is not None and len(fault) > MAX_ANSWER_CHARS:
            fault = fault[:MAX_ANSWER_CHARS] + "..."
        sys.stdout.write(json.dumps(fault) + "\n")
        sys.stdout.flush()


def _die_with_parent(parent: int | None) -> None:  # pragma: no cover - the child
    """Ask Linux to kill this process when the thread that started it ends."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if parent is not None and os.getppid() != parent:  # the starter was already gone
        sys.exit(0)


def _cap_memory() -> None:  # pragma: no cover - the child
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = MEMORY_CAP_BYTES if hard == resource.RLIM_INFINITY else min(hard, MEMORY_CAP_BYTES)
        if soft == resource.RLIM_INFINITY or soft > cap:
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ImportError, ValueError, OSError):
        pass


if __name__ == "__main__":  # pragma: no cover
    main()
