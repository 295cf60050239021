"""Time ``dagmath gsm solve --text`` on 3,500 problems and measure its accuracy.

Two sets (the issue's budget: 3,500 problems in under 60 s, at least 98 % right):

- ``generated`` (default): a fresh set written in the authors' own sentence templates by
  :func:`dagmath_viz.logic.authorstyle.authors_problem_set` (the paired generator, every
  irrelevant-axiom structure, every overlap condition and the controls, depths 2 and 3),
  with the generator's answers. Generating the set is not timed.
- ``sample``: the 155 problems of ``../shared/data/mathgap-sample`` (made by the authors'
  generator) repeated with fresh ids up to N lines.

The command then runs once, in-process, end to end (reading, solving, writing). Prints the
time, the time per problem, the share of the 60 s budget used, the share of problems answered
correctly, and the wrong or unreadable ones by variant.

Usage: ``python benchmarks/gsm_text.py [N] [--seed S] [--set generated|sample] [--depths 2,3]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter
from pathlib import Path

from dagmath_viz.cli.gsm import main
from dagmath_viz.logic.authorstyle import authors_problem_set

SAMPLE = Path(__file__).parents[1] / ".." / "shared" / "data" / "mathgap-sample" / "problems.jsonl"
BUDGET_S = 60.0


def _rows(which: str, n: int, seed: int, depths: tuple[int, ...]) -> list[dict]:
    if which == "sample":
        base = [json.loads(x) for x in SAMPLE.read_text("utf-8").splitlines() if x.strip()]
        return [dict(base[i % len(base)], id=f"{i}:{base[i % len(base)]['id']}") for i in range(n)]
    return [p.to_dict() for p in authors_problem_set(n, seed=seed, depths=depths)]


def run(n: int, which: str, seed: int, depths: tuple[int, ...] = (2, 3)) -> None:
    t0 = time.perf_counter()
    rows = _rows(which, n, seed, depths)
    print(f"{which} set: {len(rows)} problems made in {time.perf_counter() - t0:.1f} s (untimed)")
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
    print(f"answered correctly: {right}/{n} ({100 * right / n:.2f} %)")
    variant = {r["id"]: (r.get("irrelevant"), r.get("overlap"), r.get("control")) for r in rows}
    wrong = Counter(variant[g["id"]] for g in got if g.get("answer") != answers[g["id"]])
    for v, k in sorted(wrong.items(), key=str):
        print(f"  wrong in {v}: {k}")
    for g in [g for g in got if g.get("answer") != answers[g["id"]]][:5]:
        print(f"  e.g. {g['id']}: {g.get('error') or g.get('answer')}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", nargs="?", type=int, default=3500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--set", dest="which", choices=("generated", "sample"), default="generated")
    ap.add_argument("--depths", default="2,3", help="proof depths of the generated set, e.g. 2,3,4")
    a = ap.parse_args()
    run(a.n, a.which, a.seed, tuple(int(d) for d in a.depths.split(",")))
