"""Trajectory: one sampled chain of thought as a DAG, its steps, and its metrics."""

from __future__ import annotations

import streamlit as st

from dagmath_viz import tables
from dagmath_viz.corpus import natural_key
from dagmath_viz.render import render_dag_html
from dagmath_viz.schema import CLASSES
from dagmath_viz.text import escape_markdown, math_markdown, plain
from pages import common

corpus = common.corpus()
df = corpus.scored
st.title("Trajectory")
if df.empty:
    st.info("Nothing loaded yet.")
    st.stop()

top = st.columns([2, 2, 3])
with top[0]:
    model = common.select(
        "Model", sorted(df["model"].unique()), "traj_model", "model", where="in the loaded data"
    )
with top[1]:
    datasets = sorted(df.loc[df["model"] == model, "dataset"].unique())
    dataset = common.select(
        "Dataset", datasets, "traj_dataset", "dataset", where=f"for model {model}"
    )
with top[2]:
    present = [c for c in CLASSES if c in set(df["class"])]
    classes = st.multiselect("Show classes", present, default=present, key="traj_classes")

sub = df[(df["model"] == model) & (df["dataset"] == dataset) & df["class"].isin(classes)]
order = sorted(
    zip(sub["problem_id"], sub["sample_id"], strict=True), key=lambda k: (natural_key(k[0]), k[1])
)
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
row = corpus.row_of(model, dataset, problem, sample)
rec = df.iloc[row]
traj, unreadable = common.trajectory_of(corpus, row)
position = order.index((problem, sample)) + 1
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

dead = set(rec["dead_ends"])
wanted_step = st.query_params.get("step")
graph_col, steps_col = st.columns([3, 2])
with graph_col:
    height = 620
    html = render_dag_html(
        traj, dead_ends=rec["dead_ends"], final_correct=rec["final_correct"], height_px=height
    )
    st.iframe(html, height=height + 70)
STEPS_PER_PAGE = 200


def _step_window(steps: tuple, wanted: str | None) -> tuple[int, int]:
    """The slice of steps to list: all of them, or a page of STEPS_PER_PAGE for long ones."""
    if len(steps) <= STEPS_PER_PAGE:
        return 0, len(steps)
    starts = list(range(0, len(steps), STEPS_PER_PAGE))
    labels = [f"steps {a + 1}–{min(a + STEPS_PER_PAGE, len(steps))}" for a in starts]
    if wanted is not None and "traj_step_page" not in st.session_state:
        hit = next((i for i, s in enumerate(steps) if str(s.step_id) == wanted), 0)
        st.session_state["traj_step_page"] = labels[hit // STEPS_PER_PAGE]
    label = common.select(f"{len(steps):,} steps: list", labels, "traj_step_page")
    start = starts[labels.index(label)]
    return start, min(start + STEPS_PER_PAGE, len(steps))


with steps_col:
    with st.expander("Problem", expanded=False):
        st.markdown(math_markdown(traj.problem_text or "(no problem text)"))
    first, last = _step_window(traj.steps, wanted_step)
    with st.container(height=height, border=True):
        for step in traj.steps[first:last]:
            parents = ", ".join(f"S{p}" for p in step.parents) or "given"
            flag = " · :orange-background[**dead end**]" if step.step_id in dead else ""
            here = (
                " :material/arrow_back: :blue-background[linked step]"
                if wanted_step is not None and str(step.step_id) == wanted_step
                else ""
            )
            sid = escape_markdown(plain(str(step.step_id), 20))
            st.markdown(f"**S{sid}**{here} ← {escape_markdown(plain(parents, 200))}{flag}")
            st.markdown(math_markdown(step.text))
            if step.justification:
                with st.expander("why", expanded=False):
                    st.markdown(math_markdown(step.justification))
