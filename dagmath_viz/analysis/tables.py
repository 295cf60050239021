"""Tidy DataFrames for the pages and the CLI: leaderboard, Table 1, class counts."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import pandas as pd

from dagmath_viz.analysis.metrics import GRAPH_STATS, cohort_masks, summarise
from dagmath_viz.schema import CLASSES, COHORTS

__all__ = [
    "CLOSENESS_BINS",
    "MISSING",
    "REPORT_TABLES",
    "answers_before_final_step",
    "by_difficulty",
    "class_counts_table",
    "closeness_accuracy",
    "closeness_bin",
    "correct_to_perfect_shift",
    "default_comparison",
    "format_percent",
    "graph_stats_by_difficulty",
    "grouping_frame",
    "leaderboard",
    "LOGIC_STRATEGIES_NOTE",
    "LOGIC_STRATEGY_DOMAIN",
    "logic_strategy_models",
    "model_spread",
    "split_logic_strategies",
    "report_table",
    "spread_display",
    "table1",
    "table1_report",
    "with_difficulty_group",
]


#: What a table shows for an unknown value (an empty cohort's mean), as the paper prints it;
#: grids show it for missing values (``st.dataframe(placeholder=MISSING)``).
MISSING = "–"


def format_percent(value: float | None) -> str:
    """A rate as the paper prints it: percent with one decimal ("87.5%"); "–" if unknown."""
    if value is None or pd.isna(value):
        return MISSING
    return f"{100.0 * value:.1f}%"


#: The ``domain`` ``dagmath gsm export`` writes on every trajectory it makes of a
#: logic-program proof: the proof of a simulated search strategy (shortest, DFS, BFS,
#: overlap), not a model's reasoning. Its PASS@1 is 100 % by construction.
LOGIC_STRATEGY_DOMAIN = "gsm-logic"


#: What a page says above the strategies' own table.
LOGIC_STRATEGIES_NOTE = (
    "Proofs of simulated search strategies (shortest, DFS, BFS, overlap) on logic-program "
    "word problems, exported by dagmath gsm export so both lenses read them: no model wrote "
    "them and every answer is right by construction, so they are not ranked beside models "
    "(their efficiency is on the Efficiency page)."
)


def logic_strategy_models(df: pd.DataFrame) -> set[str]:
    """The models whose every trajectory is an exported logic-program proof (``domain``
    :data:`LOGIC_STRATEGY_DOMAIN`): strategies, shown apart from models."""
    if df.empty or "domain" not in df or "model" not in df:
        return set()
    is_logic = df["domain"].astype("string").eq(LOGIC_STRATEGY_DOMAIN).fillna(False)
    every = is_logic.groupby(df["model"].astype(str)).all()
    return {str(m) for m, flag in every.items() if flag}


def split_logic_strategies(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the models' rows, the logic-program strategies' rows) of a scored frame, so that a
    leaderboard of models does not list simulated strategies beside them. When every model
    is a strategy (a folder of ``gsm export`` alone) nothing is split off: they are then
    what the leaderboard is about.
    """
    strategies = logic_strategy_models(df)
    if not strategies:
        return df, df.iloc[0:0]
    mask = df["model"].astype(str).isin(strategies)
    if mask.all():
        return df, df.iloc[0:0]
    return df[~mask], df[mask]


#: The leaderboard's columns a terminal shows by default (``dagmath report``; ``--wide``,
#: CSV and JSON give every column).
COMPACT_COLUMNS = (
    "n_problems",
    "n_trajectories",
    "pass_at_1",
    "r_hat",
    "gap",
    "auc",
    "small_sample",
)


