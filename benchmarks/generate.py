"""Synthetic evaluation runs in the official layout, sized like real model output.

``<root>/<model>/<dataset>/problem_<id>_all_samples.json`` (a JSON array of samples, written
with ``indent=2`` as the DAG-MATH pipeline does) plus ``<root>/answers.jsonl`` (reference
answer and difficulty per dataset and problem). Seeded: the same arguments give the same
bytes.

What makes the data realistic for a benchmark:

- 10-150 steps per trajectory (uniform; 80 on average), a ``thinking`` of 180-480
  characters and a ``text`` of 40-140 characters per step, so a trajectory is ~37 KB of
  JSON (20,000 trajectories are ~740 MB, as in the issue);
- dependencies mostly on the previous step, sometimes on older steps or the givens; some
  trajectories closed, most with a few dead ends, about 1% illegal (a forward reference or
  a missing parent);
- answers that repeat within a problem as real samples do: per problem a reference (an
  integer, a fraction such as ``\\frac{3}{7}`` or an expression such as ``2\\sqrt{3}``),
  the right answer in its usual forms (``3/7``, ``\\dfrac{3}{7}``, ``\\sqrt{12}``), a few
  recurring wrong answers, a long tail of one-off wrong answers and ~1% unboxed finals.

Usage: ``python benchmarks/generate.py N OUT_DIR [--seed S]``.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import orjson

MODELS = ("atlas-7b", "borealis-14b", "cirrus-32b", "dune-70b", "ember-8x22b")
DATASETS = ("math500", "aime24", "olympiad")
SAMPLES = 32
#: Part of the folder name of a generated run: bump it when the output changes.
VERSION = 2
#: per-model chance of a right answer and of a logically closed trajectory
MODEL_SKILL = {
    "atlas-7b": (0.45, 0.25),
    "borealis-14b": (0.55, 0.35),
    "cirrus-32b": (0.65, 0.45),
    "dune-70b": (0.75, 0.55),
    "ember-8x22b": (0.82, 0.6),
}

_WORDS = (
    "we consider the expression obtained in step and substitute the value of x into the "
    "equation which gives a simpler form since both sides are positive we may square them "
    "this follows from the triangle inequality applied to the previous bound note that the "
    "sum telescopes so only the first and last terms remain therefore the number of cases is "
    "the product of the choices for each position by symmetry it suffices to treat the case "
    "where a is at least b using the identity for the difference of squares we factor the "
    "numerator and cancel the common factor with the denominator hence the remainder modulo "
    "seven is determined by the exponent modulo six combining this with the constraint found "
    "earlier the only admissible value is the one computed above"
).split()
_MATH = (
    r"$x^2 + 2x + 1 = (x+1)^2$",
    r"$\frac{a+b}{2} \geq \sqrt{ab}$",
    r"$\sum_{k=1}^{n} k = \frac{n(n+1)}{2}$",
    r"$2^{10} \equiv 2 \pmod{11}$",
    r"$\binom{n}{k} = \binom{n}{n-k}$",
    r"$|z|^2 = z\bar{z}$",
    r"$\angle ABC = 90^\circ$",
    r"$f(x) = 3x - 5$",
    r"$a_n = a_{n-1} + a_{n-2}$",
    r"$\sin^2\theta + \cos^2\theta = 1$",
)


def _sentence_pool(rng: random.Random, n: int, lo: int, hi: int) -> list[str]:
    """``n`` pieces of prose with LaTeX, each ``lo``-``hi`` characters long."""
    pool = []
    for _ in range(n):
        target = rng.randint(lo, hi)
        parts: list[str] = []
        length = 0
        while length < target:
            piece = rng.choice(_MATH) if rng.random() < 0.15 else rng.choice(_WORDS)
            parts.append(piece)
            length += len(piece) + 1
        text = " ".join(parts)[:target].rstrip()
        pool.append(text[0].upper() + text[1:] + ".")
    return pool


# --------------------------------------------------------------------------- answers


@dataclass(frozen=True)
class AnswerSet:
    """One problem's reference, the right answer's usual forms and recurring wrong ones."""

    reference: str
    right_forms: tuple[str, ...]  # first is the usual one
    wrong: tuple[str, ...]


def _integer_answers(rng: random.Random) -> AnswerSet:
    v = rng.choice([rng.randint(0, 100), rng.randint(100, 1000), rng.randint(1000, 10**6)])
    wrong = sorted({v + d for d in (1, -1, 2, 10, v) if v + d >= 0} - {v})  # sorted: seeded
    forms = (str(v), f"{v}.0", f"{v:,}" if v >= 1000 else f" {v} ")
    return AnswerSet(str(v), forms, tuple(map(str, wrong)))


def _fraction_answers(rng: random.Random) -> AnswerSet:
    while True:
        p, q = rng.randint(1, 40), rng.randint(2, 60)
        if math.gcd(p, q) == 1:
            break
    forms = (rf"\frac{{{p}}}{{{q}}}", f"{p}/{q}", rf"\dfrac{{{p}}}{{{q}}}")
    forms = (*forms, rf"\frac{{{2 * p}}}{{{2 * q}}}")
    if q in (2, 4, 5, 8, 10, 20, 25, 40, 50):
        forms = (*forms, str(p / q))  # a decimal, as models sometimes write
    wrong = (rf"\frac{{{q}}}{{{p}}}", rf"\frac{{{p + 1}}}{{{q}}}", f"{p}/{q + 1}", str(p * q))
    return AnswerSet(rf"\frac{{{p}}}{{{q}}}", forms, wrong)


def _expression_answers(rng: random.Random) -> AnswerSet:
    kind = rng.randrange(5)
    a, b = rng.randint(2, 9), rng.choice([2, 3, 5, 6, 7])
    if kind == 0:
        return AnswerSet(
            rf"{a}\sqrt{{{b}}}",
            (rf"{a}\sqrt{{{b}}}", rf"\sqrt{{{a * a * b}}}", rf"{a} \sqrt{b}"),
            (rf"{b}\sqrt{{{a}}}", rf"{a + 1}\sqrt{{{b}}}", str(a * b), rf"\sqrt{{{a * b}}}"),
        )
    if kind == 1:
        return AnswerSet(
            rf"\frac{{{a}\pi}}{{{b}}}",
            (rf"\frac{{{a}\pi}}{{{b}}}", rf"\frac{{{a}}}{{{b}}}\pi", rf"{a}\pi/{b}"),
            (rf"\frac{{{b}\pi}}{{{a}}}", rf"\frac{{\pi}}{{{b}}}", rf"{a}\pi"),
        )
    if kind == 2:
        return AnswerSet(
            rf"{a}+{b}\sqrt{{2}}",
            (rf"{a}+{b}\sqrt{{2}}", rf"{b}\sqrt{{2}}+{a}", rf"{a} + {b}\sqrt2"),
            (rf"{a}-{b}\sqrt{{2}}", rf"{a + b}\sqrt{{2}}", str(a + b)),
        )
    if kind == 3:
        return AnswerSet(
            rf"x^2-{a * a}",
            (rf"x^2-{a * a}", rf"(x-{a})(x+{a})", rf"-{a * a}+x^2"),
            (rf"x^2+{a * a}", rf"(x-{a})^2", rf"x^2-{a}"),
        )
    return AnswerSet(
        rf"({a}, {b})",
        (rf"({a}, {b})", rf"({a},{b})", rf"\left({a}, {b}\right)"),
        (rf"({b}, {a})", rf"({a}, {b + 1})", str(a)),
    )


def answer_set(rng: random.Random) -> AnswerSet:
    roll = rng.random()
    if roll < 0.5:
        return _integer_answers(rng)
    if roll < 0.75:
        return _fraction_answers(rng)
    return _expression_answers(rng)


def _prediction(rng: random.Random, answers: AnswerSet, p_right: float) -> str:
    if rng.random() < p_right:
        forms = answers.right_forms
        roll = rng.random()  # the usual form mostly, the others now and then
        return forms[0] if roll < 0.8 or len(forms) == 1 else rng.choice(forms[1:])
    if rng.random() < 0.1:  # the long tail: a one-off wrong answer
        return str(rng.randint(0, 5000))
    weights = [1.0 / (k + 1) for k in range(len(answers.wrong))]
    return rng.choices(answers.wrong, weights=weights)[0]


# --------------------------------------------------------------------------- trajectories


class _Pools:
    def __init__(self, seed: int) -> None:
        rng = random.Random(f"pools-{seed}")
        self.thinking = _sentence_pool(rng, 3000, 100, 400)
        self.text = _sentence_pool(rng, 3000, 30, 100)
        self.problem = _sentence_pool(rng, 500, 150, 600)


def _parents(rng: random.Random, n: int, closed: bool, illegal: bool) -> list[list[int] | None]:
    givens = rng.randint(1, min(4, n - 1))
    deps: list[list[int] | None] = [None] * givens
    for i in range(givens, n):  # 0-based positions; ids are position + 1
        ps = {i - 1} if rng.random() < 0.8 else {rng.randrange(i)}
        if rng.random() < 0.4:
            ps.add(rng.randrange(i))
        if rng.random() < 0.15:
            ps.add(rng.randrange(givens))
        deps.append(sorted(ps))
    cited = {p for d in deps if d for p in d}
    fix = 1.0 if closed else rng.choice((0.5, 0.8, 0.95))
    for i in range(n - 1):
        if i not in cited and rng.random() < fix:
            later = rng.randint(max(i + 1, givens), n - 1)
            deps[later] = sorted({*(deps[later] or []), i})
    out = [None if d is None else [p + 1 for p in d] for d in deps]
    if illegal:
        i = rng.randint(max(givens, 1), n - 1)
        bad = n + 5 if rng.random() < 0.5 else i + 1  # a missing parent or a self reference
        out[i] = [*(out[i] or []), bad]
    return out


def _trajectory(rng, pools, pid, sid, model, answers, problem_text) -> dict:
    p_right, p_closed = MODEL_SKILL[model]
    n = rng.randint(10, 150)
    deps = _parents(rng, n, rng.random() < p_closed, rng.random() < 0.01)
    steps = [
        {
            "step_id": i + 1,
            "thinking": rng.choice(pools.thinking),
            "direct_dependent_steps": deps[i],
            "text": rng.choice(pools.text),
        }
        for i in range(n)
    ]
    pred = _prediction(rng, answers, p_right)
    final = (
        f"The answer is {pred}."
        if rng.random() < 0.01
        else f"Therefore the final answer is $\\boxed{{{pred}}}$."
    )
    steps[-1]["text"] = final
    return {
        "problem_id": pid,
        "sample_id": sid,
        "problem_text": problem_text,
        "steps": steps,
        "final_answer": final,
        "metadata": {"model": model},
    }


def layout(n: int) -> list[tuple[str, str, int, int]]:
    """(model, dataset, problem_id, samples) per file so that the run holds ``n`` trajectories."""
    per_problem = len(MODELS) * len(DATASETS) * SAMPLES
    problems = max(1, math.ceil(n / per_problem))
    files = []
    left = n
    for p in range(problems):
        for dataset in DATASETS:
            for model in MODELS:
                take = min(SAMPLES, left)
                if take > 0:
                    files.append((model, dataset, p + 1, take))
                left -= take
    return files


def generate(n: int, root: Path, seed: int = 0) -> dict:
    """Write a run of ``n`` trajectories under ``root``; returns a summary."""
    pools = _Pools(seed)
    root.mkdir(parents=True, exist_ok=True)
    answer_rows = []
    written = 0
    total_bytes = 0
    files = layout(n)
    answers: dict[tuple[str, int], tuple[AnswerSet, str, float]] = {}
    for model, dataset, pid, samples in files:
        if (dataset, pid) not in answers:
            prng = random.Random(f"{seed}-{dataset}-{pid}")
            answers[dataset, pid] = (
                answer_set(prng),
                prng.choice(pools.problem),
                round(prng.uniform(1, 9), 1),
            )
            ans, _, difficulty = answers[dataset, pid]
            answer_rows.append(
                {
                    "dataset": dataset,
                    "problem_id": pid,
                    "answer": ans.reference,
                    "difficulty": difficulty,
                }  # fmt: skip
            )
        ans, problem_text, _ = answers[dataset, pid]
        rng = random.Random(f"{seed}-{model}-{dataset}-{pid}")
        records = [
            _trajectory(rng, pools, pid, sid, model, ans, problem_text) for sid in range(samples)
        ]
        folder = root / model / dataset
        folder.mkdir(parents=True, exist_ok=True)
        data = orjson.dumps(records, option=orjson.OPT_INDENT_2) + b"\n"
        (folder / f"problem_{pid}_all_samples.json").write_bytes(data)
        written += samples
        total_bytes += len(data)
    key = b"".join(orjson.dumps(r) + b"\n" for r in answer_rows)
    (root / "answers.jsonl").write_bytes(key)
    return {
        "trajectories": written,
        "files": len(files),
        "problems": len(answers),
        "bytes": total_bytes,
        "seed": seed,
    }


def ensure_run(n: int, data_dir: Path, seed: int = 0) -> tuple[Path, dict]:
    """``data_dir/run-<n>-seed<seed>``, generated unless a complete copy is already there."""
    import shutil

    root = data_dir / f"run-{n}-seed{seed}-v{VERSION}"
    marker = data_dir / f"{root.name}.complete.json"  # outside: the run holds data files only
    if marker.exists():
        return root, orjson.loads(marker.read_bytes())
    if root.exists():
        shutil.rmtree(root)  # an interrupted generation
    summary = generate(n, root, seed)
    marker.write_bytes(orjson.dumps(summary))
    return root, summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("n", type=int, help="number of trajectories")
    parser.add_argument("out", type=Path, help="output folder")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    summary = generate(args.n, args.out, args.seed)
    print(orjson.dumps(summary).decode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
