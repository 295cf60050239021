"""Trajectory: one sampled chain of thought as a DAG, its steps, and its metrics."""

from __future__ import annotations

import streamlit as st

from dagmath_viz.analysis import tables
from dagmath_viz.analysis.align import GOLD_MODEL
from dagmath_viz.analysis.trajectory_table import trajectory_index
from dagmath_viz.schema import CLASSES
from dagmath_viz.text import escape_markdown, math_markdown, plain
from explorer import common, graph_view, share

corpus = common.corpus()
df = corpus.scored
st.title("Trajectory")
if df.empty:
    st.info("Nothing loaded yet.")
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

top = st.columns([2, 2, 3])
with top[0]:
    model = common.select("Model", index.models, "traj_model", "model", where="in the loaded data")
with top[1]:
    dataset = common.select(
        "Dataset", index.datasets[model], "traj_dataset", "dataset", where=f"for model {model}"
    )
with top[2]:
    present = [c for c in CLASSES if c in index.classes]
    classes = st.multiselect("Show classes", present, default=present, key="traj_classes")

order, order_rows = index.order(model, dataset, classes)
if not order:
    st.info("No trajectory of these classes for this model and dataset.")
    st.stop()


def _move(delta: int) -> None:
    current = (st.session_state.get("traj_problem"), st.session_state.get("traj_sample"))
    i = order.index(current) if current in order else 0
    problem, sample = order[(i + delta) % len(order)]
    common.set_choice("traj_problem", problem)
    common.set_choice("traj_sample", sample)


pick = st.columns([3, 2, 1, 1])
with pick[0]:
    problems = list(dict.fromkeys(p for p, _ in order))
    problem = common.select(
        "Problem", problems, "traj_problem", "problem",
        where=f"for {model} on {dataset} among the classes shown",
    )  # fmt: skip
with pick[1]:
    samples = [s for p, s in order if p == problem]
    sample = common.select(
        "Sample", samples, "traj_sample", "sample", where=f"for problem {problem} of {model}"
    )
with pick[2]:
    st.button("◀ Previous", on_click=_move, args=(-1,), width="stretch")
with pick[3]:
    st.button("Next ▶", on_click=_move, args=(1,), width="stretch")

st.query_params.update(model=model, dataset=dataset, problem=str(problem), sample=str(sample))
position = order.index((problem, sample)) + 1
row = order_rows[position - 1]
rec = df.iloc[row]
traj, unreadable = common.trajectory_of(corpus, row)
st.caption(
    f"Trajectory {position:,} of {len(order):,} shown · source: "
    + escape_markdown(plain(rec["source"] or "", 200))
)

BADGE = {
    "perfect": "green",
    "imperfect": "orange",
    "incorrect": "red",
    "illegal": "violet",
    "unscored": "gray",
}
st.badge(rec["class"], color=BADGE.get(rec["class"], "gray"))
cells = st.columns(5)
cells[0].metric(
    "Final answer", {True: "correct", False: "wrong"}.get(rec["final_correct"], "unscored")
)
cells[1].metric("Closeness rate", tables.format_percent(rec["closeness_rate"]))
cells[2].metric("Dead ends", len(rec["dead_ends"]))
cells[3].metric("Steps / edges", f"{rec['n_nodes']} / {rec['n_edges']}")
cells[4].metric("Density", tables.format_percent(rec["density"]))
answer_cols = st.columns(2)
answer_cols[0].text(f"Predicted answer: {plain(str(rec['predicted_answer'] or '—'), 300)}")
answer_cols[1].text(f"Reference answer: {plain(str(rec['reference_answer'] or '—'), 300)}")
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
wanted_step = st.query_params.get("step")
if wanted_step is not None and all(str(s.step_id) != wanted_step for s in traj.steps):
    st.warning(f"Step {escape_markdown(plain(wanted_step, 40))} is not in this trajectory.")
    wanted_step = None
with st.expander("Problem", expanded=False):
    st.markdown(math_markdown(traj.problem_text or "(no problem text)"))
graph_view.trajectory_view(traj, rec, selected_step=wanted_step)
graph_view.typeset_steps(traj, dead, wanted_step, key="traj_typeset")
share.trajectory_tools(traj, rec)  # Download as HTML; labels (explorer/share.py)
