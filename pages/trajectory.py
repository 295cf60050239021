"""Trajectory: one sampled chain of thought as a DAG, its steps, and its metrics."""

from __future__ import annotations

import streamlit as st

from dagmath_viz.analysis import tables
from dagmath_viz.analysis.align import GOLD_MODEL
from dagmath_viz.analysis.label_density import label_density
from dagmath_viz.analysis.step_fields import has_step_fields, step_fields_table
from dagmath_viz.analysis.trajectory_table import trajectory_index
from dagmath_viz.schema import CLASSES
from dagmath_viz.text import answer_markdown, counted, escape_markdown, math_markdown, plain
from explorer import common, graph_view, share

#: Longer model names are also written in full under the choices: at 1280x800, sidebar open,
#: the Model box shows 40 characters (deepseek-ai/DeepSeek-R1-Distill-Qwen-14B whole).
MODEL_BOX_CHARS = 40

corpus = common.corpus()
df = corpus.scored
if df.empty:
    st.title("Trajectory")
    common.nothing_loaded(corpus)
    st.stop()

# Built once per data source: the selectors' lists, the walking order and the landing.
index = common.derived("trajectory_index", lambda: trajectory_index(df))
if "traj_model" not in st.session_state and "model" not in st.query_params:
    # Land on a readable trajectory (short, imperfect, with a dead end), not the largest.
    if index.landing is not None:
        land_model, land_dataset, land_problem, land_sample = index.landing
        st.session_state.update(
            traj_model=land_model,
            traj_dataset=land_dataset,
            traj_problem=land_problem,
            traj_sample=land_sample,
        )

# The title with the trajectory's facts, one row of choices, the answers: so that at
# 1280x800 the graph and the step list are on screen on arrival (issue 34 item 5); the
# metrics follow the view.
title, facts, choose_classes, choose_view = st.columns(
    [3, 4.5, 1.2, 1.1], vertical_alignment="center"
)
title.title("Trajectory")
# Model gets the most room (MODEL_BOX_CHARS); a longer name is also written under the row.
pick = st.columns([4.4, 2.25, 1.45, 1.15, 1.05, 1.05], gap="xsmall", vertical_alignment="bottom")
with pick[0]:
    model = common.select("Model", index.models, "traj_model", "model", where="in the loaded data")
with pick[1]:
    dataset = common.select(
        "Dataset", index.datasets[model], "traj_dataset", "dataset", where=f"for model {model}"
    )
present = [c for c in CLASSES if c in index.classes]
with choose_classes.popover("Classes", width="stretch"):
    classes = st.multiselect("Show classes", present, default=present, key="traj_classes")

order, order_rows = index.order(model, dataset, classes)
if not order:
    st.info("No trajectory of these classes for this model and dataset.")
    st.stop()


def _move(delta: int) -> None:
    current = (st.session_state.get("traj_problem"), st.session_state.get("traj_sample"))
    i = order.index(current) if current in order else 0
    j = min(max(i + delta, 0), len(order) - 1)  # the ends stop: no silent wrap-around
    problem, sample = order[j]
    common.set_choice("traj_problem", problem)
    common.set_choice("traj_sample", sample)


with pick[2]:
    problems = list(dict.fromkeys(p for p, _ in order))
    problem = common.select(
        "Problem", problems, "traj_problem", "problem",
        where=f"for {model} on {dataset} among the classes shown",
    )  # fmt: skip
with pick[3]:
    samples = [s for p, s in order if p == problem]
    sample = common.select(
        "Sample", samples, "traj_sample", "sample", where=f"for problem {problem} of {model}"
    )
position = order.index((problem, sample)) + 1
with pick[4]:
    st.button(
        "◀ Prev", on_click=_move, args=(-1,), width="stretch", disabled=position == 1,
        key="traj_prev",  # the view's p key presses it (draw/assets/trajectory_view.js)
        help="The previous trajectory (this is the first)" if position == 1 else None,
    )  # fmt: skip
with pick[5]:
    st.button(
        "Next ▶", on_click=_move, args=(1,), width="stretch", disabled=position == len(order),
        key="traj_next",  # the view's n key
        help="The next trajectory (this is the last)" if position == len(order) else None,
    )  # fmt: skip

if len(common.shown_option(model)) > MODEL_BOX_CHARS:
    st.caption(f"Model: {escape_markdown(common.shown_option(model))}")
