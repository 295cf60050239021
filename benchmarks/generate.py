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

With ``--answers math`` the reference answers follow MATH's answer types instead
(:data:`MATH_SHARES`: intervals, tuples, sets, matrices, ``\\text{}`` words, degrees, units,
percentages, multiple choice, ...), each predicted in the spellings models write, right
and wrong (``\\left(1, 2\\right)``, ``x=3``, ``45^\\circ``, ``\\$5``, ``\\text{(A)}`` vs ``A``).

Usage: ``python benchmarks/generate.py N OUT_DIR [--seed S] [--answers default|math]``.
"""

from __future__ import annotations

import argparse
import dataclasses
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
    kind: str = ""  # the answer type (MATH_SHARES' names) in the math run


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


# --------------------------------------------------------------------------- MATH's answer forms

#: ``--answers math``: each answer type of MATH's test set with its share (in %). The
#: shares are benchmarks/README.md's table ("MATH's answer forms"): where they come from is
#: said there.
MATH_SHARES = (
    ("integer", 55.0),
    ("fraction", 12.0),
    ("radical", 6.0),
    ("expression in a variable", 4.0),
    ("pi multiple", 3.0),
    ("ordered tuple", 3.0),
    ("interval", 3.0),
    ("set or list", 3.0),
    ("decimal", 2.0),
    ("matrix or vector", 2.0),
    ("text word", 1.5),
    ("equation", 1.5),
    ("degrees", 1.0),
    ("units", 1.0),
    ("multiple choice", 0.9),
    ("percentage", 0.5),
    ("mixed number", 0.3),
    ("inequality", 0.3),
)


def _coprime(rng: random.Random, lo: int, hi: int, qlo: int, qhi: int) -> tuple[int, int]:
    while True:
        p, q = rng.randint(lo, hi), rng.randint(qlo, qhi)
        if math.gcd(p, q) == 1:
            return p, q


def _m_integer(rng: random.Random) -> AnswerSet:
    v = rng.choice([rng.randint(0, 100), rng.randint(100, 1000), rng.randint(1000, 10**5)])
    var = rng.choice("xnk")
    forms = (str(v), f"{var}={v}", f"{var} = {v}", f"{v}.0", f"{v:,}" if v >= 1000 else f" {v} ")
    wrong = sorted({v + d for d in (1, -1, 2, v) if v + d >= 0} - {v})
    return AnswerSet(str(v), forms, (*map(str, wrong), f"{var}={v + 1}", f"-{v}" if v else "1"))


def _m_fraction(rng: random.Random) -> AnswerSet:
    p, q = _coprime(rng, 1, 40, 2, 60)
    s = "-" if rng.random() < 0.3 else ""
    ref = rf"{s}\frac{{{p}}}{{{q}}}" if rng.random() < 0.9 else rf"{s}\frac{{{p}}} {{ {q}}}"
    forms = [
        rf"{s}\dfrac{{{p}}}{{{q}}}",
        rf"{s}\frac{{{p}}}{{{q}}}",
        f"{s}{p}/{q}",
        rf"\frac{{{s}{p}}}{{{q}}}",
        rf"{s}\tfrac{{{p}}}{{{q}}}",
        rf"{s}\frac{{{2 * p}}}{{{2 * q}}}",
    ]
    if p < 10 and q < 10:
        forms.append(rf"{s}\frac{p}{q}")  # \frac12
    if 100 % q == 0 or q in (8, 16, 40):
        forms.append(f"{s}{p / q}")  # 0.5 for \frac12
    flip = "" if s else "-"
    wrong = (
        rf"{s}\dfrac{{{q}}}{{{p}}}",
        rf"{flip}\dfrac{{{p}}}{{{q}}}",
        rf"{s}\frac{{{p + 1}}}{{{q}}}",
        f"{s}{p / q:.2f}",
        str(p * q),
    )
    return AnswerSet(ref, tuple(forms), wrong)


def _m_radical(rng: random.Random) -> AnswerSet:
    a, b = rng.randint(2, 9), rng.choice([2, 3, 5, 6, 7])
    if rng.random() < 0.5:
        return AnswerSet(
            rf"{a}\sqrt{{{b}}}",
            (rf"{a}\sqrt{{{b}}}", rf"{a}\sqrt{b}", rf"\sqrt{{{a * a * b}}}", rf"{a} \sqrt{{{b}}}"),
            (rf"{b}\sqrt{{{a}}}", rf"{a + 1}\sqrt{{{b}}}", str(a * b), rf"\sqrt{{{a * b}}}"),
        )
    q = rng.choice([2, 3, 4, 6])
    return AnswerSet(
        rf"\frac{{\sqrt{{{b}}}}}{{{q}}}",
        (
            rf"\dfrac{{\sqrt{{{b}}}}}{{{q}}}",
            rf"\frac{{\sqrt{b}}}{{{q}}}",
            rf"\frac{{1}}{{{q}}}\sqrt{{{b}}}",
            rf"\sqrt{{{b}}}/{q}",
            rf"\frac{{{b}}}{{{q}\sqrt{{{b}}}}}",
        ),
        (
            rf"\frac{{\sqrt{{{b}}}}}{{{q + 1}}}",
            rf"\frac{{{b}}}{{{q}}}",
            rf"\frac{{\sqrt{{{q}}}}}{{{b}}}",
        ),
    )


def _m_expression(rng: random.Random) -> AnswerSet:
    a = rng.randint(2, 7)
    b = rng.choice([k for k in range(2, 10) if k != a])  # a wrong form is never right
    v = rng.choice("xntk")
    if rng.random() < 0.5:
        return AnswerSet(
            f"{a}{v}+{b}",
            (f"{a}{v}+{b}", f"{a}{v} + {b}", f"{b}+{a}{v}", rf"{a}\cdot {v}+{b}"),
            (f"{a}{v}-{b}", f"{b}{v}+{a}", f"{a}{v}", f"{a + b}{v}"),
        )
    # (v - a)(v + b) = v^2 + (b - a) v - ab
    linear = f"{'+' if b > a else '-'}{abs(b - a) if abs(b - a) > 1 else ''}{v}"
    spaced = linear.replace("+", " + ").replace("-", " - ")
    return AnswerSet(
        f"{v}^2{linear}-{a * b}",  # never v^2 - ab: b != a
        (
            f"({v}-{a})({v}+{b})",
            f"{v}^2{spaced} - {a * b}",
            f"({v}+{b})({v}-{a})",
            f"{v}^{{2}}{linear}-{a * b}",
        ),
        (f"({v}+{a})({v}-{b})", f"({v}-{a})({v}-{b})", f"{v}^2-{a * b}"),
    )


def _m_pi(rng: random.Random) -> AnswerSet:
    p, q = _coprime(rng, 1, 9, 2, 6)
    if rng.random() < 0.5:
        n = rng.randint(2, 64)
        return AnswerSet(
            rf"{n}\pi",
            (rf"{n}\pi", rf"{n} \pi", rf"\pi \cdot {n}", rf"{n}\pi"),
            (str(n), rf"{2 * n}\pi", rf"{n}\pi^2", f"{n * math.pi:.2f}"),
        )
    return AnswerSet(
        rf"\frac{{{p}\pi}}{{{q}}}",
        (
            rf"\dfrac{{{p}\pi}}{{{q}}}",
            rf"\frac{{{p}}}{{{q}}}\pi",
            rf"{p}\pi/{q}",
            rf"\frac{{{p} \pi}}{{{q}}}",
        ),
        (rf"\frac{{{p}}}{{{q}}}", rf"\frac{{{q}\pi}}{{{p}}}", rf"{p}\pi", f"{p * math.pi / q:.2f}"),
    )


def _m_tuple(rng: random.Random) -> AnswerSet:
    a, b = rng.randint(-9, 9), rng.randint(1, 9)
    p, q = _coprime(rng, 1, 9, 2, 5)
    if rng.random() < 0.7:
        return AnswerSet(
            f"({a},{b})" if rng.random() < 0.5 else f"({a}, {b})",
            (f"({a}, {b})", f"({a},{b})", rf"\left({a}, {b}\right)", rf"\left( {a},{b} \right)"),
            (f"({b}, {a})", f"({a}, {-b})", f"({a}, {b}, 0)", str(a), f"[{a}, {b}]"),
        )
    return AnswerSet(
        rf"\left( \frac{{{p}}}{{{q}}}, {b} \right)",
        (
            rf"\left(\frac{{{p}}}{{{q}}}, {b}\right)",
            rf"(\dfrac{{{p}}}{{{q}}},{b})",
            f"({p}/{q}, {b})",
        ),
        (rf"\left({b}, \frac{{{p}}}{{{q}}}\right)", rf"\left(\frac{{{q}}}{{{p}}}, {b}\right)"),
    )


def _m_interval(rng: random.Random) -> AnswerSet:
    a, b = rng.randint(-9, 0), rng.randint(1, 9)
    kind = rng.randrange(3)
    if kind == 0:
        return AnswerSet(
            rf"(-\infty, {b})",
            (rf"(-\infty,{b})", rf"\left(-\infty, {b}\right)", rf"(-\infty, {b})", f"x<{b}"),
            (rf"(-\infty, {b}]", rf"({b}, \infty)", rf"(-\infty, {b + 1})"),
        )
    if kind == 1:
        return AnswerSet(
            f"[{a},{b})",
            (f"[{a}, {b})", rf"\left[{a}, {b}\right)", f"[{a},{b})"),
            (f"[{a}, {b}]", f"({a}, {b})", f"[{b}, {a})"),
        )
    return AnswerSet(
        rf"(-\infty,{a}) \cup ({b},\infty)",
        (
            rf"(-\infty, {a}) \cup ({b}, \infty)",
            rf"(-\infty,{a})\cup({b},\infty)",
            rf"({b},\infty)\cup(-\infty,{a})",
            rf"\left(-\infty, {a}\right) \cup \left({b}, \infty\right)",
        ),
        (rf"({a}, {b})", rf"(-\infty,{a}] \cup [{b},\infty)", rf"({b},\infty)"),
    )


def _m_set(rng: random.Random) -> AnswerSet:
    a, b = rng.randint(-9, -1), rng.randint(1, 9)
    c = b + rng.randint(1, 5)
    if rng.random() < 0.6:
        return AnswerSet(
            f"{a}, {b}",
            (f"{a}, {b}", f"{b}, {a}", f"{a},{b}", rf"\{{{a}, {b}\}}", f"{b},{a}"),
            (str(a), str(b), f"{a}, {-b}", f"{a}, {b}, {c}"),
        )
    return AnswerSet(
        f"{a}, {b}, {c}",
        (f"{a}, {b}, {c}", f"{c}, {b}, {a}", rf"\{{{a},{b},{c}\}}", f"{a},{b},{c}"),
        (f"{a}, {b}", f"{a}, {b}, {c + 1}", str(c)),
    )


def _m_decimal(rng: random.Random) -> AnswerSet:
    whole, frac = rng.randint(0, 99), rng.randint(1, 99)
    v = f"{whole}.{frac:02d}".rstrip("0")
    x = float(v)
    return AnswerSet(
        v,
        (v, f"{x:.3f}", f"{x:.2f}" if len(v.split(".")[1]) == 1 else v),
        (
            f"{x + 0.01:.2f}",
            f"{x:.1f}" if len(v.split(".")[1]) == 2 else f"{x + 0.1:.1f}",
            str(round(x)),
        ),
    )


def _m_matrix(rng: random.Random) -> AnswerSet:
    e = [rng.randint(-9, 9) for _ in range(4)]
    if rng.random() < 0.6:
        a, b = e[:2]
        return AnswerSet(
            rf"\begin{{pmatrix}} {a} \\ {b} \end{{pmatrix}}",
            (
                rf"\begin{{pmatrix}} {a} \\ {b} \end{{pmatrix}}",
                rf"\begin{{pmatrix}}{a}\\{b}\end{{pmatrix}}",
                rf"\begin{{bmatrix}} {a} \\ {b} \end{{bmatrix}}",
                rf"\left(\begin{{matrix}} {a} \\ {b} \end{{matrix}}\right)",
            ),
            (
                rf"\begin{{pmatrix}} {b} \\ {a} \end{{pmatrix}}",
                rf"\begin{{pmatrix}} {a} & {b} \end{{pmatrix}}",
                f"({a}, {b})",
                rf"\begin{{pmatrix}} {a} \\ {-b - 1} \end{{pmatrix}}",
            ),
        )
    a, b, c, d = e
    return AnswerSet(
        rf"\begin{{pmatrix}} {a} & {b} \\ {c} & {d} \end{{pmatrix}}",
        (
            rf"\begin{{pmatrix}} {a} & {b} \\ {c} & {d} \end{{pmatrix}}",
            rf"\begin{{pmatrix}}{a}&{b}\\{c}&{d}\end{{pmatrix}}",
            rf"\begin{{bmatrix}} {a} & {b} \\ {c} & {d} \end{{bmatrix}}",
        ),
        (
            rf"\begin{{pmatrix}} {a} & {c} \\ {b} & {d} \end{{pmatrix}}",
            rf"\begin{{pmatrix}} {a} & {b} \\ {c} & {d + 1} \end{{pmatrix}}",
            str(a * d - b * c),
        ),
    )


_WORDS_ANSWERS = (
    ("Monday", "Tuesday"), ("even", "odd"), ("Devon", "Evan"), ("yes", "no"),
    ("circle", "parabola"), ("Friday", "Thursday"),
)  # fmt: skip


def _m_text(rng: random.Random) -> AnswerSet:
    right, wrong = rng.choice(_WORDS_ANSWERS)
    return AnswerSet(
        rf"\text{{{right}}}",
        (
            rf"\text{{{right}}}",
            right,
            rf"\text{{ {right} }}",
            rf"\textbf{{{right}}}",
            rf"\text{{{right.lower()}}}",
        ),
        (rf"\text{{{wrong}}}", wrong, rf"\text{{{right[:3]}}}"),
    )


def _m_equation(rng: random.Random) -> AnswerSet:
    a, b = rng.randint(2, 9), rng.randint(1, 9)
    if rng.random() < 0.5:
        return AnswerSet(
            f"y = {a}x + {b}",
            (f"y={a}x+{b}", f"y = {a}x + {b}", f"{a}x+{b}", f"y = {b} + {a}x"),
            (f"y={a}x-{b}", f"y={b}x+{a}", f"x={a}y+{b}", f"{a}x+{b + 1}"),
        )
    return AnswerSet(
        f"x = {b}",
        (f"x={b}", f"x = {b}", str(b), f"x={b}.0"),
        (f"x={b + 1}", f"y={b}", str(-b)),
    )


def _m_degrees(rng: random.Random) -> AnswerSet:
    v = rng.choice([15, 30, 36, 45, 60, 72, 75, 90, 105, 120, 135, 150])
    return AnswerSet(
        rf"{v}^\circ" if rng.random() < 0.5 else str(v),
        (rf"{v}^\circ", str(v), rf"{v}^{{\circ}}", rf"{v} ^\circ"),
        (rf"{180 - v}^\circ", str(v + 1), rf"\frac{{\pi}}{{{180 // math.gcd(v, 180)}}}"),
    )


def _m_units(rng: random.Random) -> AnswerSet:
    v = rng.randint(2, 500)
    if rng.random() < 0.5:
        cents = rng.choice(["", ".50", ".25", ".90"])
        ref = rf"\${v}{cents}"
        return AnswerSet(
            ref,
            (rf"\${v}{cents}", f"{v}{cents}", rf"\$ {v}{cents}", rf"{v}{cents}\text{{ dollars}}"),
            (rf"\${v + 1}{cents}", f"{v * 100}", rf"\${v}.05"),
        )
    unit = rng.choice(["cm", "inches", "square units", "meters", "feet", "hours"])
    return AnswerSet(
        rf"{v}\text{{ {unit}}}" if rng.random() < 0.5 else str(v),
        (str(v), rf"{v}\text{{ {unit}}}", rf"{v} \text{{ {unit}}}", rf"{v}\text{{{unit}}}"),
        (
            rf"{v + 1}\text{{ {unit}}}",
            str(2 * v),
            rf"{v}\text{{ {unit}}}^2" if unit == "cm" else str(v - 1),
        ),
    )


def _m_choice(rng: random.Random) -> AnswerSet:
    letter, other = rng.sample("ABCDE", 2)
    return AnswerSet(
        rf"\text{{({letter})}}",
        (
            rf"\text{{({letter})}}",
            letter,
            f"({letter})",
            rf"\textbf{{({letter})}}",
            rf"\text{{{letter}}}",
        ),
        (rf"\text{{({other})}}", other, f"({other})"),
    )


def _m_percent(rng: random.Random) -> AnswerSet:
    v = rng.choice([5, 10, 12.5, 20, 25, 30, 40, 50, 60, 75, 80])
    s = f"{v:g}"
    return AnswerSet(
        rf"{s}\%" if rng.random() < 0.6 else s,
        (rf"{s}\%", s, rf"{s} \%", f"{v / 100:g}"),
        (rf"{100 - v:g}\%", rf"{v / 100:g}\%", rf"{v + 5:g}\%"),
    )


def _m_mixed(rng: random.Random) -> AnswerSet:
    w = rng.randint(1, 9)
    p, q = _coprime(rng, 1, 7, 2, 8)
    if p >= q:
        p, q = 1, q
    return AnswerSet(
        rf"{w}\frac{{{p}}}{{{q}}}",
        (
            rf"\frac{{{w * q + p}}}{{{q}}}",
            rf"{w}\frac{{{p}}}{{{q}}}",
            rf"\dfrac{{{w * q + p}}}{{{q}}}",
            f"{(w * q + p) / q:g}" if 100 % q == 0 else rf"{w}\tfrac{{{p}}}{{{q}}}",
        ),
        (rf"\frac{{{w * p}}}{{{q}}}", rf"{w}\frac{{{p + 1}}}{{{q}}}", rf"\frac{{{w + p}}}{{{q}}}"),
    )


def _m_inequality(rng: random.Random) -> AnswerSet:
    b = rng.randint(-9, 9)
    return AnswerSet(
        rf"x \le {b}",
        (rf"x\le {b}", rf"x \leq {b}", rf"x\leq{b}", rf"(-\infty, {b}]"),
        (rf"x < {b}", rf"x \ge {b}", rf"x \le {b + 1}"),
    )


_MATH_KINDS = {
    "integer": _m_integer, "fraction": _m_fraction, "radical": _m_radical,
    "expression in a variable": _m_expression, "pi multiple": _m_pi,
    "ordered tuple": _m_tuple, "interval": _m_interval, "set or list": _m_set,
    "decimal": _m_decimal, "matrix or vector": _m_matrix, "text word": _m_text,
    "equation": _m_equation, "degrees": _m_degrees, "units": _m_units,
    "multiple choice": _m_choice, "percentage": _m_percent, "mixed number": _m_mixed,
    "inequality": _m_inequality,
}  # fmt: skip


def math_answer_set(rng: random.Random) -> AnswerSet:
    """One problem's answers with MATH's answer types in :data:`MATH_SHARES`' proportions."""
    names = [name for name, _ in MATH_SHARES]
    kind = rng.choices(names, weights=[share for _, share in MATH_SHARES])[0]
    return dataclasses.replace(_MATH_KINDS[kind](rng), kind=kind)


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


