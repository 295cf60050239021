"""The exact reader of common answer forms against math-verify, spelling by spelling.

Hand-worked cases first (each verdict worked out from the mathematics), then a
differential test: thousands of generated spellings of the same and of nearby values, each
pair checked by math-verify itself (through the answer worker, no fast path) and by
:func:`exact_verdict`; wherever the exact reader gives a verdict it must be math-verify's.
"""

from __future__ import annotations

import random

import pytest

from dagmath_viz.answers.check import AnswerChecker
from dagmath_viz.answers.exactforms import exact_verdict, read_value


@pytest.mark.parametrize(
    ("reference", "prediction", "expected"),
    [
        (r"2\sqrt{3}", r"\sqrt{12}", True),  # sqrt(12) = sqrt(4*3) = 2 sqrt(3)
        (r"2\sqrt{3}", r"3\sqrt{2}", False),  # 3.46... vs 4.24...
        (r"3+2\sqrt{2}", r"2\sqrt2+3", True),
        (r"3+2\sqrt{2}", r"3-2\sqrt{2}", False),
        (r"\frac{3\pi}{4}", r"\frac{3}{4}\pi", True),
        (r"\frac{3\pi}{4}", r"3\pi/4", True),
        (r"\frac{3\pi}{4}", r"\frac{4\pi}{3}", False),
        (r"\frac{1}{\sqrt{2}}", r"\frac{\sqrt{2}}{2}", True),  # rationalised
        ("x^2-49", "(x-7)(x+7)", True),
        ("x^2-49", "(x-7)^2", False),  # 2x^2... differs: x^2-14x+49
        ("(2, 3)", r"\left(2,3\right)", True),
        ("(2, 3)", "(3, 2)", False),
        (r"\dfrac{6}{14}", "3/7", True),
        ("0.25", r"\frac{1}{4}", True),
        ("(5, 6)", "5", False),  # a pair is no number
        ("(5, 6)", "(5, 6, 7)", False),
        ("12", "The answer is 12.", True),
        ("(3, 6)", "The answer is (3, 6).", None),  # math-verify says no: left to it
        (r"2\pi", r"The answer is 2\pi.", None),  # the same
        ("12", "The final answer is $12$", None),  # the same
        (r"4\sqrt{2}", r"The answer is 2\sqrt{4}.", False),  # 5.66 vs 4
        ("1234567", "1,234,567", True),  # thousands separators, as math-verify reads them
        ("1234567", "1,334,567", False),
        ("618307", "The answer is 618306.", False),  # exact integers: exactly compared
    ],
)
def test_hand_worked(reference: str, prediction: str, expected: bool | None) -> None:
    assert exact_verdict(reference, prediction) is expected


@pytest.mark.parametrize(
    "text",
    [
        "the answer is 5",
        r"\sqrt23",  # \sqrt{2}3 in LaTeX, easily misread
        "2 3",  # 23? 2*3?
        "12,34",  # not a thousands separator: a pair?
        r"\sqrt[3]{8}",
        "x = 5",
        r"5\text{ cm}",
        "007",
        "",
    ],
)
def test_unread_forms_go_to_math_verify(text: str) -> None:
    assert read_value(text) is None
    assert exact_verdict("5", text) is None


# ------------------------------------------------------------------ differential


