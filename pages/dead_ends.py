"""Dead ends: every unclosed step of the loaded data, categorised, with links to it."""

from __future__ import annotations

from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from dagmath_viz.analysis.deadends import (
    CATEGORIES,
    MAX_STEPS,
    UNKNOWN,
    dead_end_category_counts,
    dead_end_table,
    scored_dead_end_table,
    sorted_naturally,
)
from dagmath_viz.analysis.label_density import (
    MAX_UNLINKED_SHARE,
    MIN_EDGES_PER_STEP,
    label_density_table,
)
from dagmath_viz.analysis.step_tags import UNTAGGED
from dagmath_viz.draw import figures
from dagmath_viz.formats.sources import AUTO_SOURCE_FILES, missing_sources
from dagmath_viz.run.streamed import dead_ends_read_back, tag_counts_read_back
from dagmath_viz.text import counted, escape_markdown, math_plain, plain
from explorer import common, share

corpus = common.corpus()
df = corpus.scored
st.title("Dead ends")
st.caption(
    "A dead end is a step other than the final one that no later step cites. Categories: "
    "**unused given** (a given nothing cites: a step with no parents, or, where the source "
    "tags steps, one tagged problem_setup), **unlinked** (no parents, but no given: the "
    "labels attach it to nothing), **restatement** (repeats an earlier "
    "step, or exactly the numbers of the steps it cites), **abandoned branch** (ends a side "
    "chain of two or more steps off the path to the answer), **commentary** (any other "
    f"derived leaf). Trajectories of more than {MAX_STEPS:,} steps are left out."
)
table = common.derived("dead_ends", lambda: dead_end_table(corpus.trajectories))
if table.attrs.get("too_long"):
    st.info(
        f"{table.attrs['too_long']:,} trajectories have more than {MAX_STEPS:,} steps: left out."
    )

# Rows read from scored JSONL carry their dead ends but no steps: list them from the
# records, and categorise them from their source files when those can be read.
scored_rows = [i for i, t in enumerate(corpus.trajectories) if t is None]
by_tag_read_back = None  # both tables from one read of the sources, when they are read
if scored_rows:
    # the columns needed, not a copy of the whole frame (~50 MB at 100,000 records)
    records = df[["model", "dataset", "problem_id", "sample_id", "dead_ends", "source"]]
    if len(scored_rows) < len(df):
        records = records.iloc[scored_rows]
    with_dead = records[records["dead_ends"].map(lambda d: bool(d))]
    reader = common.source_reader(st.session_state.get("source_id", ""), common.source_roots())
    n_files = with_dead["source"].map(lambda s: str(s).rsplit(":", 1)[0]).nunique()
    files_text = f"{n_files:,} source file" + ("" if n_files == 1 else "s")
    wanted = n_files <= AUTO_SOURCE_FILES or st.session_state.get("de_read_sources")
    if wanted:
        # one file at a time (the reader keeps a few), with a bar: a raw folder of 100,000
        # trajectories opened streamed has thousands of files to read back
        with st.spinner(f"Reading {files_text} to categorise dead ends …"):
            from_records, *by_tag_read_back = common.derived_with_progress(
                "dead_ends_read_back",
                lambda show: dead_ends_read_back(records, reader, corpus.trajectories, show),
                "Reading steps back to categorise dead ends",
            )
    else:
        from_records = common.derived(
            "dead_ends_scored_unread", lambda: scored_dead_end_table(df, None, rows=scored_rows)
        )
    table = pd.concat([table, from_records], ignore_index=True)
    unknown = int((from_records["category"] == UNKNOWN).sum())
    if unknown:
        missing = common.derived("missing_sources", lambda: missing_sources(with_dead, reader))
        note = (
            f"{unknown:,} dead ends come from scored records whose steps were not read, so "
            f"their category is **{UNKNOWN}**."
        )
        if missing:
            shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
            note += f" Source files not found ({len(missing):,}): " + escape_markdown(shown)
        st.info(note, icon=":material/help:")
        if not wanted:
            # a callback, not the button's return value: it runs before the next script
            # run, so the choice survives a rerun that run may start (Streamlit's first
            # visit to a page reruns it through app.py; see common.corpus)
            st.button(
                f"Read {files_text} to categorise them",
                on_click=st.session_state.__setitem__,
                args=("de_read_sources", True),
            )

if table.empty:
    st.success("No dead ends: every loaded trajectory is logically closed.")
    st.stop()

counts = dead_end_category_counts(table)
density = common.derived("label_density", lambda: label_density_table(corpus.trajectories))
sparse = density[density["sparse"]]
if len(sparse):
    # Where a model labelled the dependencies, a step it attached to nothing is a dead end
    # whatever the reasoning did: say how much of the count comes from such chains.
    sparse_share = sparse["dead_ends"].sum() / max(int(density["dead_ends"].sum()), 1)
    names = ", ".join(
        f"{plain(str(r.model), 40)} problem {plain(str(r.problem_id), 20)} "
        f"sample {r.sample_id} ({r.edges} edges for {r.steps} steps)"
        for r in sparse.head(5).itertuples()
    )
    st.warning(
        escape_markdown(
            f"{counted(len(sparse), 'trajectory', 'trajectories')} with sparse dependency "
            f"labels (fewer than {MIN_EDGES_PER_STEP} edges per step, or more than "
            f"{MAX_UNLINKED_SHARE:.0%} of steps attached to nothing) supply {sparse_share:.0%} of "
            f"the dead ends counted from loaded steps: {names}"
            + (" …" if len(sparse) > 5 else "")
            + ". Their dead ends say more about the labelling than about the reasoning."
        ),
        icon=":material/warning:",
    )
