"""metrics.py: PASS@1, pass@k, PRR, R̂, the AUC curve and its identity, intervals (§2)."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from dagmath_viz.analysis.metrics import (
    SMALL_SAMPLE,
    auc_curve,
    bootstrap_interval,
    cohort_stats,
    difficulty_group,
    mean_interval,
    paired_difference,
    pass_at_k,
    per_problem,
    problem_values,
    rate_interval,
    summarise,
    t_quantile,
)
from dagmath_viz.score.record import records_frame

CLASS_OF = {"P": "perfect", "I": "imperfect", "W": "incorrect", "X": "illegal", "U": "unscored"}


def row(model, pid, sid, kind, r, n_nodes, dataset="D", difficulty=None) -> dict:
    """One scored record. kind: P perfect, I imperfect, W wrong, X illegal+correct, U unscored."""
    correct = {"P": True, "I": True, "W": False, "X": True, "U": None}[kind]
    closed = kind == "P" or (kind in "WU" and r == 1.0)
    return {
        "model": model, "dataset": dataset, "problem_id": pid, "sample_id": sid,
        "difficulty": difficulty,
        "n_nodes": n_nodes, "n_edges": n_nodes - 1, "density": 0.5,
        "max_in_degree": 1, "max_out_degree": 2,
        "dead_ends": [] if r == 1.0 else [1], "closeness_rate": r, "closed": closed,
        "final_correct": correct, "perfect": None if correct is None else (closed and correct),
        "class": CLASS_OF[kind],
    }  # fmt: skip


# Model A, data set D: three problems with 3, 2 and 4 scored samples (plus one unscored).
#   p1: P r=1, I r=0.5, W r=0.8     PASS@1 2/3, PRR 1/3, AUC (1 + 0.5 + 0)/3 = 1/2
#   p2: I r=0.75, X r=1 (illegal)   PASS@1 2/2, PRR 0,   AUC (0.75 + 1)/2 = 7/8
#   p3: P r=1, I r=0.25, W r=0.6, W r=1, U r=1
#                                   PASS@1 2/4, PRR 1/4, AUC (1 + 0.25)/4 = 5/16
# PASS@1 = (2/3 + 1 + 1/2)/3 = 13/18; R̂ = (1/3 + 0 + 1/4)/3 = 7/36; Δ = 26/36 - 7/36 = 19/36
# AUC = (1/2 + 7/8 + 5/16)/3 = (8/16 + 14/16 + 5/16)/3 = 27/48 = 9/16
ROWS_A = [
    row("A", "p1", 0, "P", 1.0, 4), row("A", "p1", 1, "I", 0.5, 6), row("A", "p1", 2, "W", 0.8, 5),
    row("A", "p2", 0, "I", 0.75, 8), row("A", "p2", 1, "X", 1.0, 3),
    row("A", "p3", 0, "P", 1.0, 4), row("A", "p3", 1, "I", 0.25, 10),
    row("A", "p3", 2, "W", 0.6, 7), row("A", "p3", 3, "W", 1.0, 2), row("A", "p3", 4, "U", 1.0, 9),
]  # fmt: skip
# Model B, data set D: p1 twice perfect (PRR 1), p2 once wrong (PRR 0); no p3.
ROWS_B = [
    row("B", "p1", 0, "P", 1.0, 5),
    row("B", "p1", 1, "P", 1.0, 5),
    row("B", "p2", 0, "W", 1.0, 5),
]


@pytest.fixture
def frame_a() -> pd.DataFrame:
    return records_frame(ROWS_A)


@pytest.fixture
def frame_ab() -> pd.DataFrame:
    return records_frame(ROWS_A + ROWS_B)


# --------------------------------------------------------------------------- pass@k


def brute_force_pass_at_k(n: int, c: int, k: int) -> float:
    """Share of the k-subsets of n samples (the first c correct) holding a correct one."""
    subsets = list(combinations(range(n), k))
    return sum(any(i < c for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n", range(1, 8))
def test_pass_at_k_matches_enumeration(n: int) -> None:
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert pass_at_k(n, c, k) == pytest.approx(brute_force_pass_at_k(n, c, k)), (n, c, k)


PASS_AT_K_CASES = [
    # n, c, k, value
    pytest.param(4, 1, 2, 0.5, id="4-1-2"),  # 1 - C(3,2)/C(4,2) = 1 - 3/6
    pytest.param(4, 2, 2, 5 / 6, id="4-2-2"),  # 1 - C(2,2)/C(4,2) = 1 - 1/6
    pytest.param(5, 0, 3, 0.0, id="none-correct"),
    pytest.param(3, 3, 1, 1.0, id="all-correct"),
    pytest.param(3, 2, 1, 2 / 3, id="pass-at-1-is-c-over-n"),
]


@pytest.mark.parametrize(("n", "c", "k", "expected"), PASS_AT_K_CASES)
def test_pass_at_k_by_hand(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected)


@pytest.mark.parametrize(("n", "k"), [(3, 0), (3, 4), (0, 1)], ids=["k-0", "k-above-n", "n-0"])
def test_pass_at_k_rejects_impossible_k(n: int, k: int) -> None:
    with pytest.raises(ValueError, match="pass@k"):
        pass_at_k(n, 0, k)


# --------------------------------------------------------------------------- per problem, summary


def test_per_problem(frame_a: pd.DataFrame) -> None:
    pp = per_problem(frame_a).set_index("problem_id")
    assert pp["n"].to_dict() == {"p1": 3, "p2": 2, "p3": 4}  # the unscored sample excluded
    assert pp["c"].to_dict() == {"p1": 2, "p2": 2, "p3": 2}
    assert pp["pass_at_1"].tolist() == pytest.approx([2 / 3, 1.0, 0.5])
    assert pp["prr"].tolist() == pytest.approx([1 / 3, 0.0, 0.25])
    assert pp["auc"].tolist() == pytest.approx([0.5, 7 / 8, 5 / 16])


def test_summarise_by_hand(frame_ab: pd.DataFrame) -> None:
    a, b = summarise(frame_ab)
    assert (a["model"], a["dataset"], b["model"], b["dataset"]) == ("A", "D", "B", "D")
    assert (a["n_problems"], a["n_trajectories"], a["n_scored"]) == (3, 10, 9)
    assert a["pass_at_1"] == pytest.approx(13 / 18)
    assert a["r_hat"] == pytest.approx(7 / 36)
    assert a["gap"] == pytest.approx(19 / 36)
    assert a["auc"] == pytest.approx(9 / 16)
    # smallest n is 2, so k in {1, 2}; pass@2: p1 1 - C(1,2)/C(3,2) = 1, p2 1,
    # p3 1 - C(2,2)/C(4,2) = 5/6: mean (1 + 1 + 5/6)/3 = 17/18
    assert a["pass_at_k"] == pytest.approx({"1": 13 / 18, "2": 17 / 18})
    assert a["class_counts"] == {
        "perfect": 2, "imperfect": 3, "incorrect": 3, "illegal": 1, "unscored": 1
    }  # fmt: skip
    # B: p1 2/2 perfect, p2 0/1: PASS@1 = R̂ = (1 + 0)/2; AUC (1 + 0)/2; n_min = 1 -> k = 1
    assert (b["pass_at_1"], b["r_hat"], b["auc"]) == pytest.approx((0.5, 0.5, 0.5))
    assert b["pass_at_k"] == pytest.approx({"1": 0.5})


def test_summarise_bootstrap_intervals(frame_a: pd.DataFrame) -> None:
    (s,) = summarise(frame_a, n_boot=200, seed=1)
    for name in ("pass_at_1", "r_hat"):
        low, high = s[f"{name}_ci"]
        assert 0.0 <= low <= s[name] <= high <= 1.0


def test_summarise_problems_are_per_data_set() -> None:
    # the same problem id in two data sets is two problems
    rows = [row("A", "1", 0, "P", 1.0, 3, dataset="x"), row("A", "1", 0, "W", 1.0, 3, dataset="y")]
    (s,) = summarise(records_frame(rows), by=["model"])
    assert s["n_problems"] == 2
    assert s["pass_at_1"] == pytest.approx(0.5)  # (1 + 0) / 2


def test_summarise_all_unscored() -> None:
    (s,) = summarise(records_frame([row("A", "1", 0, "U", 1.0, 3)]))
    assert (s["pass_at_1"], s["r_hat"], s["gap"], s["auc"]) == (None, None, None, None)
    assert s["pass_at_k"] == {} and s["n_scored"] == 0
    assert s["class_counts"]["unscored"] == 1


def test_per_problem_empty() -> None:
    assert per_problem(records_frame([row("A", "1", 0, "U", 1.0, 3)])).empty


# --------------------------------------------------------------------------- AUC curve


def test_auc_curve_end_points_and_a_middle_point(frame_a: pd.DataFrame) -> None:
    curve = auc_curve(frame_a, taus=[0.0, 0.7, 1.0])
    assert list(curve.columns) == ["model", "dataset", "tau", "A"]
    a = curve["A"].tolist()
    assert a[0] == pytest.approx(13 / 18)  # A(0) = PASS@1
    # τ = 0.7: p1 keeps s0 (1/3), p2 keeps both (r 0.75, 1: 2/2), p3 keeps s0 (1/4)
    assert a[1] == pytest.approx((1 / 3 + 1 + 1 / 4) / 3)
    # A(1) = R̂: the illegal p2 sample has r = 1 but is not closed, so it drops out
    assert a[2] == pytest.approx(7 / 36)


def test_auc_identity_against_numeric_integration(frame_a: pd.DataFrame) -> None:
    taus = np.linspace(0.0, 1.0, 20001)
    curve = auc_curve(frame_a, taus=taus, by=())
    a = curve["A"].to_numpy()
    assert np.all(np.diff(a) <= 1e-12)  # A is non-increasing in τ
    (s,) = summarise(frame_a)
    integral = np.trapezoid(a, taus)
    # a step function: the trapezoid rule is off by at most (jump total) * step / 2
    assert integral == pytest.approx(s["auc"], abs=(a[0] - a[-1]) * (taus[1] - taus[0]))
    assert integral == pytest.approx(9 / 16, abs=1e-4)
    # for a non-increasing A the right and left Riemann sums bracket the integral
    step = taus[1] - taus[0]
    assert (a[1:] * step).sum() - 1e-12 <= s["auc"] <= (a[:-1] * step).sum() + 1e-12


def test_auc_curve_per_group(frame_ab: pd.DataFrame) -> None:
    curve = auc_curve(frame_ab, taus=[0.0, 1.0])
    got = {(m, t): v for m, t, v in zip(curve["model"], curve["tau"], curve["A"], strict=True)}
    assert got == pytest.approx(
        {("A", 0.0): 13 / 18, ("A", 1.0): 7 / 36, ("B", 0.0): 0.5, ("B", 1.0): 0.5}
    )


def brute_force_curve(frame: pd.DataFrame, taus: np.ndarray) -> dict:
    """A(τ) per model straight from DEFINITIONS.md §2, one threshold at a time."""
    out = {}
    s = frame[frame["final_correct"].notna()]
    for model, part in s.groupby("model"):
        for tau in taus:
            per_problem_hits = []
            for _, prob in part.groupby(["dataset", "problem_id"]):
                hits = [
                    bool(c) and r >= tau and (tau < 1 or bool(closed))
                    for c, r, closed in zip(
                        prob["final_correct"], prob["closeness_rate"], prob["closed"], strict=True
                    )
                ]
                per_problem_hits.append(sum(hits) / len(hits))
            out[(model, float(tau))] = sum(per_problem_hits) / len(per_problem_hits)
    return out


def test_auc_curve_matches_the_definition_on_random_data() -> None:
    rng = np.random.default_rng(7)
    rows = []
    for m in ("A", "B", "C"):
        for p in range(6):
            for sid in range(int(rng.integers(1, 5))):
                kind = str(rng.choice(list("PIWXU")))
                r = 1.0 if kind in "PX" else float(rng.choice([0.2, 0.5, 0.75, 0.9, 1.0]))
                if kind == "I" and r == 1.0:
                    r = 0.5
                rows.append(row(m, f"p{p}", sid, kind, r, 4))
    frame = records_frame(rows)
    taus = np.array([0.9, 0.0, 0.5, 1.0, 0.2, 0.75])  # unsorted on purpose
    curve = auc_curve(frame, taus=taus, by=("model",))
    got = {(m, t): a for m, t, a in zip(curve["model"], curve["tau"], curve["A"], strict=True)}
    assert list(curve["tau"][:6]) == list(taus)
    assert got == pytest.approx(brute_force_curve(frame, taus))


def test_auc_curve_empty() -> None:
    curve = auc_curve(records_frame([row("A", "1", 0, "U", 1.0, 3)]))
    assert curve.empty and list(curve.columns) == ["model", "dataset", "tau", "A"]


# --------------------------------------------------------------------------- cohorts

# Model A's n_nodes by cohort. Correct = perfect ∪ imperfect (DEFINITIONS §1), so the
# illegal p2s1, though answered right, is in All only.
#   All: 4+6+5+8+3+4+10+7+2+9 = 58 over 10
#   Incorrect: p1s2 5, p3s2 7, p3s3 2 = 14 over 3
#   Correct: 4+6+8+4+10 = 32 over 5 (not the illegal p2s1, n_nodes 3)
#   Perfect: 4+4 = 8 over 2
COHORT_CASES = [
    pytest.param("All", 10, 58 / 10, id="all"),
    pytest.param("Incorrect", 3, 14 / 3, id="incorrect"),
    pytest.param("Correct", 5, 32 / 5, id="correct"),
    pytest.param("Perfect", 2, 8 / 2, id="perfect"),
]


@pytest.mark.parametrize(("cohort", "n", "mean_nodes"), COHORT_CASES)
def test_cohort_stats(frame_a: pd.DataFrame, cohort: str, n: int, mean_nodes: float) -> None:
    cell = cohort_stats(frame_a)[cohort]
    assert cell["n"] == n
    assert cell["n_nodes"] == pytest.approx(mean_nodes)
    assert cell["n_edges"] == pytest.approx(mean_nodes - 1)  # every row has E = N - 1
    assert set(cell) == {"n", "n_nodes", "n_edges", "density", "max_in_degree", "max_out_degree"}


def test_empty_cohort_has_no_means() -> None:
    cell = cohort_stats(records_frame([row("A", "1", 0, "P", 1.0, 3)]))["Incorrect"]
    assert cell["n"] == 0 and cell["n_nodes"] is None


# --------------------------------------------------------------------------- difficulty

DIFFICULTY_CASES = [
    # group k holds (k - 1, k]
    pytest.param(0.5, 1, id="0.5"),
    pytest.param(1.0, 1, id="1-closes-group-1"),
    pytest.param(1.5, 2, id="1.5"),
    pytest.param(2.0, 2, id="2"),
    pytest.param(5.01, 6, id="5.01"),
    pytest.param(6.0, 6, id="6"),
    pytest.param(None, None, id="none"),
    pytest.param(float("nan"), None, id="nan"),
]


@pytest.mark.parametrize(("difficulty", "group"), DIFFICULTY_CASES)
def test_difficulty_group(difficulty, group) -> None:
    assert difficulty_group(difficulty) == group


# --------------------------------------------------------------------------- intervals


@pytest.mark.parametrize(
    ("df", "expected"),
    # Student-t 0.975 quantiles from the printed tables (e.g. Abramowitz & Stegun 26.10)
    [(1, 12.7062), (2, 4.3027), (4, 2.7764), (5, 2.5706), (11, 2.2010), (29, 2.0452)],
)
def test_t_quantile(df: int, expected: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=1e-3)


def test_t_quantile_three_degrees_within_the_documented_error() -> None:
    assert t_quantile(0.975, 3) == pytest.approx(3.1824, abs=0.004)


def test_mean_interval_without_skew_is_the_student_t_interval() -> None:
    # Symmetric values 0.1, 0.2, 0.3, 0.4, 0.5: mean 0.3, s = √(0.1/4) = 0.158114, no skew;
    # half-width 2.7764 · 0.158114 / √5 = 0.196324.
    ci = mean_interval([0.1, 0.2, 0.3, 0.4, 0.5])
    assert ci.estimate == pytest.approx(0.3)
    assert (ci.low, ci.high) == pytest.approx((0.3 - 0.196324, 0.3 + 0.196324), abs=1e-4)
    assert ci.n == 5 and ci.small


def test_mean_interval_leans_with_the_skew() -> None:
    # Right-skewed rates: the interval reaches further above the mean than below it.
    values = [0.0] * 8 + [0.05, 0.1, 0.6, 0.9]
    ci = mean_interval(values)
    assert ci.high - ci.estimate > ci.estimate - ci.low > 0


def test_mean_interval_edge_cases() -> None:
    assert math.isnan(mean_interval([]).estimate)
    one = mean_interval([0.4])
    assert one.estimate == 0.4 and math.isnan(one.low) and math.isnan(one.high)
    point = mean_interval([0.25] * 4)
    assert (point.low, point.high) == (0.25, 0.25)
    assert mean_interval([0.0, 0.0, 1.0]).low == 0.0  # clipped to the range of a rate
    assert not mean_interval([0.5] * SMALL_SAMPLE).small
    assert mean_interval([0.5] * (SMALL_SAMPLE - 1)).small


def test_bootstrap_interval_of_nothing_is_nan() -> None:
    ci = bootstrap_interval([])
    assert math.isnan(ci.estimate) and math.isnan(ci.low) and math.isnan(ci.high)


def test_bootstrap_interval_of_a_constant_is_a_point() -> None:
    ci = bootstrap_interval([0.25] * 5, n_boot=100)
    assert (ci.estimate, ci.low, ci.high) == pytest.approx((0.25, 0.25, 0.25))


def test_bootstrap_interval_brackets_the_mean_and_is_seeded() -> None:
    values = [0.0, 0.0, 1.0, 1.0, 0.5]
    ci = bootstrap_interval(values, n_boot=500, seed=3)
    assert ci.estimate == pytest.approx(0.5)  # (0 + 0 + 1 + 1 + 0.5) / 5
    assert 0.0 <= ci.low < ci.estimate < ci.high <= 1.0
    assert bootstrap_interval(values, n_boot=500, seed=3) == ci


def test_paired_difference_uses_shared_problems_only(frame_ab: pd.DataFrame) -> None:
    # shared: p1 (A 1/3, B 1), p2 (A 0, B 0); p3 only A. Differences -2/3 and 0.
    # Two values have no skew; s = √2/3, t(0.975, 1) = 12.706: half-width 12.706/3 = 4.24,
    # so the interval is clipped to the whole range of a difference, [-1, 1].
    diff = paired_difference(frame_ab, "A", "B", metric="prr")
    assert (diff.model_a, diff.model_b, diff.metric, diff.n_problems) == ("A", "B", "prr", 2)
    assert diff.difference.estimate == pytest.approx(-1 / 3)
    assert (diff.difference.low, diff.difference.high) == (-1.0, 1.0)
    assert diff.difference.small and diff.difference.n == 2


def test_paired_difference_is_the_mean_interval_of_the_differences() -> None:
    # 25 shared problems; A is right on problem i iff i % 2 == 0, B iff i % 5 == 0.
    rows = []
    for i in range(25):
        rows.append(row("A", f"p{i}", 0, "P" if i % 2 == 0 else "W", 1.0, 3))
        rows.append(row("B", f"p{i}", 0, "P" if i % 5 == 0 else "W", 1.0, 3))
    diff = paired_difference(records_frame(rows), "A", "B", metric="pass_at_1")
    values = [(i % 2 == 0) - (i % 5 == 0) for i in range(25)]
    expected = mean_interval(values, bounds=(-1.0, 1.0))
    got = diff.difference
    assert (got.low, got.high, got.n) == (
        pytest.approx(expected.low),
        pytest.approx(expected.high),
        25,
    )
    assert diff.difference.estimate == pytest.approx(sum(values) / 25)
    assert not diff.difference.small


def test_paired_difference_without_shared_problems(frame_ab: pd.DataFrame) -> None:
    diff = paired_difference(frame_ab, "A", "nobody")
    assert diff.n_problems == 0 and math.isnan(diff.difference.estimate)


# --------------------------------------------------------------------------- pooled groups


def test_problem_values_keep_every_models_rows_of_a_problem_together(frame_ab) -> None:
    # Per (model, problem) PRR: A p1 1/3, A p2 0, A p3 1/4, B p1 1, B p2 0: 5 rows, 3 problems.
    # Problem sums p1 4/3, p2 0, p3 1/4, times 3/5: 4/5, 0, 3/20; their mean 19/60 is the
    # mean over the 5 rows, (1/3 + 1/4 + 1) / 5 = 19/60.
    values = problem_values(per_problem(frame_ab), "prr")
    assert sorted(values) == pytest.approx([0.0, 3 / 20, 4 / 5])
    (s,) = summarise(frame_ab, by=["dataset"], n_boot=1)
    assert s["r_hat"] == pytest.approx(19 / 60)
    ci = rate_interval(values, trials=12)  # 9 scored samples of A, 3 of B
    assert s["r_hat_ci"] == pytest.approx([ci.low, ci.high])


def test_the_small_sample_flag_counts_problems_not_rows() -> None:
    # 3 models x 10 problems: 30 model x problem rows, but 10 problems (< 20).
    rows = [row(m, f"p{i}", 0, "P", 1.0, 3) for m in "ABC" for i in range(10)]
    (s,) = summarise(records_frame(rows), by=["dataset"], n_boot=1)
    assert s["small_sample"] and s["n_problems"] == 10


def test_a_rate_with_no_success_is_not_the_point_zero() -> None:
    # Wilson with each of the 12 problems one trial: [0, t^2 / (12 + t^2)], t = t(0.975, 11)
    # = 2.2010, so the upper bound is 4.8444 / 16.8444 = 0.2876.
    ci = rate_interval([0.0] * 12, trials=12 * 16)
    assert ci.low == 0.0 and ci.high == pytest.approx(0.2876, abs=1e-4)
    ci = rate_interval([1.0] * 12)
    assert ci.high == 1.0 and ci.low == pytest.approx(1 - 0.2876, abs=1e-4)


def test_a_rate_interval_holds_the_hall_interval() -> None:
    values = [0.0, 0.0, 0.1, 0.0, 0.6, 0.2, 0.0, 0.05]
    hall, rate = mean_interval(values), rate_interval(values, trials=64)
    assert rate.low <= hall.low and rate.high >= hall.high and rate.estimate == hall.estimate
    assert math.isnan(rate_interval([0.3]).low)  # one problem: no interval