def compact_leaderboard(board: pd.DataFrame, strategies: Collection[str] = ()) -> pd.DataFrame:
    """The leaderboard as text that fits a terminal: each rate with its 95% interval in one
    cell (``"62.5 [41.0, 80.2]"``, percent), the group columns, the counts of problems and
    trajectories, and ``few problems`` marked where ``small_sample`` is true; the models
    named in ``strategies`` (:func:`logic_strategy_models`) are noted as logic-program
    strategies.

    >>> row = {"model": "m", "n_problems": 12, "n_trajectories": 24, "pass_at_1": 0.625,
    ...        "pass_at_1_low": 0.41, "pass_at_1_high": 0.802, "small_sample": True}
    >>> shown = compact_leaderboard(pd.DataFrame([row])).iloc[0]
    >>> list(shown.index)
    ['model', 'problems', 'trajectories', 'PASS@1 % [95% CI]', 'note']
    >>> shown["PASS@1 % [95% CI]"], shown["note"]
    ('62.5 [41.0, 80.2]', 'few problems')
    """
    groups = [c for c in board.columns if c not in COMPACT_COLUMNS and not _derived(c, board)]
    out = board[groups].copy()
    out["problems"] = board["n_problems"] if "n_problems" in board else None
    out["trajectories"] = board["n_trajectories"] if "n_trajectories" in board else None
    for col, name in (("pass_at_1", "PASS@1"), ("r_hat", "R̂"), ("gap", "gap"), ("auc", "AUC")):
        if col not in board:
            continue
        with_ci = f"{col}_low" in board and f"{col}_high" in board
        out[f"{name} % [95% CI]" if with_ci else f"{name} %"] = [
            _percent_cell(board.at[i, col], board.at[i, f"{col}_low"] if with_ci else None,
                          board.at[i, f"{col}_high"] if with_ci else None)
            for i in board.index
        ]  # fmt: skip
    if "small_sample" in board:
        out["note"] = board["small_sample"].map(lambda small: "few problems" if small else "")
    if strategies and "model" in board:  # simulated search strategies, not models
        kind = board["model"].astype(str).isin(set(strategies))
        note = out["note"] if "note" in out else pd.Series("", index=out.index)
        out["note"] = [
            "; ".join(filter(None, ["logic-program strategy", n])) if k else n
            for k, n in zip(kind, note, strict=True)
        ]
        out = out.iloc[np.argsort(kind.to_numpy(), kind="stable")]  # models first
    return out.reset_index(drop=True)


def _derived(col: str, board: pd.DataFrame) -> bool:
    """A column computed per group (a rate's bound, a class count), not a group key."""
    if col.endswith(("_low", "_high")) or col in {"n_scored", *CLASSES}:
        return True
    return col in {"pass_at_1", "r_hat", "gap", "auc"} and col in board


def _percent_cell(value: float, low: float | None, high: float | None) -> str:
    if value is None or pd.isna(value):
        return MISSING
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return f"{100.0 * value:.1f}"
    return f"{100.0 * value:.1f} [{100.0 * low:.1f}, {100.0 * high:.1f}]"


def leaderboard(
    df: pd.DataFrame, by: Sequence[str] = ("model", "dataset"), n_boot: int = 1000, seed: int = 0
) -> pd.DataFrame:
    """One row per group: problems, trajectories, PASS@1 and R̂ with 95% intervals, Δ, AUC.

    Rates are fractions in [0, 1]; ``*_low``/``*_high`` are 95% interval bounds over problems
    (:func:`dagmath_viz.analysis.metrics.mean_interval`; absent when ``n_boot`` is 0, which only
    switches them on or off). ``small_sample`` is true below 20 problems: the intervals
    then rest on few problems, and pages warn. ``by`` may name ``difficulty_group``.
    """
    rows = []
    by = list(by)
    df = grouping_frame(df, by)
    # only the columns the numbers read: each group's rows are then a narrow slice
    df = df[list(dict.fromkeys([*by, *_LEADERBOARD_COLUMNS]))]
    for s in summarise(df, by=by, n_boot=n_boot, seed=seed, cohorts=False):
        row = {k: s[k] for k in by}
        row.update(
            n_problems=s["n_problems"],
            n_trajectories=s["n_trajectories"],
            n_scored=s["n_scored"],
            pass_at_1=s["pass_at_1"],
            r_hat=s["r_hat"],
            gap=s["gap"],
            auc=s["auc"],
            small_sample=s["small_sample"],
        )
        if n_boot:
            row.update(
                pass_at_1_low=s["pass_at_1_ci"][0],
                pass_at_1_high=s["pass_at_1_ci"][1],
                r_hat_low=s["r_hat_ci"][0],
                r_hat_high=s["r_hat_ci"][1],
                auc_low=s["auc_ci"][0],
                auc_high=s["auc_ci"][1],
            )
        row.update({c: s["class_counts"][c] for c in CLASSES})
        rows.append(row)
    board = pd.DataFrame(rows)
    for col in by:  # an integer key with a missing group stays integer (1, not 1.0)
        if len(board) and pd.api.types.is_integer_dtype(df[col].dtype):
            board[col] = pd.array(board[col], dtype="Int64")
    return board