charts = st.columns(2)
charts[0].plotly_chart(figures.dead_end_counts_figure(counts), width="stretch")
if len(density):
    charts[1].plotly_chart(figures.label_density_figure(density), width="stretch")
    charts[1].caption(
        "Label density per trajectory: edges per step (x; the dashed line is "
        f"{MIN_EDGES_PER_STEP}) and dead ends (y); an x marks sparse labels."
    )
st.dataframe(common.visible(counts), hide_index=True, width="stretch")
with st.expander("Label density per trajectory", expanded=bool(len(sparse))):
    st.dataframe(
        density.sort_values(["sparse", "edges_per_step"], ascending=[False, True]),
        hide_index=True, width="stretch",
        column_config={
            "edges_per_step": st.column_config.NumberColumn("edges per step", format="%.2f"),
            "unlinked_share": st.column_config.NumberColumn("unlinked", format="percent"),
        },
    )  # fmt: skip

# Which kinds of step end up unused: by the tags the source gives steps (Thought Anchors'
# function_tags). Counted from the trajectories whose steps are loaded, and those of scored
# records read back one at a time when their sources are read anyway (never all kept).
if by_tag_read_back is not None:
    by_tag, n_counted = by_tag_read_back
else:
    by_tag, n_counted = common.derived_with_progress(
        "dead_end_tags",
        lambda show: tag_counts_read_back(corpus.trajectories, progress=show),
        "Counting dead ends by step tag",
    )
tagged = bool((by_tag["tag"] != UNTAGGED).any()) if len(by_tag) else False
with st.expander("Dead ends by step tag", expanded=tagged):
    if not tagged:
        st.caption(
            "The loaded steps carry no tags (Thought Anchors' `function_tags` are one "
            "source of them)"
            + (
                ", and the scored records' sources were not read."
                if scored_rows and by_tag_read_back is None
                else "."
            )
        )
    else:
        st.caption(
            "Steps carrying each tag, and how many of them are dead ends. A step with "
            "several tags counts under each."
            + (
                f" Counted over the {n_counted:,} trajectories whose steps could be read."
                if scored_rows
                else ""
            )
        )
        st.plotly_chart(
            figures.dead_end_tags_figure(by_tag, common.model_colours()), width="stretch"
        )
        st.dataframe(
            common.visible(by_tag), hide_index=True, width="stretch",
            column_config={"dead_end_share": st.column_config.NumberColumn(
                "dead-end share", format="percent")},
        )  # fmt: skip
        common.download(by_tag, "dead_ends_by_tag.csv", "Download dead ends by tag (CSV)")

# Model the page's width: inside columns a multiselect scrolls its chips on one line, and
# a long name (deepseek-ai/DeepSeek-R1-Distill-Qwen-14B) was cut; here each reads whole.
models = st.multiselect(
    "Model", sorted(table["model"].unique()), key="de_models", format_func=common.shown_option
)
filters = st.columns(2)
present = list(CATEGORIES) + ([UNKNOWN] if (table["category"] == UNKNOWN).any() else [])
cats = filters[0].multiselect("Category", present, key="de_cats")
query = filters[1].text_input("Text contains", key="de_text")
shown = table
if models:
    shown = shown[shown["model"].isin(models)]
if cats:
    shown = shown[shown["category"].isin(cats)]
if query:
    shown = shown[shown["text"].str.contains(query, case=False, regex=False)]
shown = share.label_filter(
    shown, "de_labels", ("model", "dataset", "problem_id", "sample_id"), "step_id"
)

shown = sorted_naturally(shown)  # problem 9 before problem 10
page = shown.head(common.MAX_TABLE_ROWS).copy()
page["text"] = page["text"].map(lambda t: math_plain(t, 200))  # formulas read as text
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
page = page[["model", "dataset", "problem_id", "sample_id", "step_id", "category", "text", "open"]]
st.caption("Click a row to open its trajectory at that step (or “view ↗” for a new tab).")
grid = f"de_grid{st.session_state.get('de_grid_n', 0)}"
event = st.dataframe(
    common.visible(page), hide_index=True, width="stretch", on_select="rerun",
    selection_mode="single-row",
    key=grid,
    column_config={"open": st.column_config.LinkColumn("open", display_text="view ↗")},
)  # fmt: skip
st.caption(
    f"{len(shown):,} dead ends match"
    + (f"; showing the first {common.MAX_TABLE_ROWS:,}" if len(shown) > len(page) else "")
)
common.download(shown, "dead_ends.csv", "Download these dead ends (CSV)")
chosen = event.selection.rows if event is not None else []
if chosen:
    rec = page.iloc[chosen[0]]
    st.session_state["de_grid_n"] = st.session_state.get("de_grid_n", 0) + 1
    common.open_trajectory(
        rec["model"], rec["dataset"], rec["problem_id"], int(rec["sample_id"]), rec["step_id"]
    )