def _trajectory(rng, pools, pid, sid, model, answers, problem_text, answer_rng=None) -> dict:
    """One sample; its final answer is drawn from ``answer_rng`` when given (else ``rng``)."""
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
    final = _final(answer_rng or rng, answers, p_right)
    steps[-1]["text"] = final
    return {
        "problem_id": pid,
        "sample_id": sid,
        "problem_text": problem_text,
        "steps": steps,
        "final_answer": final,
        "metadata": {"model": model},
    }


def _final(rng: random.Random, answers: AnswerSet, p_right: float) -> str:
    """The final step's text: the boxed prediction, ~1% of the time unboxed in a sentence."""
    pred = _prediction(rng, answers, p_right)
    if rng.random() < 0.01:
        return f"The answer is {pred}."
    return f"Therefore the final answer is $\\boxed{{{pred}}}$."


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


def generate(n: int, root: Path, seed: int = 0, distribution: str = "default") -> dict:
    """Write a run of ``n`` trajectories under ``root``; returns a summary.

    ``distribution`` is that of the reference answers: ``default`` (integers, fractions,
    a few expressions: the runs measured since issue 6) or ``math`` (MATH's answer types,
    :data:`MATH_SHARES`, each in the spellings models write).
    """
    root.mkdir(parents=True, exist_ok=True)
    answer_rows = []
    written = 0
    total_bytes = 0
    files = layout(n)
    for (model, dataset, pid, _), row, records in _files(files, seed, distribution):
        if row is not None:
            answer_rows.append(row)
        folder = root / model / dataset
        folder.mkdir(parents=True, exist_ok=True)
        data = orjson.dumps(records, option=orjson.OPT_INDENT_2) + b"\n"
        (folder / f"problem_{pid}_all_samples.json").write_bytes(data)
        written += len(records)
        total_bytes += len(data)
    key = b"".join(orjson.dumps(r) + b"\n" for r in answer_rows)
    (root / "answers.jsonl").write_bytes(key)
    return {
        "trajectories": written,
        "files": len(files),
        "problems": len(answer_rows),
        "bytes": total_bytes,
        "seed": seed,
        "answers": distribution,
    }