#: The columns :func:`leaderboard`'s numbers read (per problem and per group).
_LEADERBOARD_COLUMNS = (
    "model", "dataset", "problem_id", "final_correct", "closed", "closeness_rate",
    "difficulty", "class",
)  # fmt: skip


def table1(df: pd.DataFrame, by: Sequence[str] = ("model", "dataset")) -> pd.DataFrame:
    """The paper's Table 1 in long form: one row per group × cohort with mean statistics.

    Density stays a fraction here; display it in percent as the paper does.
    """
    rows = []
    # only the columns the cells read: each group's rows are then a narrow slice
    df = df[list(dict.fromkeys([*by, "final_correct", "class", *GRAPH_STATS]))]
    # dropna=False: a group with no difficulty (or no dataset) is a row, not lost
    groups = df.groupby(list(by), sort=True, dropna=False) if by else [((), df)]
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


#: The paper's Table 1 columns as ``dagmath report --table table1`` prints them.
TABLE1_COLUMNS = ("n_nodes", "n_edges", "density_percent", "max_in_degree", "max_out_degree")


def table1_report(df: pd.DataFrame, by: Sequence[str] = ("model", "dataset")) -> pd.DataFrame:
    """:func:`table1` with the paper's units: density in percent (``density_percent``).

    One row per group × cohort (All, Incorrect, Correct, Perfect, in that order) with the
    cohort's trajectory count ``n`` and the mean #nodes, #edges, density (%), max in-degree
    and max out-degree; an empty cohort's means are NaN (the paper's "–").
    """
    out = table1(df, by=by)
    out.insert(out.columns.get_loc("density"), "density_percent", 100.0 * out["density"])
    return out.drop(columns="density")


def graph_stats_by_difficulty(df: pd.DataFrame, by: Sequence[str] = ("model",)) -> pd.DataFrame:
    """The paper's Figure 3: the mean of each graph statistic per group and difficulty group.

    One row per ``by`` group × difficulty group (k holds difficulties in (k − 1, k]) with
    ``n`` (trajectories, every cohort) and the means of the five statistics (density a
    fraction). Rows without a difficulty are left out.
    """
    by = list(by)
    grouped = with_difficulty_group(df)
    grouped = grouped[grouped["difficulty_group"].notna()]
    keys = [*by, "difficulty_group"]
    columns = [*keys, "n", *GRAPH_STATS]
    if grouped.empty:
        return pd.DataFrame(columns=columns)
    stats = grouped[[*keys, *GRAPH_STATS]].astype({s: float for s in GRAPH_STATS})
    out = stats.groupby(keys, sort=True).agg(
        n=(GRAPH_STATS[0], "size"), **{s: (s, "mean") for s in GRAPH_STATS}
    )
    out = out.reset_index()
    out["difficulty_group"] = out["difficulty_group"].astype(int)
    return out[columns]


def class_counts_table(df: pd.DataFrame, by: Sequence[str] = ("model", "dataset")) -> pd.DataFrame:
    """Trajectory counts per class, one row per group, every class a column."""
    counts = df.groupby([*by, "class"]).size().unstack("class", fill_value=0)
    counts = counts.reindex(columns=list(CLASSES), fill_value=0)
    counts["total"] = counts.sum(axis=1)
    return counts.reset_index()


