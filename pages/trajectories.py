"""Trajectories: every loaded trajectory in one table to sort, filter and search; a row
opens it in the Trajectory view."""

from __future__ import annotations

import streamlit as st

from dagmath_viz.analysis import tables
from dagmath_viz.analysis.trajectory_table import (
    CORRECTNESS,
    SORTABLE,
    TableFilter,
    filter_table,
    search_text,
    sort_table,
    trajectory_table,
)
from dagmath_viz.schema import CLASSES
from explorer import common, share, url_state

corpus = common.corpus()
df = corpus.scored
st.title("Trajectories")
if df.empty:
    common.nothing_loaded(corpus)
    st.stop()

table = common.derived("trajectory_table", lambda: trajectory_table(df))
text, searched = common.derived("trajectory_search", lambda: search_text(corpus.trajectories, df))

lo, hi = int(table["steps"].min()), int(table["steps"].max())
present = [c for c in CLASSES if c in set(table["class"])]
all_models, all_datasets = sorted(table["model"].unique()), sorted(table["dataset"].unique())
# Search, filters and sort live in the address (Back and links restore them) and in the
# page's memory (a return through the sidebar does).
FIELDS = (
    url_state.Field("tt_models", "m", [], tuple(all_models)),
    url_state.Field("tt_datasets", "d", [], tuple(all_datasets)),
    url_state.Field("tt_classes", "cls", [], tuple(present)),
    url_state.Field("tt_correct", "ans", [], tuple(CORRECTNESS)),
    url_state.Field("tt_query", "q", ""),
    url_state.Field("tt_problems", "p", ""),
    url_state.Field("tt_min_steps", "min", lo, (lo, hi)),
    url_state.Field("tt_max_steps", "max", hi, (lo, hi)),
    url_state.Field("tt_sort", "sort", "steps", tuple(SORTABLE)),
    url_state.Field("tt_desc", "desc", True),
)
url_state.restore(FIELDS, "tt_state", scope=st.session_state.get("source_id"))

# Model on a row of its own, the page's width: inside columns Streamlit keeps a multiselect
# on one line and scrolls its chips, so a long name (a Hugging Face id such as
# deepseek-ai/DeepSeek-R1-Distill-Qwen-14B) was cut; here chips wrap and each reads whole.
models = st.multiselect("Model", all_models, key="tt_models", format_func=common.shown_option)
row2 = st.columns([2.6, 2.2, 2.2, 2])
datasets = row2[0].multiselect(
    "Dataset", all_datasets, key="tt_datasets", format_func=common.shown_option
)
classes = row2[1].multiselect("Class", present, key="tt_classes")
correct = row2[2].multiselect("Final answer", list(CORRECTNESS), key="tt_correct")
problems_text = row2[3].text_input("Problems", key="tt_problems", placeholder="e.g. 3, 17")
row3 = st.columns([4, 1, 1, 2, 2], vertical_alignment="bottom")
query = row3[0].text_input("Search", key="tt_query", placeholder="text in steps and thinking")
min_steps = row3[1].number_input("Min steps", lo, hi, key="tt_min_steps")
max_steps = row3[2].number_input("Max steps", lo, hi, key="tt_max_steps")
by = row3[3].selectbox("Sort by", SORTABLE, key="tt_sort")
with row3[4]:
    descending = st.toggle("Descending", key="tt_desc")
url_state.remember(FIELDS, "tt_state")
st.caption(searched)

problems = tuple(p.strip() for p in problems_text.split(",") if p.strip())
flt = TableFilter(
    models=tuple(models),
    datasets=tuple(datasets),
    classes=tuple(classes),
    correct=tuple(correct),
    problems=problems,
    min_steps=int(min_steps) if min_steps > lo else None,
    max_steps=int(max_steps) if max_steps < hi else None,
    query=query,
)
shown = sort_table(filter_table(table, flt, text), by, descending=descending)
shown = share.label_filter(shown, "tt_labels")  # a labels column, and a filter by label
st.caption(
    f"{len(shown):,} of {len(table):,} trajectories · click a row to open it in the "
    "Trajectory view · click a column header to sort by it"
)
grid = f"tt_grid{st.session_state.get('tt_grid_n', 0)}"
event = st.dataframe(
    common.visible(shown.assign(closeness=100.0 * shown["closeness"])),  # percent, one decimal
    hide_index=True,
    width="stretch",
    height=min(560, 38 + 35 * max(len(shown), 1)),
    on_select="rerun",
    selection_mode="single-row",
    key=grid,
    placeholder=tables.MISSING,  # e.g. no difficulty in the records: "–", as on the Overview
    column_config={
        "closeness": st.column_config.NumberColumn("closeness (%)", format="%.1f"),
        "difficulty": st.column_config.NumberColumn("difficulty", format="%.1f"),
        "sample": st.column_config.NumberColumn("sample", format="%d"),
    },
)
chosen = event.selection.rows if event is not None else []
if chosen:
    rec = shown.iloc[chosen[0]]
    # a fresh grid next time: coming back here must not re-open this row at once
    st.session_state["tt_grid_n"] = st.session_state.get("tt_grid_n", 0) + 1
    # opened from a search: at its first matching step, with find-next
    common.open_trajectory(
        rec["model"], rec["dataset"], rec["problem"], int(rec["sample"]), find=query or None
    )
common.download(shown, "trajectories.csv", "Download these rows (CSV, closeness a fraction)")
