"""Aggregates over a scored table (DEFINITIONS.md §2): PASS@1, pass@k, PRR, R̂, AUC, intervals.

Every mean is over *problems* (each problem weighs the same, whatever its sample count);
unscored rows (no reference answer) are excluded and counted separately.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from math import comb
from statistics import NormalDist

import numpy as np
import pandas as pd

from dagmath_viz.schema import CLASSES, COHORTS

__all__ = [
    "GRAPH_STATS",
    "SMALL_SAMPLE",
    "Interval",
    "PairedDifference",
    "auc_curve",
    "bootstrap_interval",
    "mean_interval",
    "t_quantile",
    "cohort_masks",
    "cohort_stats",
    "difficulty_group",
    "paired_difference",
    "pass_at_k",
    "per_problem",
    "problem_values",
    "rate_interval",
    "summarise",
]

GRAPH_STATS = ("n_nodes", "n_edges", "density", "max_in_degree", "max_out_degree")
#: Below this many problems an interval is flagged as resting on few problems (pages warn).
SMALL_SAMPLE = 20
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


def per_problem(df: pd.DataFrame, extra_key: Sequence[str] = ()) -> pd.DataFrame:
    """One row per (model, dataset, problem): n, c, pass_at_1, prr, auc, difficulty.

    ``extra_key`` columns (e.g. a group code) are added in front of the problem key.
    """
    key = [*extra_key, *PROBLEM_KEY]
    s = scored_only(df)
    if s.empty:
        cols = [*key, "n", "c", "pass_at_1", "prr", "auc", "difficulty"]
        return pd.DataFrame(columns=cols)
    correct = s["final_correct"].astype(bool)
    frame = pd.DataFrame({
        "model": s["model"], "dataset": s["dataset"], "problem_id": s["problem_id"],
        "correct": correct.astype(float),
        "perfect": (correct & s["closed"].astype(bool)).astype(float),
        "weighted_r": correct * s["closeness_rate"].astype(float),
        "difficulty": s["difficulty"],
        **{k: s[k] for k in extra_key},
    })  # fmt: skip
    grouped = frame.groupby(key, sort=True)
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

    Linear in the rows: each row adds its weight δ_final / (n_x · problems in its group) at
    the number of thresholds it clears (a sorted search), and a reversed cumulative sum over
    the thresholds turns those into A(τ). No rows × thresholds matrix is built.
    """
    taus = np.linspace(0.0, 1.0, 101) if taus is None else np.asarray(taus, dtype=float)
    by = list(by)
    s = scored_only(df)
    if s.empty:
        return pd.DataFrame(columns=[*by, "tau", "A"])
    order = np.argsort(taus, kind="stable")
    sorted_taus = taus[order]
    r = s["closeness_rate"].to_numpy(float)
    correct = s["final_correct"].to_numpy(bool)
    closed = s["closed"].to_numpy(bool)
    # cleared[i]: how many sorted thresholds row i clears. An illegal trajectory may have
    # r = 1 but is never closed: it clears no threshold at or above 1.
    cleared = np.searchsorted(sorted_taus, r, side="right")
    below_one = np.searchsorted(sorted_taus, 1.0, side="left")
    cleared = np.where(closed, cleared, np.minimum(cleared, below_one))
    problem_cols = list(dict.fromkeys([*by, "model", "dataset", "problem_id"]))
    problem = s.groupby(problem_cols, sort=False, dropna=False).ngroup().to_numpy()
    n_x = np.bincount(problem)[problem]
    if by:
        grouped = s.groupby(by, sort=True, dropna=False)
        group_codes = grouped.ngroup().to_numpy()
        keys = grouped.size().reset_index()[by]
    else:
        group_codes = np.zeros(len(s), dtype=int)
        keys = pd.DataFrame(index=[0])
    n_groups = int(group_codes.max()) + 1
    # a problem's key includes the group's columns, so each problem lies in one group
    group_of_problem = np.zeros(int(problem.max()) + 1, dtype=int)
    group_of_problem[problem] = group_codes
    problems_in_group = np.bincount(group_of_problem, minlength=n_groups)
    weight = correct / n_x / problems_in_group[group_codes]
    n_t = len(taus)
    acc = np.zeros((n_groups, n_t + 1))
    np.add.at(acc, (group_codes, cleared), weight)
    # a row that clears k thresholds counts at thresholds 0..k-1: reversed cumulative sum
    curve_sorted = np.cumsum(acc[:, ::-1], axis=1)[:, ::-1][:, 1:]
    curve = np.empty_like(curve_sorted)
    curve[:, order] = curve_sorted
    out = pd.DataFrame(
        {
            "tau": np.tile(taus, n_groups),
            "A": curve.reshape(-1),
        }
    )
    if not by:
        return out
    repeated = keys.loc[keys.index.repeat(n_t)].reset_index(drop=True)
    return pd.concat([repeated, out], axis=1)[[*by, "tau", "A"]]


