"""Aggregates over a scored table (DEFINITIONS.md §2): PASS@1, pass@k, PRR, R̂, AUC, intervals.

Every mean is over *problems* (each problem weighs the same, whatever its sample count);
unscored rows (no reference answer) are excluded and counted separately.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import comb

import numpy as np
import pandas as pd

from dagmath_viz.schema import CLASSES, COHORTS

__all__ = [
    "GRAPH_STATS",
    "Interval",
    "PairedDifference",
    "auc_curve",
    "bootstrap_interval",
    "cohort_masks",
    "cohort_stats",
    "difficulty_group",
    "paired_difference",
    "pass_at_k",
    "per_problem",
    "summarise",
]

GRAPH_STATS = ("n_nodes", "n_edges", "density", "max_in_degree", "max_out_degree")
PROBLEM_KEY = ["model", "dataset", "problem_id"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: 1 - C(n - c, k) / C(n, k).

    >>> pass_at_k(4, 1, 2)
    0.5
    """
    if not 0 < k <= n:
        raise ValueError(f"pass@k needs 0 < k <= n (k={k}, n={n})")
    return 1.0 - comb(n - c, k) / comb(n, k)


def difficulty_group(difficulty: float | None) -> int | None:
    """Group k holds difficulties in (k - 1, k] (the paper's Figure 3); None if unknown."""
    if difficulty is None or pd.isna(difficulty):
        return None
    return max(1, int(np.ceil(difficulty)))


def scored_only(df: pd.DataFrame) -> pd.DataFrame:
    """Rows with a verdict (a reference answer was known)."""
    return df[df["final_correct"].notna()]


def per_problem(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, dataset, problem): n, c, pass_at_1, prr, auc, difficulty."""
    s = scored_only(df)
    if s.empty:
        cols = [*PROBLEM_KEY, "n", "c", "pass_at_1", "prr", "auc", "difficulty"]
        return pd.DataFrame(columns=cols)
    correct = s["final_correct"].astype(bool)
    frame = pd.DataFrame({
        "model": s["model"], "dataset": s["dataset"], "problem_id": s["problem_id"],
        "correct": correct.astype(float),
        "perfect": (correct & s["closed"].astype(bool)).astype(float),
        "weighted_r": correct * s["closeness_rate"].astype(float),
        "difficulty": s["difficulty"],
    })  # fmt: skip
    grouped = frame.groupby(PROBLEM_KEY, sort=True)
    out = grouped.agg(
        n=("correct", "size"),
        c=("correct", "sum"),
        pass_at_1=("correct", "mean"),
        prr=("perfect", "mean"),
        auc=("weighted_r", "mean"),
        difficulty=("difficulty", "first"),
    ).reset_index()
    out["c"] = out["c"].astype(int)
    return out


def auc_curve(
    df: pd.DataFrame, taus: Sequence[float] | None = None, by: Sequence[str] = ("model", "dataset")
) -> pd.DataFrame:
    """A(τ) = mean_x (1/n_x) Σ δ_final·1[r ≥ τ], per group; A(1) counts closed ones only.

    Returns a long DataFrame with the ``by`` columns, ``tau`` and ``A``.
    """
    taus = np.linspace(0.0, 1.0, 101) if taus is None else np.asarray(taus, dtype=float)
    s = scored_only(df)
    rows = []
    if s.empty:
        return pd.DataFrame(columns=[*by, "tau", "A"])
    r = s["closeness_rate"].to_numpy(float)
    correct = s["final_correct"].to_numpy(bool)
    closed = s["closed"].to_numpy(bool)
    # An illegal trajectory may have r = 1 but is never closed: at τ = 1 count closed only.
    hits = correct[:, None] & (r[:, None] >= taus[None, :])
    hits[:, taus >= 1.0] &= closed[:, None]
    hit_frame = pd.DataFrame(hits.astype(float), index=s.index)
    keys = s[list(dict.fromkeys([*by, "model", "dataset", "problem_id"]))]
    per_prob = pd.concat([keys, hit_frame], axis=1).groupby(list(keys.columns)).mean()
    means = per_prob.groupby(level=list(range(len(by)))).mean() if by else per_prob.mean()
    if not by:
        return pd.DataFrame({"tau": taus, "A": means.to_numpy()})
    for group, values in means.iterrows():
        group = group if isinstance(group, tuple) else (group,)
        for tau, a in zip(taus, values.to_numpy(), strict=True):
            rows.append((*group, float(tau), float(a)))
    return pd.DataFrame(rows, columns=[*by, "tau", "A"])


@dataclass(frozen=True, slots=True)
class Interval:
    """A point estimate with a percentile-bootstrap interval."""

    estimate: float
    low: float
    high: float


def bootstrap_interval(
    values: Sequence[float], n_boot: int = 2000, level: float = 0.95, seed: int = 0
) -> Interval:
    """Percentile bootstrap of the mean of per-problem values (resampling problems)."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return Interval(float("nan"), float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, v.size, size=(n_boot, v.size))].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return Interval(float(v.mean()), float(lo), float(hi))


