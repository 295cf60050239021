"""Overview's tables at 100,000 scored records: leaderboard and AUC curve (issue 17, item 2).

Compares, in one run on the same synthetic frame, the library's ``leaderboard`` (one
per-problem grouping for all groups, closed-form intervals) and ``auc_curve`` (a sorted
search and a reversed cumulative sum, linear in the rows) with reference versions written
here the way they were before: a per-group loop with a 1,000-resample percentile bootstrap,
and a rows x 101 hit matrix. Prints ratios (reference / library); run it alone:
``python benchmarks/overview_tables.py [N]``.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from dagmath_viz.analysis import metrics, tables


def frame(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    model = rng.integers(0, 10, n)
    problem = rng.integers(0, 500, n)
    correct = rng.random(n) < 0.5
    r = rng.random(n)
    r[rng.random(n) < 0.3] = 1.0
    closed = r >= 1.0
    return pd.DataFrame({
        "model": np.array([f"m{i}" for i in range(10)])[model],
        "dataset": np.where(problem < 250, "A", "B"), "problem_id": problem.astype(str),
        "sample_id": np.arange(n), "difficulty": (problem % 6) + 1.0,
        "n_nodes": rng.integers(2, 50, n), "n_edges": rng.integers(1, 80, n),
        "density": rng.random(n), "max_in_degree": rng.integers(1, 5, n),
        "max_out_degree": rng.integers(1, 9, n), "closeness_rate": r, "closed": closed,
        "final_correct": correct, "perfect": correct & closed,
        "class": np.where(~correct, "incorrect", np.where(closed, "perfect", "imperfect")),
    })  # fmt: skip


def reference_auc_curve(df: pd.DataFrame) -> pd.DataFrame:
    taus = np.linspace(0.0, 1.0, 101)
    r = df["closeness_rate"].to_numpy(float)
    hits = df["final_correct"].to_numpy(bool)[:, None] & (r[:, None] >= taus[None, :])
    hits[:, taus >= 1.0] &= df["closed"].to_numpy(bool)[:, None]
    keys = df[["model", "dataset", "problem_id"]]
    per = pd.concat([keys, pd.DataFrame(hits.astype(float), index=df.index)], axis=1)
    return per.groupby(list(keys.columns)).mean().groupby(level=[0, 1]).mean()


def reference_leaderboard(df: pd.DataFrame, n_boot: int = 1000) -> list[tuple]:
    rows = []
    for key, part in df.groupby(["model", "dataset"]):
        pp = metrics.per_problem(part)
        for col in ("pass_at_1", "prr"):
            v = pp[col].to_numpy()
            rng = np.random.default_rng(0)
            means = v[rng.integers(0, v.size, size=(n_boot, v.size))].mean(axis=1)
            rows.append((key, col, *np.quantile(means, [0.025, 0.975])))
        metrics.cohort_stats(part)
    return rows


def best_of(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(n: int = 100_000) -> None:
    df = frame(n)
    pairs = {
        "leaderboard (10 models x 2 datasets, intervals on)": (
            lambda: reference_leaderboard(df),
            lambda: tables.leaderboard(df, n_boot=1000),
        ),
        "auc_curve (101 thresholds)": (
            lambda: reference_auc_curve(df),
            lambda: metrics.auc_curve(df),
        ),
    }
    print(f"{n:,} scored records; best of 3; ratio = reference / library")
    for name, (ref, lib) in pairs.items():
        t_ref, t_lib = best_of(ref), best_of(lib)
        print(f"{name}: reference {t_ref:.2f} s, library {t_lib:.2f} s, {t_ref / t_lib:.1f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
