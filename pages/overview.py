"""Overview: leaderboard, AUC curves, Table 1 and class counts for the loaded data."""

from __future__ import annotations

import streamlit as st

from dagmath_viz import figures, metrics, tables
from pages import common

corpus = common.corpus()
df = corpus.scored
st.title("Overview")
st.caption(
    "PASS@1 and R̂ (the perfect reasoning rate) are means over problems, each problem weighing "
    "the same; intervals are 95% percentile-bootstrap intervals over problems. "
    "Δ = PASS@1 − R̂. AUC is the area under A(τ)."
)
if df.empty:
    st.info("Nothing loaded yet.")
    st.stop()

board = common.derived("leaderboard", lambda: tables.leaderboard(df, n_boot=1000))
st.subheader("Leaderboard")
st.dataframe(tables.leaderboard_display(board), hide_index=True, width="stretch")
common.download(board, "leaderboard.csv", "Download the leaderboard (CSV, fractions)")

st.subheader("AUC curves")
curve = common.derived("auc_curve", lambda: metrics.auc_curve(df))
if curve.empty:
    st.info("No trajectory has a reference answer, so there is no AUC curve.")
else:
    st.plotly_chart(figures.auc_figure(curve), width="stretch")
    common.download(curve, "auc_curves.csv", "Download the AUC curves (CSV)")

st.subheader("Graph statistics by cohort (the paper's Table 1)")
t1 = common.derived("table1", lambda: tables.table1(df))
st.dataframe(tables.table1_display(t1), hide_index=True, width="stretch")
common.download(t1, "table1.csv", "Download Table 1 (CSV)")

st.subheader("Trajectories by class")
counts = common.derived("class_counts", lambda: tables.class_counts_table(df))
left, right = st.columns([3, 2])
with left:
    st.plotly_chart(figures.class_counts_figure(counts), width="stretch")
with right:
    st.dataframe(counts, hide_index=True, width="stretch")
    common.download(counts, "class_counts.csv", "Download the class counts (CSV)")