@dataclass(frozen=True, slots=True)
class PairedDifference:
    """metric(model_a) - metric(model_b) over the problems both models share."""

    metric: str
    model_a: str
    model_b: str
    n_problems: int
    difference: Interval


def paired_difference(
    df: pd.DataFrame,
    model_a: str,
    model_b: str,
    metric: str = "prr",
    n_boot: int = 2000,
    seed: int = 0,
) -> PairedDifference:
    """Paired bootstrap over shared (dataset, problem) pairs of a per-problem metric.

    ``metric`` is a column of :func:`per_problem`: ``prr`` (for R̂), ``pass_at_1`` or ``auc``.
    """
    pp = per_problem(df)
    a = pp[pp["model"] == model_a].set_index(["dataset", "problem_id"])[metric]
    b = pp[pp["model"] == model_b].set_index(["dataset", "problem_id"])[metric]
    shared = a.index.intersection(b.index)
    diff = (a.loc[shared] - b.loc[shared]).to_numpy()
    return PairedDifference(
        metric, model_a, model_b, len(shared), bootstrap_interval(diff, n_boot=n_boot, seed=seed)
    )


def cohort_masks(df: pd.DataFrame) -> dict[str, pd.Series]:
    """Boolean row masks of the paper's cohorts: All, Incorrect, Correct, Perfect.

    As DEFINITIONS.md §1 has them: Incorrect is a wrong answer (illegal ones included),
    Correct is perfect ∪ imperfect, Perfect is closed and right. So an illegal trajectory
    with a right answer is in All only, and All = Incorrect + Correct + (no reference answer,
    illegal ones included) + (illegal with a right answer).
    """
    return {
        "All": pd.Series(True, index=df.index),
        "Incorrect": df["final_correct"].eq(False),
        "Correct": df["class"].isin(["perfect", "imperfect"]),
        "Perfect": df["class"].eq("perfect"),
    }


def cohort_stats(df: pd.DataFrame) -> dict[str, dict[str, float]]:
    """Mean graph statistics and count ``n`` per cohort (the paper's Table 1 cells)."""
    out = {}
    for name, mask in cohort_masks(df).items():
        part = df.loc[mask, list(GRAPH_STATS)].astype(float)
        cell = {s: (float(part[s].mean()) if len(part) else None) for s in GRAPH_STATS}
        cell["n"] = int(mask.sum())
        out[name] = cell
    assert tuple(out) == COHORTS
    return out


def _ks(per_prob: pd.DataFrame) -> list[int]:
    if per_prob.empty:
        return []
    n_min = int(per_prob["n"].min())
    return [2**i for i in range(n_min.bit_length()) if 2**i <= n_min]


def summarise(
    df: pd.DataFrame, by: Sequence[str] = ("model", "dataset"), n_boot: int = 0, seed: int = 0
) -> list[dict]:
    """The aggregates of ``dagmath report``, one dict per group (sorted by the group).

    Keys: the ``by`` columns, n_problems, n_trajectories, n_scored, pass_at_1, r_hat, gap,
    auc, pass_at_k, class_counts, cohort_stats; with ``n_boot`` > 0 also pass_at_1_ci and
    r_hat_ci ([low, high] percentile-bootstrap intervals over problems).
    """
    by = list(by)
    results = []
    groups = df.groupby(by, sort=True, dropna=False) if by else [((), df)]
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        pp = per_problem(part)
        row = dict(zip(by, key, strict=True))
        row.update(_group_metrics(part, pp, n_boot, seed))
        results.append(row)
    return results


def _mean(series: pd.Series) -> float | None:
    return float(series.mean()) if len(series) else None


def _group_metrics(part: pd.DataFrame, pp: pd.DataFrame, n_boot: int, seed: int) -> dict:
    pass1, r_hat = _mean(pp["pass_at_1"]), _mean(pp["prr"])
    counts = part["class"].value_counts()
    out = {
        # a problem is a (dataset, problem_id): ids repeat across data sets
        "n_problems": len(part[["dataset", "problem_id"]].drop_duplicates()),
        "n_trajectories": len(part),
        "n_scored": int(pp["n"].sum()) if len(pp) else 0,
        "pass_at_1": pass1,
        "r_hat": r_hat,
        "gap": None if pass1 is None else pass1 - r_hat,
        "auc": _mean(pp["auc"]),
        "pass_at_k": {
            str(k): float(
                np.mean(
                    [pass_at_k(int(n), int(c), k) for n, c in zip(pp["n"], pp["c"], strict=True)]
                )
            )
            for k in _ks(pp)
        },
        "class_counts": {c: int(counts.get(c, 0)) for c in CLASSES},
        "cohort_stats": cohort_stats(part),
    }
    if n_boot > 0:
        for name, col in (("pass_at_1", "pass_at_1"), ("r_hat", "prr")):
            ci = bootstrap_interval(pp[col], n_boot=n_boot, seed=seed)
            out[f"{name}_ci"] = [ci.low, ci.high]
    return out