def answer_pairs(n: int, seed: int = 0) -> list[tuple[str, str, str]]:
    """(answer type, reference, final step's text) of every trajectory of the ``math`` run
    that :func:`generate` writes for ``n`` and ``seed``, without making its steps.

    The math run draws each sample's answer from a stream of its own, so its answers are
    the same whether or not the steps are made (the tests check its verdicts pair by pair).
    """
    out = []
    for (model, dataset, pid, samples), answers in _answer_sets(layout(n), seed, "math"):
        arng = random.Random(f"{seed}-{model}-{dataset}-{pid}-answers")
        p_right = MODEL_SKILL[model][0]
        for _ in range(samples):
            out.append((answers.kind, answers.reference, _final(arng, answers, p_right)))
    return out


def _files(files: list, seed: int, distribution: str):
    """(file, its answer-key row the first time its problem is met, else None, its records)."""
    pools = _Pools(seed)
    seen: set[tuple[str, int]] = set()
    texts: dict[tuple[str, int], str] = {}
    for file, ans in _answer_sets(files, seed, distribution, pools, texts):
        model, dataset, pid, samples = file
        rng = random.Random(f"{seed}-{model}-{dataset}-{pid}")
        arng = (
            random.Random(f"{seed}-{model}-{dataset}-{pid}-answers")
            if distribution != "default"
            else None  # today's run: one stream per file, its bytes unchanged
        )
        text, difficulty = texts[dataset, pid]
        records = [
            _trajectory(rng, pools, pid, sid, model, ans, text, arng) for sid in range(samples)
        ]
        row = None
        if (dataset, pid) not in seen:
            seen.add((dataset, pid))
            row = {
                "dataset": dataset,
                "problem_id": pid,
                "answer": ans.reference,
                "difficulty": difficulty,
            }  # fmt: skip
        yield file, row, records


