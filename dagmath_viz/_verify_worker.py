"""The answer-check worker process: one JSON pair per stdin line, one verdict per stdout line.

Run by :class:`dagmath_viz.answers.AnswerChecker` as ``python -m dagmath_viz._verify_worker``;
a plain subprocess (not multiprocessing) so it never re-imports the caller's ``__main__``.
The parent enforces the deadline, so math-verify's own signal timeouts are off here.
Parsed answers are memoised: a reference meets many predictions, and parsing is half the
cost of a check.
"""

from __future__ import annotations

import json
import logging
import sys

MEMO_SIZE = 4096


def main() -> None:  # pragma: no cover - exercised through AnswerChecker
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


if __name__ == "__main__":
    main()
