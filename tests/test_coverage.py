"""Coverage of the 95% intervals over few problems (issue 12; DEFINITIONS.md §2, ours).

The setting of the issue: per-problem success rates drawn from Beta(0.6, 2.4) (skewed: most
problems hard, a few easy; mean 0.6 / (0.6 + 2.4) = 0.2), 32 samples per problem, so a
problem's observed PASS@1 is Binomial(32, p) / 32. An interval over the problems' values
should contain the true mean 0.2 in about 95% of replications. Seeded, so the counts are
fixed; the thresholds leave room for Monte-Carlo error (±1.1 points at 1,500 replications).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dagmath_viz.analysis.metrics import (
    bootstrap_interval,
    mean_interval,
    paired_difference,
    summarise,
)
from dagmath_viz.score.record import records_frame

TRUE_MEAN = 0.6 / (0.6 + 2.4)
REPLICATIONS = 1500


def coverage(n_problems: int, interval, replications: int = REPLICATIONS, seed: int = 12):
    rng = np.random.default_rng(seed)
    hits = 0
    for r in range(replications):
        rates = rng.beta(0.6, 2.4, size=n_problems)
        values = rng.binomial(32, rates) / 32
        ci = interval(values, r)
        hits += ci.low <= TRUE_MEAN <= ci.high
    return hits / replications


@pytest.mark.slow
def test_mean_interval_covers_at_least_93_percent_at_12_problems() -> None:
    assert coverage(12, lambda v, r: mean_interval(v)) >= 0.93


@pytest.mark.slow
@pytest.mark.parametrize("n_problems", [6, 20, 30])
def test_mean_interval_coverage_at_other_sizes(n_problems: int) -> None:
    assert coverage(n_problems, lambda v, r: mean_interval(v)) >= 0.92


@pytest.mark.slow
def test_the_percentile_bootstrap_it_replaced_under_covers() -> None:
    # The issue measured 89% at 12 problems: the test above can tell the two apart.
    covered = coverage(12, lambda v, r: bootstrap_interval(v, n_boot=500, seed=r), 400)
    assert covered < 0.925


@pytest.mark.slow
def test_paired_difference_covers_the_true_difference() -> None:
    # Two models on 12 shared problems: B's rate on a problem is A's rate plus 0.1 (capped
    # at 1); the true mean difference A - B is then -(E[min(p + 0.1, 1)] - E[p]), computed
    # here from a large seeded draw (the Beta has little mass near 1, so it is about -0.1).
    rng = np.random.default_rng(5)
    big = rng.beta(0.6, 2.4, size=2_000_000)
    truth = float(big.mean() - np.minimum(big + 0.1, 1.0).mean())
    hits, replications = 0, 400
    for _ in range(replications):
        p = rng.beta(0.6, 2.4, size=12)
        q = np.minimum(p + 0.1, 1.0)
        rows = []
        for i, (pa, pb) in enumerate(zip(p, q, strict=True)):
            for model, rate in (("A", pa), ("B", pb)):
                correct = rng.random(32) < rate
                rows += [_row(model, i, s, bool(c)) for s, c in enumerate(correct)]
        diff = paired_difference(records_frame(rows), "A", "B", metric="pass_at_1").difference
        hits += diff.low <= truth <= diff.high
    assert hits / replications >= 0.93


def _row(model: str, problem: int, sample: int, correct: bool) -> dict:
    return {
        "model": model, "dataset": "D", "problem_id": f"p{problem}", "sample_id": sample,
        "difficulty": None, "n_nodes": 2, "n_edges": 1, "density": 1.0,
        "max_in_degree": 1, "max_out_degree": 1, "dead_ends": [], "closeness_rate": 1.0,
        "closed": True, "final_correct": correct, "perfect": correct,
        "class": "perfect" if correct else "incorrect",
    }  # fmt: skip


# --- through summarise: low rates, skewed rates, pooled groups (issue 30) ------------------------
#
# Each replication draws 12 problems, a rate p per problem and, for each model m, 16 samples
# correct with probability min(1, f_m p) and closed (so perfect) with probability q_m when
# correct. The truth of a group is the mean over its models of E[min(1, f_m p)] (PASS@1) and
# of q_m E[min(1, f_m p)] (R̂), from a large seeded draw. "pooled" groups three models
# over the same problems (``--by dataset``): their rows of a problem share its p.
#
# Skewed: p ~ Beta(0.6, 2.4) (mean 0.2, skewness 1.2). Low: p ~ Beta(0.5, 9.5) (mean 0.05,
# skewness 2.3), R̂ about 1%: many replications have no perfect sample at all.
COVERAGE_CASES = {
    "skewed": ((0.6, 2.4), (1.0,), (0.15,)),
    "low": ((0.5, 9.5), (1.0,), (0.2,)),
    "pooled-skewed": ((0.6, 2.4), (0.6, 1.0, 1.4), (0.1, 0.15, 0.2)),
    "pooled-low": ((0.5, 9.5), (0.6, 1.0, 1.4), (0.1, 0.15, 0.2)),
}
PROBLEMS, SAMPLES, REPLICATIONS_30 = 12, 16, 1000


def _truth(beta: tuple, factors: tuple, closed: tuple) -> tuple[float, float]:
    big = np.random.default_rng(3).beta(*beta, size=2_000_000)
    rates = [np.minimum(1.0, f * big).mean() for f in factors]
    return float(np.mean(rates)), float(
        np.mean([q * r for q, r in zip(closed, rates, strict=True)])
    )


def _replications(rng, beta: tuple, factors: tuple, closed: tuple) -> pd.DataFrame:
    """All replications in one frame, replication r as dataset ``D<r>`` (one group each)."""
    p = rng.beta(*beta, size=(REPLICATIONS_30, PROBLEMS))
    parts = []
    for m, (f, q) in enumerate(zip(factors, closed, strict=True)):
        rate = np.repeat(np.minimum(1.0, f * p).reshape(-1), SAMPLES)
        correct = rng.random(rate.size) < rate
        shut = correct & (rng.random(rate.size) < q)
        rep = np.repeat(np.arange(REPLICATIONS_30), PROBLEMS * SAMPLES)
        problem = np.tile(np.repeat(np.arange(PROBLEMS), SAMPLES), REPLICATIONS_30)
        parts.append(
            pd.DataFrame(
                {
                    "model": f"m{m}",
                    "dataset": pd.Series(rep).map("D{:04d}".format),
                    "problem_id": pd.Series(problem).map("p{}".format),
                    "final_correct": correct,
                    "closed": shut,
                    "closeness_rate": np.where(shut, 1.0, 0.5),
                    "difficulty": np.nan,
                    "class": np.where(shut, "perfect", np.where(correct, "imperfect", "incorrect")),
                }
            )  # fmt: skip
        )
    return pd.concat(parts, ignore_index=True)


@pytest.mark.slow
@pytest.mark.parametrize("case", list(COVERAGE_CASES))
def test_report_intervals_cover_at_12_problems(case: str) -> None:
    beta, factors, closed = COVERAGE_CASES[case]
    truth = dict(zip(("pass_at_1", "r_hat"), _truth(beta, factors, closed), strict=True))
    frame = _replications(np.random.default_rng(30), beta, factors, closed)
    rows = summarise(frame, by=["dataset"], n_boot=1, cohorts=False)
    assert len(rows) == REPLICATIONS_30
    assert all(row["small_sample"] for row in rows)  # 12 problems, whatever the models
    for name, value in truth.items():
        bounds = np.array([row[f"{name}_ci"] for row in rows])
        assert (bounds[:, 0] < bounds[:, 1]).all()  # never a single point, even at 0 of 12
        covered = ((bounds[:, 0] <= value) & (value <= bounds[:, 1])).mean()
        assert covered >= 0.93, (name, covered)