def _answer_sets(files, seed, distribution, pools=None, texts=None):
    """(file, its problem's AnswerSet); ``texts`` gets (problem text, difficulty) per problem."""
    pick = {"default": answer_set, "math": math_answer_set}[distribution]
    problem_texts = pools.problem if pools is not None else None
    cache: dict[tuple[str, int], AnswerSet] = {}
    for file in files:
        _, dataset, pid, _ = file
        if (dataset, pid) not in cache:
            prng = random.Random(f"{seed}-{dataset}-{pid}")
            cache[dataset, pid] = pick(prng)
            if texts is not None:
                texts[dataset, pid] = (
                    prng.choice(problem_texts),
                    round(prng.uniform(1, 9), 1),
                )
        yield file, cache[dataset, pid]


def ensure_run(
    n: int, data_dir: Path, seed: int = 0, distribution: str = "default"
) -> tuple[Path, dict]:
    """``data_dir/run-<n>-seed<seed>[-math]``, generated unless a complete copy is there."""
    import shutil

    kind = "" if distribution == "default" else f"-{distribution}"
    root = data_dir / f"run-{n}-seed{seed}{kind}-v{VERSION}"
    marker = data_dir / f"{root.name}.complete.json"  # outside: the run holds data files only
    if marker.exists():
        return root, orjson.loads(marker.read_bytes())
    if root.exists():
        shutil.rmtree(root)  # an interrupted generation
    summary = generate(n, root, seed, distribution)
    marker.write_bytes(orjson.dumps(summary))
    return root, summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("n", type=int, help="number of trajectories")
    parser.add_argument("out", type=Path, help="output folder")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--answers",
        choices=("default", "math"),
        default="default",
        help="reference answers: today's mix (default) or MATH's answer forms (math)",
    )
    args = parser.parse_args(argv)
    summary = generate(args.n, args.out, args.seed, args.answers)
    print(orjson.dumps(summary).decode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
