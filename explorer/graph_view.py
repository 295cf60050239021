"""The trajectory view as a Streamlit element: graph and step list in one iframe, linked.

Not a page itself (``app.py`` lists the pages explicitly). Trajectory calls
:func:`trajectory_view` and :func:`typeset_steps`; Compare calls :func:`trajectory_view` with
``show_steps=False`` and one fixed ``scale`` so the graphs side by side share a scale.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from dagmath_viz.draw.render import (
    FORMULA_BUDGET,
    STEPS_PER_PAGE,
    render_trajectory_html,
    step_encodings,
    typeset_plan,
)
from dagmath_viz.draw.vis_view import render_vis_html
from dagmath_viz.schema import Trajectory
from dagmath_viz.text import escape_markdown, math_markdown, plain, strip_emphasis


def trajectory_view(
    traj: Trajectory,
    rec: Any,
    *,
    height: int = 780,
    scale: float | None = None,
    selected_step: Any = None,
    show_steps: bool = True,
    layout: str = "auto",
    fit_window: bool = False,
    link_steps: bool = False,
    find: str | None = None,
    engine: str = "svg",
    bar_field: str | None = None,
    color_by: str = "kind",
    label_by: str = "text",
) -> None:
    """Draw ``traj`` (scored as ``rec``: its ``dead_ends`` and ``final_correct``).

    Args:
        traj: the trajectory.
        rec: its scored record (a row of the scored table, or a dict).
        height: CSS px of the whole view.
        scale: a fixed initial zoom (1 = 100 %); automatic when None.
        selected_step: a step id selected, centred and scrolled to on arrival (``step=``).
        show_steps: the step list beside the graph.
        layout: "auto", "layered" or "reading".
        fit_window: the view takes the window's height below its top (Trajectory page).
        link_steps: selecting a step puts it in the address; a "Copy link" button.
        find: a search to mark in the steps, with find-next (the first hit is selected).
        engine: "svg" (our step graph) or "vis" (the layered graph through pyvis).
        bar_field, color_by, label_by: the step-field encodings (:func:`view_options`).
    """
    if engine == "vis":
        html = render_vis_html(
            traj, dead_ends=rec["dead_ends"], final_correct=rec["final_correct"],
            height_px=height, selected_step=selected_step, fit_window=fit_window,
            link_steps=link_steps, bar_field=bar_field, color_by=color_by,
        )  # fmt: skip
        st.iframe(html, height=height)
        return
    html = render_trajectory_html(
        traj,
        dead_ends=rec["dead_ends"],
        final_correct=rec["final_correct"],
        height_px=height,
        selected_step=selected_step,
        scale=scale,
        show_steps=show_steps,
        layout=layout,
        fit_window=fit_window,
        link_steps=link_steps,
        find=find,
        bar_field=bar_field,
        color_by=color_by,
        label_by=label_by,
    )
    st.iframe(html, height=height)


#: The two drawings the Trajectory page offers, by the name it shows.
ENGINES = {"Step graph": "svg", "Layers through pyvis (vis-network)": "vis"}
_NO_BAR = "(none)"


def view_options(traj: Trajectory, key: str) -> dict[str, Any]:
    """The Trajectory page's display choices, as keyword arguments of
    :func:`trajectory_view`: which drawing, a numeric step field as a bar in each box, the
    first tag as a colour stripe, the source's ``summary`` as the row text. Only what the
    trajectory's steps have is offered (Thought Anchors' chunks have all of it)."""
    offer = step_encodings(traj)
    # Another trajectory may lack the field chosen on the last one: drop a stale choice.
    for name, options in ((f"{key}_bar", (_NO_BAR, *offer.numeric)),
                          (f"{key}_label", ("text", "summary"))):  # fmt: skip
        if st.session_state.get(name, options[0]) not in options:
            del st.session_state[name]
    name = st.radio("Drawing", list(ENGINES), key=f"{key}_engine",
                    help="The step graph is ours (layers or reading order); the pyvis "
                    "drawing puts the same layers through vis-network, boxes fixed where "
                    "our layout puts them and edges through way-points.")  # fmt: skip
    out: dict[str, Any] = {"engine": ENGINES[name]}
    if offer.numeric:
        # importance is what people open Thought Anchors for: shown until another is picked
        bars = [_NO_BAR, *offer.numeric]
        if f"{key}_bar" not in st.session_state:
            st.session_state[f"{key}_bar"] = offer.default_bar or _NO_BAR
        bar = st.selectbox("Bar in each box", bars, key=f"{key}_bar",
                           help="A bar along each box's bottom: the step's |value| as a "
                           "share of the largest; purple when negative.")  # fmt: skip
        out["bar_field"] = None if bar == _NO_BAR else bar
    if offer.tags:
        colour = st.selectbox("Colour stripe", ["kind only", "tag"], key=f"{key}_colour",
                              help="A stripe at each box's left in its first tag's colour; "
                              "the fill still says the kind (dead ends orange).")  # fmt: skip
        out["color_by"] = "tag" if colour == "tag" else "kind"
    if offer.summary and out["engine"] == "svg":
        label = st.radio("Row text (reading order)", ["text", "summary"], key=f"{key}_label",
                         horizontal=True)  # fmt: skip
        out["label_by"] = label
    return out


def typeset_steps(traj: Trajectory, dead: set, wanted_step: str | None, key: str) -> None:
    """The steps with their LaTeX typeset, a page of :data:`STEPS_PER_PAGE` at a time and at
    most :data:`FORMULA_BUDGET` formulas a page (later steps show raw text, and the page says
    so). Off until asked for: typesetting is what is slow."""
    steps = traj.steps
    if not steps or not st.toggle("Typeset the steps' math", key=f"{key}_on"):
        return
    starts = list(range(0, len(steps), STEPS_PER_PAGE))
    labels = [f"steps {a + 1}–{min(a + STEPS_PER_PAGE, len(steps))}" for a in starts]
    page_key = f"{key}_page"
    if wanted_step is not None and page_key not in st.session_state:
        hit = next((i for i, s in enumerate(steps) if str(s.step_id) == wanted_step), 0)
        st.session_state[page_key] = labels[hit // STEPS_PER_PAGE]
    if st.session_state.get(page_key) not in labels:
        st.session_state[page_key] = labels[0]
    label = st.selectbox(f"{len(steps):,} steps: page", labels, key=page_key)
    start = starts[labels.index(label)]
    stop = min(start + STEPS_PER_PAGE, len(steps))
    plan = typeset_plan([s.text + "\n" + s.justification for s in steps], start, stop)
    if plan.over_budget:
        first_raw = start + plan.typeset.index(False)
        st.warning(
            f"Formula budget: this page holds more than {FORMULA_BUDGET} formulas, so steps "
            f"from S{escape_markdown(plain(str(steps[first_raw].step_id), 20))} on show as raw "
            "text (typesetting them all would freeze the page).",
            icon=":material/speed:",
        )
    for i, step in enumerate(steps[start:stop]):
        sid = escape_markdown(plain(str(step.step_id), 20))
        parents = ", ".join(f"S{p}" for p in step.parents) or "given"
        flag = " · :orange-background[**dead end**]" if step.step_id in dead else ""
        here = (
            " :material/arrow_back: :blue-background[linked step]"
            if wanted_step is not None and str(step.step_id) == wanted_step
            else ""
        )
        st.markdown(f"**S{sid}**{here} ← {escape_markdown(plain(parents, 200))}{flag}")
        if plan.typeset[i]:
            st.markdown(math_markdown(step.text))
            if step.justification:
                st.caption("why: " + math_markdown(step.justification))
        else:
            st.text(plain(strip_emphasis(step.text), 5000))
            if step.justification:
                st.text("why: " + plain(strip_emphasis(step.justification), 5000))
