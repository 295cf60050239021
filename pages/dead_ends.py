"""Dead ends: every unclosed step of the loaded data, categorised, with links to it."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from dagmath_viz import figures
from dagmath_viz.deadends import CATEGORIES, MAX_STEPS, dead_end_counts, dead_end_table
from dagmath_viz.text import plain
from pages import common

corpus = common.corpus()
st.title("Dead ends")
st.caption(
    "A dead end is a step other than the final one that no later step cites. Categories: "
    "**unused given** (a source step nothing cites), **restatement** (repeats an earlier "
    "step, or exactly the numbers of the steps it cites), **abandoned branch** (ends a side "
    "chain of two or more steps off the path to the answer), **commentary** (any other "
    f"derived leaf). Trajectories of more than {MAX_STEPS:,} steps are left out."
)
table = common.derived("dead_ends", lambda: dead_end_table(corpus.trajectories))
if table.attrs.get("too_long"):
    st.info(
        f"{table.attrs['too_long']:,} trajectories have more than {MAX_STEPS:,} steps: left out."
    )
if table.empty:
    st.success("No dead ends: every loaded trajectory is logically closed.")
    st.stop()

counts = dead_end_counts(table)
st.plotly_chart(figures.dead_end_counts_figure(counts), width="stretch")
st.dataframe(counts, hide_index=True, width="stretch")

filters = st.columns(3)
models = filters[0].multiselect("Model", sorted(table["model"].unique()), key="de_models")
cats = filters[1].multiselect("Category", list(CATEGORIES), key="de_cats")
query = filters[2].text_input("Text contains", key="de_text")
shown = table
if models:
    shown = shown[shown["model"].isin(models)]
if cats:
    shown = shown[shown["category"].isin(cats)]
if query:
    shown = shown[shown["text"].str.contains(query, case=False, regex=False)]

page = shown.head(common.MAX_TABLE_ROWS).copy()
page["text"] = page["text"].map(lambda t: plain(t, 200))
page["open"] = [
    "trajectory?" + urlencode({"model": m, "dataset": d, "problem": p, "sample": s, "step": st_})
    for m, d, p, s, st_ in zip(
        page["model"],
        page["dataset"],
        page["problem_id"],
        page["sample_id"],
        page["step_id"],
        strict=True,
    )
]
st.dataframe(
    page, hide_index=True, width="stretch",
    column_config={"open": st.column_config.LinkColumn("open", display_text="view ↗")},
)  # fmt: skip
st.caption(
    f"{len(shown):,} dead ends match"
    + (f"; showing the first {common.MAX_TABLE_ROWS:,}" if len(shown) > len(page) else "")
)
common.download(shown, "dead_ends.csv", "Download these dead ends (CSV)")
