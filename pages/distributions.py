"""Distributions: the five graph statistics by difficulty group (or dataset) and by cohort."""

from __future__ import annotations

import streamlit as st

from dagmath_viz.analysis import tables
from dagmath_viz.analysis.metrics import GRAPH_STATS
from dagmath_viz.bundled import bundled_notice
from dagmath_viz.draw import figures, paper_figures
from explorer import common

corpus = common.corpus()
df = corpus.scored
st.title("Distributions of graph statistics")
if note := bundled_notice([corpus.label]):
    st.info(note, icon=":material/science:")
if df.empty:
    common.nothing_loaded(corpus)
    st.stop()

# Only the columns plotted and the cohorts' (a copy of every column, cohorts repeating rows,
# took ~120 MB at 100,000 scored records). "row": the corpus row behind each point, so that
# a clicked outlier opens its trajectory.
PLOTTED = ["model", "dataset", "difficulty", *GRAPH_STATS, "final_correct", "class"]
grouped = common.derived(
    "with_difficulty",
    lambda: tables.with_difficulty_group(df[PLOTTED].assign(row=range(len(df)))),
)
has_difficulty = grouped["difficulty_group"].notna().any()
controls = st.columns([3, 1])
stat = controls[0].radio(
    "Statistic", GRAPH_STATS, horizontal=True, key="dist_stat", format_func=figures.STAT_LABELS.get
)
kind = controls[1].radio("Plot", ["box", "violin"], horizontal=True, key="dist_kind")
models = sorted(df["model"].unique())
chosen = st.multiselect(  # the page's width, not a column: chips wrap, long names read whole
    "Models", models, default=models, key="dist_models", format_func=common.shown_option
)
data = grouped[grouped["model"].isin(chosen)]

if has_difficulty:
    st.caption(
        "Difficulty group k holds difficulties in (k − 1, k]; the paper's Figure 3 plots the "
        "means of these statistics by difficulty group. "
        "Trajectories without a difficulty are left out of this plot."
    )
    x = "difficulty_group"
    strat = data[data["difficulty_group"].notna()]
else:
    st.caption("No difficulty is known for these data, so they are stratified by dataset.")
    x, strat = "dataset", data
st.caption("Click an outlier point to open its trajectory.")


def _outlier_chart(data, x: str, name: str) -> None:
    """A distribution chart whose outlier points open the trajectory behind them."""
    nonce = st.session_state.get("dist_n", 0)
    event = st.plotly_chart(
        figures.stat_distribution_figure(
            data[list(dict.fromkeys(["model", x, stat, "row"]))],  # the figure copies its frame
            stat,
            x=x,
            kind=kind,
            custom_data=["row"],
            colours=common.model_colours(),
        ),  # fmt: skip
        width="stretch",
        on_select="rerun",
        selection_mode="points",
        key=f"dist_{name}_{nonce}",
    )
    for point in event.selection.points if event is not None else []:
        custom = point.get("customdata")
        if isinstance(custom, dict):  # Streamlit sends plotly's array as {"0": value}
            custom = [custom[k] for k in sorted(custom, key=int)]
        if custom:
            rec = df.iloc[int(custom[0])]
            st.session_state["dist_n"] = nonce + 1  # a fresh chart when coming back
            common.open_trajectory(
                rec["model"], rec["dataset"], rec["problem_id"], int(rec["sample_id"])
            )


_outlier_chart(strat, x, "strata")

if has_difficulty:
    st.subheader("The paper's Figure 3: the five statistics by difficulty")
    st.caption(
        "Mean of each graph statistic per model and difficulty group, every trajectory of "
        "the group (all cohorts; density in percent). In the paper all five rise with "
        "difficulty, max out-degree more sharply than max in-degree. Hover a point for n."
    )
    means = common.derived(
        "graph_stats_by_difficulty",
        lambda: tables.graph_stats_by_difficulty(df[PLOTTED]),
    )
    means = means[means["model"].isin(chosen)]
    st.plotly_chart(
        paper_figures.graph_stats_figure(means, common.model_colours()), width="stretch"
    )
    common.download(means, "graph_stats_by_difficulty.csv", "Download Figure 3's means (CSV)")

st.subheader("By cohort")
st.caption("Cohorts overlap as in the paper: All, Incorrect, Correct (right answer), Perfect.")
long = common.derived(
    "cohort_long",
    lambda: tables.cohort_long(
        grouped[["model", *GRAPH_STATS, "final_correct", "class", "row"]]
    ).drop(columns=["final_correct", "class"]),
)
long = long[long["model"].isin(chosen)]
_outlier_chart(long, "cohort", "cohort")
summary = long.drop(columns="row").groupby(["model", "cohort"])[stat].describe().reset_index()
st.dataframe(common.visible(summary), hide_index=True, width="stretch")
common.download(summary, f"{stat}_by_cohort.csv", "Download the summary (CSV)")

st.subheader("Accuracy by closeness")
st.caption(
    "Share of trajectories with a correct answer in each closeness-rate bin (trajectories "
    "with a reference answer): does a more closed derivation go with a right answer?"
)
closeness = common.derived("closeness_accuracy", lambda: tables.closeness_accuracy(df))
closeness = closeness[closeness["model"].isin(chosen)]
if closeness.empty:
    st.info("No trajectory has a reference answer.")
else:
    st.plotly_chart(
        paper_figures.closeness_accuracy_figure(closeness, common.model_colours()),
        width="stretch",
    )
    common.download(closeness, "accuracy_by_closeness.csv", "Download (CSV)")

st.subheader("Correct → Perfect shift against the gap (the paper's Appendix F)")
st.caption(
    "For each model and dataset: mean of a statistic over Perfect trajectories minus its "
    "mean over Correct ones, against Δ = PASS@1 − R̂. Density in percentage points."
)
shift = common.derived("shift", lambda: tables.correct_to_perfect_shift(df))
shift = shift[shift["model"].isin(chosen)]
if shift.dropna(subset=list(GRAPH_STATS), how="all").empty:
    st.info("No model has both correct and perfect trajectories.")
else:
    st.plotly_chart(paper_figures.shift_figure(shift, common.model_colours()), width="stretch")
    common.download(shift, "correct_to_perfect_shift.csv", "Download (CSV)")
