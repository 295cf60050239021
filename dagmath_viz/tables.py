"""Tidy DataFrames for the pages and the CLI: leaderboard, Table 1, class counts."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from dagmath_viz.metrics import GRAPH_STATS, cohort_masks, difficulty_group, summarise
from dagmath_viz.schema import CLASSES, COHORTS

__all__ = [
    "class_counts_table",
    "format_percent",
    "leaderboard",
    "table1",
    "with_difficulty_group",
]


def format_percent(value: float | None) -> str:
    """A rate as the paper prints it: percent with one decimal ("87.5%"); "–" if unknown."""
    if value is None or pd.isna(value):
        return "–"
    return f"{100.0 * value:.1f}%"


def leaderboard(
    df: pd.DataFrame, by: Sequence[str] = ("model", "dataset"), n_boot: int = 1000, seed: int = 0
) -> pd.DataFrame:
    """One row per group: problems, trajectories, PASS@1 and R̂ with 95% intervals, Δ, AUC.

    Rates are fractions in [0, 1]; ``*_low``/``*_high`` are percentile-bootstrap bounds over
    problems (absent when ``n_boot`` is 0).
    """
    rows = []
    for s in summarise(df, by=by, n_boot=n_boot, seed=seed):
        row = {k: s[k] for k in by}
        row.update(
            n_problems=s["n_problems"],
            n_trajectories=s["n_trajectories"],
            n_scored=s["n_scored"],
            pass_at_1=s["pass_at_1"],
            r_hat=s["r_hat"],
            gap=s["gap"],
            auc=s["auc"],
        )
        if n_boot:
            row.update(
                pass_at_1_low=s["pass_at_1_ci"][0],
                pass_at_1_high=s["pass_at_1_ci"][1],
                r_hat_low=s["r_hat_ci"][0],
                r_hat_high=s["r_hat_ci"][1],
            )
        row.update({c: s["class_counts"][c] for c in CLASSES})
        rows.append(row)
    return pd.DataFrame(rows)


def table1(df: pd.DataFrame, by: Sequence[str] = ("model", "dataset")) -> pd.DataFrame:
    """The paper's Table 1 in long form: one row per group × cohort with mean statistics.

    Density stays a fraction here; display it in percent as the paper does.
    """
    rows = []
    groups = df.groupby(list(by), sort=True) if by else [((), df)]
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        masks = cohort_masks(part)
        for cohort in COHORTS:
            sub = part.loc[masks[cohort], list(GRAPH_STATS)].astype(float)
            row = dict(zip(by, key, strict=True))
            row["cohort"] = cohort
            row["n"] = len(sub)
            row.update({s: (sub[s].mean() if len(sub) else float("nan")) for s in GRAPH_STATS})
            rows.append(row)
    return pd.DataFrame(rows, columns=[*by, "cohort", "n", *GRAPH_STATS])


def class_counts_table(df: pd.DataFrame, by: Sequence[str] = ("model", "dataset")) -> pd.DataFrame:
    """Trajectory counts per class, one row per group, every class a column."""
    counts = df.groupby([*by, "class"]).size().unstack("class", fill_value=0)
    counts = counts.reindex(columns=list(CLASSES), fill_value=0)
    counts["total"] = counts.sum(axis=1)
    return counts.reset_index()


def with_difficulty_group(df: pd.DataFrame) -> pd.DataFrame:
    """A copy with a ``difficulty_group`` column (group k holds difficulties in (k-1, k])."""
    out = df.copy()
    out["difficulty_group"] = out["difficulty"].map(difficulty_group).astype("Int64")
    return out


def leaderboard_display(
    board: pd.DataFrame, by: Sequence[str] = ("model", "dataset")
) -> pd.DataFrame:
    """The leaderboard as the paper prints it: percent with one decimal, intervals in brackets."""
    out = board[list(by)].copy()
    out["problems"] = board["n_problems"]
    out["trajectories"] = board["n_trajectories"]

    def with_ci(name: str) -> pd.Series:
        if f"{name}_low" not in board:
            return board[name].map(format_percent)
        return pd.Series(
            [
                f"{format_percent(v)} [{format_percent(lo)[:-1]}, {format_percent(hi)}]"
                for v, lo, hi in zip(
                    board[name], board[f"{name}_low"], board[f"{name}_high"], strict=True
                )
            ],
            index=board.index,
        )

    out["PASS@1 (95% CI)"] = with_ci("pass_at_1")
    out["R̂ (95% CI)"] = with_ci("r_hat")
    out["Δ = PASS@1 − R̂"] = board["gap"].map(format_percent)
    out["AUC"] = board["auc"].map(format_percent)
    return out


def table1_display(t1: pd.DataFrame) -> pd.DataFrame:
    """Table 1 as the paper prints it: means with one decimal, density in percent."""
    out = t1.copy()
    for col in GRAPH_STATS:
        if col == "density":
            out[col] = (100.0 * out[col]).round(1)
        else:
            out[col] = out[col].round(1)
    return out.rename(
        columns={
            "n_nodes": "#nodes",
            "n_edges": "#edges",
            "density": "density (%)",
            "max_in_degree": "max in-deg",
            "max_out_degree": "max out-deg",
        }
    )


def cohort_long(df: pd.DataFrame) -> pd.DataFrame:
    """Rows repeated once per cohort they belong to, with a ``cohort`` column (for plots)."""
    parts = []
    for name, mask in cohort_masks(df).items():
        part = df.loc[mask].copy()
        part["cohort"] = name
        parts.append(part)
    return pd.concat(parts, ignore_index=True) if parts else df.assign(cohort=[])
