"""Time ``dagmath gsm solve --text`` on 3,500 of the authors' generated problems.

The 155 problems of ``../shared/data/mathgap-sample`` (the authors' generator, every variant
of 5 base problems) are repeated, with fresh ids, up to 3,500 lines (the size the issue's
budget is stated for: under 60 s), then the command runs once, in-process, end to end
(reading, solving, writing). Prints the time, the time per problem, the share of the 60 s
budget used, and the share of problems answered correctly.

Usage: ``python benchmarks/gsm_text.py [N]`` (default 3500).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from dagmath_viz.logic.cli import main

SAMPLE = Path(__file__).parents[1] / ".." / "shared" / "data" / "mathgap-sample" / "problems.jsonl"
BUDGET_S = 60.0


def run(n: int) -> None:
    base = [json.loads(x) for x in SAMPLE.read_text("utf-8").splitlines() if x.strip()]
    rows = [dict(base[i % len(base)], id=f"{i}:{base[i % len(base)]['id']}") for i in range(n)]
    answers = {r["id"]: r["answer"] for r in rows}
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "in.jsonl", Path(tmp) / "out.jsonl"
        src.write_text("".join(json.dumps({"id": r["id"], "text": r["text"]}) + "\n" for r in rows))
        t0 = time.perf_counter()
        code = main(["solve", "--text", str(src), "-o", str(out)])
        secs = time.perf_counter() - t0
        got = [json.loads(x) for x in out.read_text("utf-8").splitlines()]
    right = sum(g.get("answer") == answers[g["id"]] for g in got)
    print(f"exit {code}; {n} problems in {secs:.1f} s ({1000 * secs / n:.1f} ms each)")
    print(f"share of the {BUDGET_S:.0f} s budget: {secs / BUDGET_S:.2f}")
    print(f"answered correctly: {right}/{n} ({100 * right / n:.1f} %)")


if __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 3500)