@dataclass(frozen=True, slots=True)
class Interval:
    """A point estimate with a 95% interval over ``n`` problems.

    ``small`` is true below :data:`SMALL_SAMPLE` problems: the interval then rests on few
    problems, and pages say so.
    """

    estimate: float
    low: float
    high: float
    n: int = 0

    @property
    def small(self) -> bool:
        return self.n < SMALL_SAMPLE


def t_quantile(p: float, df: int) -> float:
    """The p-quantile of Student's t with ``df`` degrees of freedom (0.5 <= p < 1).

    Exact for 1 and 2 degrees of freedom (closed forms); otherwise the Cornish-Fisher
    expansion of Abramowitz & Stegun 26.7.5 with four terms: within 0.004 of the true value
    at 3 degrees of freedom (3.1786 for 3.1824 at p = 0.975) and within 0.001 from 4 on.
    (Written out so the library needs no SciPy for one number.)

    >>> round(t_quantile(0.975, 1), 4), round(t_quantile(0.975, 29), 4)
    (12.7062, 2.0452)
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    z = NormalDist().inv_cdf(p)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def mean_interval(
    values: Sequence[float], level: float = 0.95, bounds: tuple[float, float] = (0.0, 1.0)
) -> Interval:
    """Interval for the mean of per-problem values (ours; DEFINITIONS.md §2).

    Hall's skewness-corrected Student-t interval (P. Hall, "On the removal of skewness by
    transformation", JRSS B 54, 1992): with T = √n (x̄ − μ) / s, a = γ̂ / √n (γ̂ the sample
    skewness, moments over n) and the monotone transformation
    g(T) = T + a T²/3 + a² T³/27 + a/6, the interval is
    [x̄ − s/√n · g⁻¹(t), x̄ − s/√n · g⁻¹(−t)], t the Student-t quantile with n − 1 degrees of
    freedom, clipped to ``bounds`` (the range the true mean can take: [0, 1] for a rate,
    [-1, 1] for a difference of rates). With no skew it is the plain Student-t interval.

    Why: per-problem rates are skewed (most problems hard, a few easy), and over few
    problems the percentile bootstrap covers the truth 83% of the time at 6 problems and
    89% at 12, the plain t interval about 91% at 12; this one covers at least 93% at 12
    (``tests/test_coverage.py``, a seeded simulation). Closed form: no resampling, so it is
    also cheap for many groups. Fewer than two values give no interval (NaN bounds); zero
    spread gives a point.
    """
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    n = int(v.size)
    if n == 0:
        return Interval(float("nan"), float("nan"), float("nan"), 0)
    mean = float(v.mean())
    if n < 2:
        return Interval(mean, float("nan"), float("nan"), n)
    s = float(v.std(ddof=1))
    if s == 0.0:
        return Interval(mean, mean, mean, n)
    centred = v - mean
    skew = float((centred**3).mean() / (centred**2).mean() ** 1.5)
    a = skew / math.sqrt(n)
    t = t_quantile(0.5 + level / 2.0, n - 1)
    scale = s / math.sqrt(n)
    low = mean - scale * _hall_inverse(t, a)
    high = mean - scale * _hall_inverse(-t, a)
    return Interval(mean, max(bounds[0], low), min(bounds[1], high), n)


def rate_interval(
    values: Sequence[float], trials: int | None = None, level: float = 0.95
) -> Interval:
    """Interval for a rate, the mean of n per-problem values in [0, 1] (ours; DEFINITIONS §2).

    The union of two intervals, each of which fails where the other holds:

    - :func:`mean_interval`, Hall's skew-corrected t over the problems: right for skewed
      per-problem rates (most problems hard, a few easy), but at a low rate it rests on the
      few problems with any success, and where no problem has one it is the point [0, 0];
    - the Wilson score interval at the effective number of trials (Kish's design effect:
      n_eff = p̂(1 − p̂) / (s² / n), at most ``trials``, the samples behind the rate), with
      the Student-t quantile for n − 1 degrees of freedom in place of z (Korn & Graubard's
      correction for few problems). Where the values have no spread (every problem 0, or
      every problem 1) it takes n_eff = n, each problem one trial: a value in [0, 1] with
      mean μ has variance at most μ(1 − μ), so nothing wider can be true. At 0 of 12
      problems that is [0, 28.8%] (t₀.₉₇₅,₁₁ = 2.2010).

    ``tests/test_coverage.py`` measures it at 12 problems (skewed and low rates, one model
    and three pooled): at least 93% for PASS@1 and R̂, never a single point. Fewer than two
    values give no interval (NaN bounds), as :func:`mean_interval`.

    >>> ci = rate_interval([0.0] * 12)
    >>> (ci.low, round(ci.high, 3))
    (0.0, 0.288)
    """
    hall = mean_interval(values, level)
    n = hall.n
    if n < 2:
        return hall
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    p = hall.estimate
    var = float(v.var(ddof=1)) / n
    if 0.0 < p < 1.0 and var > 0.0:
        n_eff = min(p * (1.0 - p) / var, float(trials) if trials else math.inf)
    else:
        n_eff = float(n)
    low, high = _wilson(min(1.0, max(0.0, p)), n_eff, t_quantile(0.5 + level / 2.0, n - 1))
    return Interval(p, min(low, hall.low), max(high, hall.high), n)


def _wilson(p: float, n: float, z: float) -> tuple[float, float]:
    """The Wilson score interval for a proportion p of n trials at quantile z."""
    z2n = z * z / n
    centre = (p + z2n / 2.0) / (1.0 + z2n)
    half = z * math.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n)) / (1.0 + z2n)
    return max(0.0, centre - half), min(1.0, centre + half)


def problem_values(pp: pd.DataFrame, column: str) -> np.ndarray:
    """One value per problem of a group, for its interval: every model's rows of a problem
    together, since they share the problem and are not independent.

    ``pp`` is :func:`per_problem` of one group (a row per model × problem). A problem's
    value is the sum of its rows' ``column`` scaled by problems / rows, so that the mean of
    the values is the group's estimate (the mean over its rows) also when models answered
    different problems; with one model per group they are the rows' values. An interval
    over these values is one over problems, as resampling problems (with every model's rows
    of a problem kept together) would give: treating model × problem rows as independent
    made intervals of pooled groups (``--by dataset``) cover about 60%.
    """
    if pp.empty:
        return np.zeros(0)
    sums = pp.groupby(["dataset", "problem_id"], sort=False)[column].sum().to_numpy(float)
    return sums * (len(sums) / len(pp))


def _hall_inverse(y: float, a: float) -> float:
    """g⁻¹(y) = (3/a)·((1 + a(y − a/6))^(1/3) − 1), and y itself when a is 0.

    The cube root's argument is clamped at 0, i.e. g⁻¹ stops at −3/a, the flat point of g
    (g′(−3/a) = 0): past it the inverse runs off (a tiny change of the quantile moves the
    bound a lot), which over-widens intervals for very skewed values such as 2 successes in
    26 problems. The seeded coverage test runs with the clamp.
    """
    if abs(a) < 1e-12:
        return y
    return (float(np.cbrt(max(0.0, 1.0 + a * (y - a / 6.0)))) - 1.0) * 3.0 / a


def bootstrap_interval(
    values: Sequence[float], n_boot: int = 2000, level: float = 0.95, seed: int = 0
) -> Interval:
    """Percentile bootstrap of the mean of per-problem values (resampling problems).

    Kept for comparison only (``benchmarks/coverage.py``): it under-covers over few
    problems. The leaderboard and paired differences use :func:`mean_interval`.
    """
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return Interval(float("nan"), float("nan"), float("nan"), 0)
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, v.size, size=(n_boot, v.size))].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return Interval(float(v.mean()), float(lo), float(hi), int(v.size))


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
    n_boot: int | None = None,
    seed: int | None = None,
) -> PairedDifference:
    """metric(a) − metric(b) over the (dataset, problem) pairs both models have.

    The interval is :func:`mean_interval` over the per-problem differences (bounds
    [-1, 1]), the same method as the leaderboard's; ``difference.small`` flags fewer than
    :data:`SMALL_SAMPLE` shared problems. ``metric`` is a column of :func:`per_problem`:
    ``prr`` (for R̂), ``pass_at_1`` or ``auc``. ``n_boot`` and ``seed`` are accepted for old
    callers and ignored (the interval is no longer a bootstrap).
    """
    pp = per_problem(df)
    a = pp[pp["model"] == model_a].set_index(["dataset", "problem_id"])[metric]
    b = pp[pp["model"] == model_b].set_index(["dataset", "problem_id"])[metric]
    shared = a.index.intersection(b.index)
    diff = (a.loc[shared] - b.loc[shared]).to_numpy()
    return PairedDifference(
        metric, model_a, model_b, len(shared), mean_interval(diff, bounds=(-1.0, 1.0))
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
    df: pd.DataFrame,
    by: Sequence[str] = ("model", "dataset"),
    n_boot: int = 0,
    seed: int = 0,
    cohorts: bool = True,
) -> list[dict]:
    """The aggregates of ``dagmath report``, one dict per group (sorted by the group).

    Keys: the ``by`` columns, n_problems, n_trajectories, n_scored, pass_at_1, r_hat, gap,
    auc, pass_at_k, class_counts, small_sample (fewer than :data:`SMALL_SAMPLE` problems),
    cohort_stats (unless ``cohorts`` is false); with ``n_boot`` > 0 also pass_at_1_ci,
    r_hat_ci and auc_ci ([low, high] intervals over problems: :func:`rate_interval` of
    :func:`problem_values`, so a group pooling several models over the same problems gets
    an interval over its problems, not over model × problem rows).
    ``n_boot`` only switches the intervals on or off (they are no longer a bootstrap).

    The per-problem table is computed once for all groups (one grouping by group and
    problem), not once per group.
    """
    by = list(by)
    results = []
    if by:
        grouped = df.groupby(by, sort=True, dropna=False)
        codes = grouped.ngroup()
        # split the per-problem table by group code: NaN keys cannot be looked up by value
        pp_all = per_problem(df.assign(_group=codes.to_numpy()), extra_key=["_group"])
        pp_by_code = dict(tuple(pp_all.groupby("_group", sort=False)))
        empty = pp_all.iloc[0:0]
        for code, (key, part) in enumerate(grouped):
            key = key if isinstance(key, tuple) else (key,)
            pp = pp_by_code.get(code, empty)
            row = {col: _key_value(v) for col, v in zip(by, key, strict=True)}
            row.update(_group_metrics(part, pp, n_boot, seed, cohorts))
            results.append(row)
        return results
    results.append(_group_metrics(df, per_problem(df), n_boot, seed, cohorts))
    return results


def _key_value(value):
    """A group's key as plain data: a missing one (``pd.NA`` of an ``Int64`` column such as
    ``difficulty_group``, or NaN) is None, which JSON writers and ``==`` understand."""
    return None if pd.api.types.is_scalar(value) and pd.isna(value) else value


def _mean(series: pd.Series) -> float | None:
    return float(series.mean()) if len(series) else None


def _group_metrics(
    part: pd.DataFrame, pp: pd.DataFrame, n_boot: int, seed: int, cohorts: bool = True
) -> dict:
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
        # problems, not model x problem rows: a pooled group's rows of a problem are one unit
        "small_sample": len(pp[["dataset", "problem_id"]].drop_duplicates()) < SMALL_SAMPLE,
    }
    if cohorts:
        out["cohort_stats"] = cohort_stats(part)
    if n_boot > 0:
        for name, col in (("pass_at_1", "pass_at_1"), ("r_hat", "prr"), ("auc", "auc")):
            ci = rate_interval(problem_values(pp, col), trials=int(pp["n"].sum()))
            out[f"{name}_ci"] = [ci.low, ci.high]
    return out
