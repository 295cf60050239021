"""Paired outcomes of two models (or two runs) over the problems they share.

For every problem both sides have scored samples of, each side is *right* or *wrong* on two
measures: the answer (δ_final) and perfect reasoning (closed and right, DEFINITIONS.md §1).
The pair of verdicts puts the problem in one of four cells: both right, only A, only B, both
wrong. The counts are the 2×2 table of a paired comparison; the paired test beside them is
the Overview's (:func:`~dagmath_viz.analysis.metrics.mean_interval` over the per-problem
differences of PASS@1(x) and PRR(x), bounds [−1, 1]).

A *side* is a model, or one sample id of a model (``model@1``): Thought Anchors keeps one
correct (sample 0) and one incorrect (sample 1) solution of one model per problem, so its two
"runs" can be paired, and every problem then lands in "only A" on answers by construction
(:func:`design_note` says so wherever the counts are shown).

With several samples per problem a side is right on a problem by ``rule`` (ours):
``majority`` (more than half of its scored samples right; the default), ``any`` (at least
one) or ``all``. With one sample per problem the three agree.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from dagmath_viz.analysis.metrics import Interval, mean_interval, scored_only
from dagmath_viz.formats.thought_anchors import THOUGHT_ANCHORS_DATASET
from dagmath_viz.schema import DagMathError

__all__ = [
    "CELLS",
    "CELL_LABELS",
    "MEASURES",
    "RULES",
    "PairedSummary",
    "Side",
    "design_note",
    "outcome_counts",
    "paired_outcomes",
    "parse_side",
    "side_outcomes",
    "summarise_pair",
]

#: The four cells of the paired table, in display order.
CELLS = ("both", "only_a", "only_b", "neither")
CELL_LABELS = {
    "both": "both right",
    "only_a": "only A",
    "only_b": "only B",
    "neither": "both wrong",
}
#: The two measures: the answer alone, and perfect reasoning (closed and right).
MEASURES = ("answer", "perfect")
RULES = ("majority", "any", "all")
#: Sources whose samples pair outcomes by design, and what that means for the counts.
BY_DESIGN = {
    THOUGHT_ANCHORS_DATASET: (
        "Thought Anchors keeps one solution it marks correct and one it marks incorrect "
        "for each problem, by design: PASS@1 is about 50 % by construction, and the answer "
        "counts show how the source was built, not a finding about the model."
    ),
}


@dataclass(frozen=True, slots=True)
class Side:
    """One side of a comparison: a model, or one sample id of it (``sample`` not None)."""

    model: str
    sample: int | None = None

    @property
    def label(self) -> str:
        return self.model if self.sample is None else f"{self.model}@{self.sample}"


def parse_side(text: str, models: Iterable[str]) -> Side:
    """``model`` or ``model@SAMPLE`` (a sample id of a loaded model) as a :class:`Side`.

    A loaded model's full name always wins, so a model called ``m@1`` is still a model.

    >>> parse_side("m@1", ["m"]), parse_side("m@1", ["m@1"])
    (Side(model='m', sample=1), Side(model='m@1', sample=None))
    """
    known = set(models)
    if text in known:
        return Side(text)
    model, at, sample = text.rpartition("@")
    if at and model in known and sample.isdigit() and sample.isascii():
        return Side(model, int(sample))
    shown = ", ".join(sorted(known)[:8]) + (" ..." if len(known) > 8 else "")
    raise DagMathError(f"no model {text!r} in the loaded data (models: {shown})")


def side_outcomes(df: pd.DataFrame, side: Side, rule: str = "majority") -> pd.DataFrame:
    """One row per (dataset, problem_id) the side has scored samples of.

    Columns: ``n`` (scored samples), ``pass_at_1`` and ``prr`` (the per-problem rates of
    DEFINITIONS.md §2), ``answer`` and ``perfect`` (right or wrong by ``rule``).
    """
    if rule not in RULES:
        raise DagMathError(f"unknown rule {rule!r} (one of {', '.join(RULES)})")
    s = scored_only(df)
    s = s[s["model"] == side.model]
    if side.sample is not None:
        s = s[s["sample_id"] == side.sample]
    correct = s["final_correct"].astype(bool)
    frame = pd.DataFrame({
        "dataset": s["dataset"], "problem_id": s["problem_id"].astype(str),
        "right": correct.astype(float),
        "perfect_one": (correct & s["closed"].astype(bool)).astype(float),
    })  # fmt: skip
    out = frame.groupby(["dataset", "problem_id"], sort=True).agg(
        n=("right", "size"), pass_at_1=("right", "mean"), prr=("perfect_one", "mean")
    )
    out["answer"] = _verdict(out["pass_at_1"], rule)
    out["perfect"] = _verdict(out["prr"], rule)
    return out


def _verdict(rate: pd.Series, rule: str) -> pd.Series:
    if rule == "majority":
        return rate > 0.5
    if rule == "any":
        return rate > 0.0
    return rate >= 1.0


def paired_outcomes(df: pd.DataFrame, a: Side, b: Side, rule: str = "majority") -> pd.DataFrame:
    """The problems both sides have scored samples of, one row each, sorted.

    Columns: dataset, problem_id; per side (``a_``/``b_``): n, pass_at_1, prr, answer,
    perfect; and the cell (one of :data:`CELLS`) on each measure: ``answer_cell``,
    ``perfect_cell``.
    """
    if a == b:
        raise DagMathError(f"both sides are {a.label}: choose two different ones")
    left = side_outcomes(df, a, rule).add_prefix("a_")
    right = side_outcomes(df, b, rule).add_prefix("b_")
    both = left.join(right, how="inner").reset_index()
    for measure in MEASURES:
        both[f"{measure}_cell"] = [
            _cell(x, y) for x, y in zip(both[f"a_{measure}"], both[f"b_{measure}"], strict=True)
        ]
    return both


def _cell(a_right: bool, b_right: bool) -> str:
    if a_right and b_right:
        return "both"
    if a_right:
        return "only_a"
    return "only_b" if b_right else "neither"


def outcome_counts(table: pd.DataFrame) -> dict[str, dict[str, int]]:
    """{measure: {cell: number of problems}} of a :func:`paired_outcomes` table."""
    return {m: {c: int((table[f"{m}_cell"] == c).sum()) for c in CELLS} for m in MEASURES}


def design_note(datasets: Iterable[str]) -> str | None:
    """What the counts mean where a source pairs outcomes by design; None elsewhere."""
    notes = [BY_DESIGN[d] for d in sorted(set(datasets)) if d in BY_DESIGN]
    return " ".join(notes) or None


@dataclass(frozen=True, slots=True)
class PairedSummary:
    """Counts and paired differences of two sides over their shared problems.

    ``differences`` maps ``pass_at_1`` and ``prr`` to the interval of mean(A − B) over the
    shared problems (the Overview's paired test). ``note`` is :func:`design_note`.
    """

    a: Side
    b: Side
    rule: str
    n_problems: int
    counts: dict[str, dict[str, int]]
    differences: dict[str, Interval]
    note: str | None

    def as_dict(self) -> dict:
        """Plain JSON-ready values (the ``--format json`` header)."""
        return {
            "a": self.a.label,
            "b": self.b.label,
            "rule": self.rule,
            "n_problems": self.n_problems,
            "counts": self.counts,
            "differences": {
                k: {"estimate": v.estimate, "low": v.low, "high": v.high, "small": v.small}
                for k, v in self.differences.items()
            },
            "note": self.note,
        }


def summarise_pair(table: pd.DataFrame, a: Side, b: Side, rule: str) -> PairedSummary:
    """The :class:`PairedSummary` of a :func:`paired_outcomes` table."""
    diffs = {
        metric: mean_interval(
            (table[f"a_{metric}"] - table[f"b_{metric}"]).to_numpy(float), bounds=(-1.0, 1.0)
        )
        for metric in ("pass_at_1", "prr")
    }
    return PairedSummary(
        a, b, rule, len(table), outcome_counts(table), diffs, design_note(table["dataset"])
    )
