"""Coverage of the 95% intervals over few problems (issue 12; DEFINITIONS.md §2, ours).

The setting of the issue: per-problem success rates drawn from Beta(0.6, 2.4) (skewed: most
problems hard, a few easy; mean 0.6 / (0.6 + 2.4) = 0.2), 32 samples per problem, so a
problem's observed PASS@1 is Binomial(32, p) / 32. An interval over the problems' values
should contain the true mean 0.2 in about 95% of replications. Seeded, so the counts are
fixed; the thresholds leave room for Monte-Carlo error (±1.1 points at 1,500 replications).
"""

from __future__ import annotations

import numpy as np
import pytest

from dagmath_viz.analysis.metrics import bootstrap_interval, mean_interval, paired_difference
from dagmath_viz.score.reference import records_frame

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