st.query_params.update(model=model, dataset=dataset, problem=str(problem), sample=str(sample))
# step= (written by the view as steps are selected) and find= belong to the trajectory they
# were set on: moving to another one here drops them; arriving by a link keeps them.
here = (model, dataset, str(problem), str(sample))
if st.session_state.get("traj_at") not in (None, here):
    for param in ("step", "find"):
        st.query_params.pop(param, None)
st.session_state["traj_at"] = here
row = order_rows[position - 1]
rec = df.iloc[row]
traj, unreadable = common.trajectory_of(corpus, row)

BADGE = {
    "perfect": "green",
    "imperfect": "orange",
    "incorrect": "red",
    "illegal": "violet",
    "unscored": "gray",
}
verdict = {True: "correct", False: "wrong"}.get(rec["final_correct"], "unscored")
n_dead = len(rec["dead_ends"])
facts.markdown(
    f":{BADGE.get(rec['class'], 'gray')}-badge[{escape_markdown(str(rec['class']))}] "
    f"**{verdict}** · closeness {tables.format_percent(rec['closeness_rate'])} · "
    f"{counted(n_dead, 'dead end')} · {rec['n_nodes']} steps / {rec['n_edges']} edges · "
    f"{position:,} of {len(order):,} shown  \n"
    f"Predicted answer: {answer_markdown(rec['predicted_answer'])} · "
    f"Reference answer: {answer_markdown(rec['reference_answer'])}"
)
for error in rec["errors"] or ():
    st.error(escape_markdown(plain(error, 500)), icon=":material/error:")

if traj is None:
    st.warning(
        escape_markdown(f"The steps of this scored record cannot be shown: {unreadable}."),
        icon=":material/draft:",
    )
    st.stop()

gold = None if model == GOLD_MODEL else common.gold_trajectory_of(corpus, dataset, problem)
if gold is not None and gold.steps:
    st.caption(
        escape_markdown(
            f"Gold DAG of this problem loaded: this trajectory {common.gold_summary(traj, gold)}."
        )
        + " A step states a gold node when their statements are equal or their values and "
        "words match (README, Definitions)."
    )
dead = set(rec["dead_ends"])
labels = label_density(traj)
if labels.sparse and n_dead:
    st.warning(
        f"Sparse dependency labels: {labels.edges} edges for {labels.steps} steps "
        f"({labels.edges_per_step:.2f} a step), {labels.unlinked} steps after the opening "
        "attached to nothing. Most of this trajectory's dead ends may be steps the labeller "
        "did not connect, not reasoning that went unused.",
        icon=":material/warning:",
    )
wanted_step = st.query_params.get("step")
if wanted_step is not None and all(str(s.step_id) != wanted_step for s in traj.steps):
    st.warning(f"Step {escape_markdown(plain(wanted_step, 40))} is not in this trajectory.")
    wanted_step = None
find = st.query_params.get("find")
with choose_view.popover("View", width="stretch"):
    shown = graph_view.view_options(traj, key="traj_view")
graph_view.trajectory_view(
    traj, rec, selected_step=wanted_step, fit_window=True, link_steps=True, find=find, **shown
)
cells = st.columns(5)
cells[0].metric("Final answer", verdict)
cells[1].metric("Closeness rate", tables.format_percent(rec["closeness_rate"]))
cells[2].metric("Dead ends", n_dead)
cells[3].metric("Steps / edges", f"{rec['n_nodes']} / {rec['n_edges']}")
cells[4].metric("Density", tables.format_percent(rec["density"]))
st.caption(
    f"Trajectory {position:,} of {len(order):,} shown · keys: j/k steps, n/p trajectories, "
    "a path to the answer, c copy link, ? all keys · source: "
    + escape_markdown(plain(rec["source"] or "", 200))
)
with st.expander("Problem", expanded=False):
    st.markdown(math_markdown(traj.problem_text or "(no problem text)"))
graph_view.typeset_steps(traj, dead, wanted_step, key="traj_typeset")
if has_step_fields(traj):
    with st.expander("Step fields", expanded=False):
        step_fields = step_fields_table(traj, dead)
        st.caption(
            "The source's own values for each step (importance scores, accuracy, summary, "
            "tags, …), one column each: click a column's header to sort by it."
        )
        st.dataframe(
            step_fields,
            hide_index=True,
            width="stretch",
            column_config={"text": st.column_config.TextColumn(width="medium")},
            placeholder=tables.MISSING,  # a step without the field
        )
        common.download(
            step_fields,
            f"step-fields-{share.slug(rec['problem_id'])}-{int(rec['sample_id'])}.csv",
            "Download the step fields (CSV)",
        )
share.trajectory_tools(traj, rec)  # Download as HTML; labels (explorer/share.py)