def _spellings(rng: random.Random) -> list[tuple[str, str]]:
    """Pairs of answer spellings: same value in other forms, and nearby other values."""
    pairs: list[tuple[str, str]] = []
    for _ in range(60):
        p, q = rng.randint(1, 60), rng.randint(2, 60)
        k = rng.randint(2, 5)
        fracs = [
            rf"\frac{{{p}}}{{{q}}}",
            rf"\dfrac{{{p}}}{{{q}}}",
            rf"\tfrac{{{p}}}{{{q}}}",
            f"{p}/{q}",
            rf"\frac{{{k * p}}}{{{k * q}}}",
            rf"-\frac{{{p}}}{{{q}}}",
            rf"\frac{{-{p}}}{{{q}}}",
            rf"\frac{{{q}}}{{{p}}}",
            rf"\frac{{{p + 1}}}{{{q}}}",
            f"{p / q:.6g}",
            f"{p / q:.3f}",
        ]
        pairs += [(rng.choice(fracs[:5]), f) for f in fracs]
        a, b = rng.randint(1, 9), rng.choice([2, 3, 5, 6, 7, 10, 11])
        rads = [
            rf"{a}\sqrt{{{b}}}",
            rf"\sqrt{{{a * a * b}}}",
            rf"{a} \sqrt{b}",
            rf"{a}\cdot\sqrt{{{b}}}",
            rf"\sqrt{{{b}}}\cdot {a}",
            rf"{b}\sqrt{{{a}}}",
            rf"{a + 1}\sqrt{{{b}}}",
            rf"\sqrt{{{a * b}}}",
            str(a * b),
            rf"\frac{{{a}\sqrt{{{b}}}}}{{{q}}}",
            rf"\frac{{{a * b}}}{{{q}\sqrt{{{b}}}}}",
            rf"{a}\sqrt{{{b}}}/{q}",
            rf"\sqrt{{\frac{{{a * a * b}}}{{{q * q}}}}}",
        ]
        pairs += [(rads[0], r) for r in rads] + [(rads[9], r) for r in rads[9:]]
        pis = [
            rf"\frac{{{a}\pi}}{{{q}}}",
            rf"\frac{{{a}}}{{{q}}}\pi",
            rf"{a}\pi/{q}",
            rf"\frac{{{q}\pi}}{{{a}}}",
            rf"\frac{{\pi}}{{{q}}}",
            rf"{a}\pi",
            r"\pi",
            rf"{a}\pi^2",
            rf"{a * a}\pi",
        ]
        pairs += [(pis[0], s) for s in pis] + [(pis[5], s) for s in pis]
        sums = [
            rf"{a}+{b}\sqrt{{2}}",
            rf"{b}\sqrt{{2}}+{a}",
            rf"{a} + {b}\sqrt2",
            rf"{a}-{b}\sqrt{{2}}",
            rf"{a + b}\sqrt{{2}}",
            str(a + b),
            rf"\frac{{{2 * a}+{2 * b}\sqrt{{2}}}}{{2}}",
            rf"({a}+{b}\sqrt{{2}})^2",
            rf"{a * a + 2 * b * b}+{2 * a * b}\sqrt{{2}}",
        ]
        pairs += [(sums[0], s) for s in sums] + [(sums[7], s) for s in sums[7:]]
        polys = [
            rf"x^2-{a * a}",
            rf"(x-{a})(x+{a})",
            rf"-{a * a}+x^2",
            rf"x^2+{a * a}",
            rf"(x-{a})^2",
            rf"x^2-{a}",
            rf"x^{{2}}-{a * a}",
            rf"x^2-2\cdot {a}x+{a * a}",
            rf"{a}x",
            rf"x\cdot {a}",
        ]
        pairs += [(polys[0], s) for s in polys] + [(polys[4], s) for s in polys]
        pairs += [(polys[8], s) for s in polys]
        c = rng.randint(1, 9)
        tuples = [
            f"({a}, {b})",
            f"({a},{b})",
            rf"\left({a}, {b}\right)",
            f"({b}, {a})",
            f"({a}, {b + 1})",
            str(a),
            f"({a}, {b}, {c})",
            rf"(\frac{{{2 * a}}}{{2}}, {b})",
            rf"({a}, \sqrt{{{b * b}}})",
            f"[{a}, {b}]",
            f"({a}, {b}]",
            f"({a / 2}, {b})",
            rf"(\frac{{{a}}}{{2}}, {b})",
        ]
        pairs += [(tuples[0], t) for t in tuples] + [(tuples[11], t) for t in tuples]
        n = rng.choice([rng.randint(0, 100), rng.randint(100, 10**4), rng.randint(10**4, 10**7)])
        ints = [
            str(n),
            f"{n}.0",
            f" {n} ",
            f"{n + 1}",
            f"-{n}",
            f"{n}.00001",
            f"{n}.0000001",
            f"{n // 2}*2+{n % 2}",
            f"{n}^1",
            rf"{n}\%",
            f"{n / 100:g}",
            f"{n:,}",
            f"{n + 1:,}",
            f"{n * 1000 + 7:,}",
            f"{n:,}.0",
            f"{n:,}.5",
        ]
        pairs += [(ints[0], i) for i in ints] + [(ints[9], i) for i in ints]
        # unboxed finals that state the answer in a sentence
        for ref, spelt in rng.sample(pairs[-120:], 8):
            pairs.append((ref, f"The answer is {spelt}."))
            pairs.append((ref, f"The final answer is ${spelt}$"))
    return list(dict.fromkeys(pairs))


@pytest.mark.slow
def test_agrees_with_math_verify_on_generated_spellings() -> None:
    pairs = _spellings(random.Random(20261201))
    assert len(pairs) > 3000
    decided = 0
    disagreements = []
    checker = AnswerChecker(timeout=30)
    try:
        for reference, prediction in pairs:
            mine = exact_verdict(reference, prediction)
            if mine is None:
                continue
            decided += 1
            theirs = checker._ask_worker(reference, prediction)
            assert theirs.reason in ("verified", "different"), (reference, prediction, theirs)
            if theirs.equivalent is not mine:
                disagreements.append((reference, prediction, mine, theirs.equivalent))
    finally:
        checker.close()
    assert not disagreements, disagreements[:20]
    # the reader must decide most of these common forms, or it is of no use
    assert decided > 0.6 * len(pairs), (decided, len(pairs))
