"""Overview: leaderboard, AUC curves, Table 1 and class counts for the loaded data."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from dagmath_viz.analysis import metrics, tables
from dagmath_viz.bundled import bundled_notice
from dagmath_viz.draw import figures, paper_figures
from explorer import common, share


def chart_on_demand(label: str, key: str, figure: Callable[[], Any]) -> None:
    """A chart below the fold in a folded expander, built and drawn once it is opened.

    Chromium takes ~0.3 s of a core to draw each Plotly chart, so the three below the
    first screen were a third of a fresh Overview's time (benchmarks/README.md, issue 17);
    their numbers stay one click away, and each keeps its CSV download beside it.
    """
    box = st.expander(label, icon=":material/show_chart:", key=key, on_change="rerun")
    if box.open:
        with box:
            st.plotly_chart(figure(), width="stretch")


corpus = common.corpus()
df = corpus.scored
st.title("Overview")
if note := bundled_notice([corpus.label]):
    st.info(note, icon=":material/science:")
st.caption(
    "PASS@1 and R̂ (the perfect reasoning rate) are means over problems, each problem weighing "
    "the same; intervals are 95% intervals over problems (Hall's skewness-corrected t joined "
    "with a Wilson score interval; README). Δ = PASS@1 − R̂. AUC is the area under A(τ)."
)
if df.empty:
    common.nothing_loaded(corpus)
    st.stop()

# simulated logic-program strategies (dagmath gsm export) are listed apart, not as models
models_df, strategies_df = tables.split_logic_strategies(df)
board = common.derived(
    "leaderboard", lambda: tables.leaderboard(models_df, n_boot=1000), persist=True
)
st.subheader("Leaderboard")
if board["small_sample"].any():
    few = board.loc[board["small_sample"], ["model", "dataset"]].astype(str)
    n_few, n_rows = len(few), len(board)
    if n_rows == 1:
        lead = "The only row rests"
    elif n_few == 1:
        lead = f"1 of {n_rows} rows rests"
    else:
        lead = f"{n_few} of {n_rows} rows rest"
    st.warning(
        f"{lead} on fewer than {metrics.SMALL_SAMPLE} problems: "
        f"{'its intervals are' if n_few == 1 else 'their intervals are'} wide and less "
        "reliable. Compare such rows with care.",
        icon=":material/warning:",
    )
st.caption("Click a row to list its trajectories.")
lb_key = f"ov_board{st.session_state.get('ov_board_n', 0)}"
shown_board = tables.leaderboard_display(board)
picked = st.dataframe(
    common.visible(shown_board), hide_index=True, width="stretch",
    on_select="rerun", selection_mode="single-row", key=lb_key,
)  # fmt: skip
if picked is not None and picked.selection.rows:
    chosen_row = shown_board.iloc[picked.selection.rows[0]]
    st.session_state["ov_board_n"] = st.session_state.get("ov_board_n", 0) + 1
    common.open_table(models=[chosen_row["model"]], datasets=[chosen_row["dataset"]])
common.download(board, "leaderboard.csv", "Download the leaderboard (CSV, fractions)")
if not strategies_df.empty:
    st.markdown("**Logic-program strategies** (not models)")
    st.caption(tables.LOGIC_STRATEGIES_NOTE)
    strategy_board = common.derived(
        "strategy_board", lambda: tables.leaderboard(strategies_df, n_boot=1000), persist=True
    )
    st.dataframe(
        common.visible(tables.leaderboard_display(strategy_board)),
        hide_index=True,
        width="stretch",
    )
share.report_download(corpus)  # this page's tables and charts as one offline file

early = common.derived(
    "answers_before_final", lambda: tables.answers_before_final_step(df, corpus.trajectories)
)
if early is not None and early[1]:
    st.caption(
        f"{early[0]:,} of {early[1]:,} trajectories took their answer from a step before the "
        "final one (no \\boxed{} in the final step; DEFINITIONS.md §1)."
    )

st.subheader("PASS@1 against R̂ across models")
st.caption(
    "The paper's headline: PASS@1 varies a lot across models while R̂ barely moves. "
    "The table is the paper's Table 2 Std row: the sample standard deviation over models."
)
# Figures are cached like the tables (one per data source, never changed by a visit):
# building one with Plotly costs more than the table behind it.
spread_fig = common.derived(
    "spread_figure", lambda: paper_figures.spread_figure(board), persist=True
)
st.plotly_chart(spread_fig, width="stretch")
spread = common.derived(
    "model_spread", lambda: tables.model_spread(models_df, board=board), persist=True
)
st.dataframe(common.visible(tables.spread_display(spread)), hide_index=True, width="stretch")
common.download(spread, "model_spread.csv", "Download the spread (CSV, fractions)")

st.subheader("By difficulty group")
by_diff = common.derived("by_difficulty", lambda: tables.by_difficulty(df), persist=True)
if by_diff.empty:
    st.info("No difficulty is known for these data.")
else:
    colours = common.model_colours()
    chart_on_demand(
        "Chart: PASS@1, R̂ and AUC by difficulty group, one line per model",
        "ov_difficulty_chart",
        lambda: common.derived(
            "difficulty_figure",
            lambda: paper_figures.difficulty_figure(by_diff, colours),
            persist=True,
        ),
    )
    common.download(by_diff, "by_difficulty.csv", "Download by difficulty group (CSV)")

st.subheader("AUC curves")
curve = common.derived("auc_curve", lambda: metrics.auc_curve(df), persist=True)
if curve.empty:
    st.info("No trajectory has a reference answer, so there is no AUC curve.")
else:
    colours = common.model_colours()
    chart_on_demand(
        "Chart: A(τ) against τ, one curve per model",
        "ov_auc_chart",
        lambda: common.derived(
            "auc_figure", lambda: figures.auc_figure(curve, colours=colours), persist=True
        ),
    )
    common.download(curve, "auc_curves.csv", "Download the AUC curves (CSV)")

st.subheader("Graph statistics by cohort (the paper's Table 1)")
t1 = common.derived("table1", lambda: tables.table1(df), persist=True)
st.dataframe(  # an empty cohort's means are unknown: "–", not "None"
    common.visible(tables.table1_display(t1)),
    hide_index=True,
    width="stretch",
    placeholder=tables.MISSING,
)
common.download(t1, "table1.csv", "Download Table 1 (CSV)")

st.subheader("Trajectories by class")
counts = common.derived("class_counts", lambda: tables.class_counts_table(df), persist=True)
chart_on_demand(
    "Chart: trajectories by class, one bar per model and data set",
    "ov_counts_chart",
    lambda: common.derived(
        "class_counts_figure", lambda: figures.class_counts_figure(counts), persist=True
    ),
)
cc_key = f"ov_counts{st.session_state.get('ov_counts_n', 0)}"
picked = st.dataframe(
    common.visible(counts), hide_index=True, width="stretch",
    on_select="rerun", selection_mode="single-row", key=cc_key,
)  # fmt: skip
st.caption("Click a row to list its trajectories.")
if picked is not None and picked.selection.rows:
    chosen_row = counts.iloc[picked.selection.rows[0]]
    st.session_state["ov_counts_n"] = st.session_state.get("ov_counts_n", 0) + 1
    common.open_table(models=[chosen_row["model"]], datasets=[chosen_row["dataset"]])
common.download(counts, "class_counts.csv", "Download the class counts (CSV)")