def with_difficulty_group(df: pd.DataFrame) -> pd.DataFrame:
    """A copy with a ``difficulty_group`` column (group k holds difficulties in (k-1, k])."""
    difficulty = pd.to_numeric(df["difficulty"], errors="coerce").astype(float).to_numpy()
    known = np.isfinite(difficulty)
    # difficulty_group, vectorised: max(1, ceil(d)); unknown (or infinite) stays missing
    groups = np.maximum(1, np.ceil(np.where(known, difficulty, 1.0)))
    column = pd.array(groups.astype(np.int64), dtype="Int64")
    column[~known] = pd.NA
    return df.assign(difficulty_group=column)


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
                format_percent(v)
                if pd.isna(lo) or pd.isna(hi)  # one problem: no interval to show
                else f"{format_percent(v)} [{format_percent(lo)[:-1]}, {format_percent(hi)}]"
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


# --------------------------------------------------------------------------- the paper's analyses

#: Columns ``dagmath report --by`` can use that are derived, not stored.
DERIVED_COLUMNS = ("difficulty_group",)


def grouping_frame(df: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """``df`` with every derived column ``by`` asks for (``difficulty_group``) added.

    Raises:
        DagMathError: a column of ``by`` is neither stored nor derived; the message lists them.
    """
    from dagmath_viz.schema import DagMathError

    unknown = [c for c in by if c not in df.columns and c not in DERIVED_COLUMNS]
    if unknown:
        known = ", ".join([*sorted(c for c in df.columns if df[c].map(_hashable).all()),
                           *DERIVED_COLUMNS])  # fmt: skip
        raise DagMathError(f"--by: unknown column(s) {', '.join(unknown)} (known: {known})")
    if "difficulty_group" in by and "difficulty_group" not in df.columns:
        return with_difficulty_group(df)
    return df


def _hashable(value) -> bool:
    return not isinstance(value, list | dict | set | tuple)


def model_spread(
    df: pd.DataFrame, within: Sequence[str] = ("dataset",), board: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The paper's Table 2 "Std" row: across models, the sample std of PASS@1, R̂ and AUC.

    One row per ``within`` group (per dataset by default): ``n_models``, the mean and the
    sample standard deviation (n − 1 in the denominator) over models of each metric, in
    fractions, and ``ratio`` = std PASS@1 / std R̂ (the paper's finding: PASS@1 varies far
    more than R̂). Fewer than two models give NaN stds. ``board``, when given, is
    :func:`leaderboard` of ``df`` by ``["model", *within]`` already computed (its point
    estimates do not depend on ``n_boot``), so it is not computed again.
    """
    within = list(within)
    if board is None:
        board = leaderboard(df, by=["model", *within], n_boot=0)
    cols = ["n_models"] + [
        f"{m}_{s}" for m in ("pass_at_1", "r_hat", "auc") for s in ("mean", "std")
    ]
    if board.empty:
        return pd.DataFrame(columns=[*within, *cols, "ratio"])
    rows = []
    groups = board.groupby(within, sort=True) if within else [((), board)]
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(within, key, strict=True))
        row["n_models"] = len(part)
        for metric in ("pass_at_1", "r_hat", "auc"):
            values = part[metric].astype(float)
            row[f"{metric}_mean"] = values.mean()
            row[f"{metric}_std"] = values.std(ddof=1) if len(values) > 1 else float("nan")
        std_r = row["r_hat_std"]
        row["ratio"] = row["pass_at_1_std"] / std_r if std_r and std_r == std_r else float("nan")
        rows.append(row)
    return pd.DataFrame(rows, columns=[*within, *cols, "ratio"])


def by_difficulty(
    df: pd.DataFrame, by: Sequence[str] = ("model", "difficulty_group")
) -> pd.DataFrame:
    """PASS@1, R̂, Δ and AUC per model and difficulty group (the rates by difficulty; the
    paper's Figure 3 is the graph statistics, :func:`graph_stats_by_difficulty`).

    Group k holds difficulties in (k − 1, k] (DEFINITIONS.md §3); rows without a difficulty
    are left out. The leaderboard's columns, intervals off.
    """
    grouped = with_difficulty_group(df)
    grouped = grouped[grouped["difficulty_group"].notna()]
    if grouped.empty:
        return pd.DataFrame(columns=[*by, "n_problems", "pass_at_1", "r_hat", "gap", "auc"])
    return leaderboard(grouped, by=list(by), n_boot=0)


#: Closeness-rate bins of :func:`closeness_accuracy`: [lower, upper) and a last bin r = 1.
CLOSENESS_BINS = (0.0, 0.5, 0.75, 0.9, 1.0)


def closeness_bin(r: float) -> str | None:
    """The label of the bin holding closeness rate ``r``: "[0.50, 0.75)" ... "1 (closed)"."""
    if r is None or pd.isna(r):
        return None
    if r >= 1.0:
        return "1 (no dead end)"
    for lo, hi in zip(CLOSENESS_BINS, CLOSENESS_BINS[1:], strict=False):
        if lo <= r < hi:
            return f"[{lo:.2f}, {hi:.2f})"
    return None


def closeness_accuracy(df: pd.DataFrame, by: Sequence[str] = ("model",)) -> pd.DataFrame:
    """Accuracy by closeness bin: how closeness relates to correctness, per model.

    Scored trajectories only (those with a reference answer); one row per group and bin
    with ``n`` (trajectories), ``n_correct`` and ``accuracy`` = n_correct / n (a share of
    trajectories, not a mean over problems). Bins are those of :data:`CLOSENESS_BINS`, in
    order; empty bins are left out.
    """
    by = list(by)
    s = df[df["final_correct"].notna()]
    columns = [*by, "closeness_bin", "n", "n_correct", "accuracy"]
    if s.empty:
        return pd.DataFrame(columns=columns)
    labels = [closeness_bin(x) for x in (*CLOSENESS_BINS[:-1], 1.0)]
    frame = s[by].copy()
    frame["closeness_bin"] = pd.Categorical(
        s["closeness_rate"].map(closeness_bin), categories=labels, ordered=True
    )
    frame["correct"] = s["final_correct"].astype(bool).astype(int)
    out = (
        frame.groupby([*by, "closeness_bin"], observed=True, sort=True)["correct"]
        .agg(n="size", n_correct="sum")
        .reset_index()
    )
    out["accuracy"] = out["n_correct"] / out["n"]
    out["closeness_bin"] = out["closeness_bin"].astype(str)
    return out[columns]


def correct_to_perfect_shift(
    df: pd.DataFrame, by: Sequence[str] = ("model", "dataset")
) -> pd.DataFrame:
    """The paper's Appendix F: per group, mean(Perfect) − mean(Correct) of each statistic.

    One row per group with the gap Δ = PASS@1 − R̂ and, for each graph statistic, the
    shift from the Correct cohort's mean to the Perfect cohort's (negative: perfect
    trajectories are smaller). NaN where a cohort is empty. Plot each shift against the gap.
    """
    by = list(by)
    t1 = table1(df, by=by)
    board = leaderboard(df, by=by, n_boot=0)
    rows = []
    if t1.empty or board.empty:
        return pd.DataFrame(columns=[*by, "gap", *GRAPH_STATS])
    gap = {tuple(r[k] for k in by): r["gap"] for _, r in board.iterrows()}
    for key, part in t1.groupby(by, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        cells = part.set_index("cohort")
        row = dict(zip(by, key, strict=True))
        row["gap"] = gap.get(key, float("nan"))
        for stat in GRAPH_STATS:
            row[stat] = cells.at["Perfect", stat] - cells.at["Correct", stat]
        rows.append(row)
    return pd.DataFrame(rows, columns=[*by, "gap", *GRAPH_STATS])


#: What ``dagmath report --table`` can print.
REPORT_TABLES = ("leaderboard", "table1", "spread", "closeness", "shift")


def report_table(df: pd.DataFrame, table: str, by: Sequence[str], n_boot: int = 0) -> pd.DataFrame:
    """The table ``dagmath report --table NAME --by COLS`` prints (CSV/text).

    ``leaderboard`` groups by ``by``; ``table1`` is :func:`table1_report` by ``by``;
    ``spread`` is :func:`model_spread` within ``by``
    minus ``model``; ``closeness`` is :func:`closeness_accuracy` by ``by``; ``shift`` is
    :func:`correct_to_perfect_shift` by ``by``.

    Raises:
        DagMathError: an unknown table or grouping column.
    """
    from dagmath_viz.schema import DagMathError

    if table not in REPORT_TABLES:
        raise DagMathError(f"--table: unknown table {table!r}; use {', '.join(REPORT_TABLES)}")
    df = grouping_frame(df, by)
    if table == "leaderboard":
        return leaderboard(df, by=by, n_boot=n_boot)
    if table == "table1":
        return table1_report(df, by=by)
    if table == "spread":
        return model_spread(df, within=[c for c in by if c != "model"])
    if table == "closeness":
        return closeness_accuracy(df, by=by)
    return correct_to_perfect_shift(df, by=by)


def answers_before_final_step(
    df: pd.DataFrame, trajectories: Sequence | None = None
) -> tuple[int, int] | None:
    """How many trajectories took their answer from a step before the final one.

    DEFINITIONS.md §1: with no ``\\boxed{}`` in the final step, the answer is the last box of
    the latest earlier step, and the scored record's ``answer_step`` names that step's id.
    A row counts when ``answer_step`` is set and differs from its final step's id. The
    final step's id comes from the row's trajectory (``trajectories``, aligned with the
    rows, as :class:`dagmath_viz.run.corpus.Corpus` holds them); rows without one are not
    known and left out.

    Returns:
        (count, rows known), or None when the data have no ``answer_step`` column (scored
        before the answer rule existed).
    """
    if "answer_step" not in df.columns:
        return None
    count = known = 0
    steps = df["answer_step"].tolist()
    trajs = list(trajectories) if trajectories is not None else [None] * len(steps)
    for answer_step, traj in zip(steps, trajs, strict=True):
        if traj is None or not getattr(traj, "steps", None):
            continue
        known += 1
        if answer_step is not None and not pd.isna(answer_step):
            count += answer_step != traj.steps[-1].step_id
    return count, known


def default_comparison(df: pd.DataFrame) -> list[str]:
    """The two models Compare opens on when nothing asks for others: the first two, by name,
    of the dataset the most models share (then the one with more trajectories, then by
    name), so the first view compares models on one dataset rather than whichever two
    names sort first. Fewer than two models: all of them.

    >>> df = pd.DataFrame({"model": ["b", "a", "c", "c"], "dataset": ["x", "y", "y", "y"]})
    >>> default_comparison(df)
    ['a', 'c']
    """
    if df.empty:
        return []
    pairs = df[["model", "dataset"]].astype(str)
    ranked = (
        pairs.groupby("dataset")
        .agg(models=("model", "nunique"), rows=("model", "size"))
        .reset_index()
        .sort_values(["models", "rows", "dataset"], ascending=[False, False, True])
    )
    best = ranked.iloc[0]
    if best["models"] < 2:
        return sorted(pairs["model"].unique())[:2]
    return sorted(pairs.loc[pairs["dataset"] == best["dataset"], "model"].unique())[:2]


def spread_display(spread: pd.DataFrame) -> pd.DataFrame:
    """The spread table as the Overview shows it (percent, ratio to one decimal); "–" where
    a value is unknown (a dataset with one model has no std, one whose models share one R̂
    no ratio), as in every other table of the Overview, never an empty "None" cell."""
    shown = spread.copy()
    for col in shown.columns:
        if col.endswith(("_mean", "_std")):
            shown[col] = shown[col].map(format_percent)
    shown["ratio"] = spread["ratio"].map(lambda r: MISSING if pd.isna(r) else f"{r:.1f}")
    labels = {"n_models": "models", "ratio": "std PASS@1 / std R̂"}
    for key, name in (("pass_at_1", "PASS@1"), ("r_hat", "R̂"), ("auc", "AUC")):
        labels |= {f"{key}_mean": f"{name} mean", f"{key}_std": f"{name} std"}
    return shown.rename(columns=labels)
