"""Safe, offline HTML of one trajectory: its step graph and, beside it, its steps.

The graph is drawn by our own small script (``assets/trajectory_view.js``) from positions and
edge routes computed in :mod:`dagmath_viz.draw.layout`, so what is drawn is what the geometry tests
check: every edge is a declared parent, and no edge passes through a box it does not join.
Short trajectories are drawn as top-down layers (the paper's figures); long ones, as real
chains of thought are, in reading order with parents as arcs (see :func:`choose_layout`).

Safety rules the output keeps, because Streamlit embeds it in an iframe with
``allow-scripts allow-same-origin``:

- model text only travels as JSON data in a ``<script type="application/json">`` block, with
  ``<``, ``>``, ``&`` and ``/`` written as JSON escapes (so no ``</script>`` and no ``http://``
  can appear), and the script puts it on the page with ``textContent`` only;
- node ids are integers, labels are ``S<id>`` cut short; nothing uses ``innerHTML``;
- no ``http(s)://`` URL is left anywhere in the HTML (the SVG namespace is written ``:\\/\\/``).

Every node of the data carries ``kind`` (see :data:`KINDS`), ``dead_end``, ``fault`` and
``position``; the view's root element says how many nodes it drew (``data-nodes``).

Logic-program proofs (:func:`render_proof_html`) are still drawn by vis-network through pyvis,
and so is the trajectory's optional pyvis drawing (:mod:`dagmath_viz.draw.vis_view`), which
shares this module's data, legend and post-processing of pyvis's page.
"""

from __future__ import annotations

import html
import importlib.util
import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from dagmath_viz.analysis.trajectory_table import matching_steps
from dagmath_viz.draw import layout as geo
from dagmath_viz.schema import Fault, Step, Trajectory
from dagmath_viz.score.graph import StepGraph, dead_end_positions, depths
from dagmath_viz.score.validation import is_step_id, validate
from dagmath_viz.text import count_formulas, math_plain, reveal_bidi, rich_segments, short_repr

__all__ = [
    "KINDS",
    "LARGE_GRAPH",
    "LAYERED_MAX",
    "LEGEND",
    "PROOF_KINDS",
    "PROOF_LEGEND",
    "MAX_STEP_FORMULAS",
    "LegendEntry",
    "StepEncodings",
    "TAG_COLORS",
    "break_href",
    "choose_layout",
    "encoding_legend",
    "encoding_view",
    "offline_pyvis_page",
    "step_encodings",
    "graph_data",
    "swatch_style",
    "katex_script",
    "legend_html",
    "render_dag_html",
    "render_proof_html",
    "render_trajectory_html",
    "script_json",
    "trajectory_layouts",
    "typeset_plan",
]

#: Node kinds, the ``kind`` field of every node in the view's data.
KINDS = ("given", "step", "dead_end", "final_correct", "final_incorrect", "final", "missing")
#: Above this many steps the legend says the graph is large (it is still drawn).
LARGE_GRAPH = 1500
#: Longest hover text piece (node text, justification) before it is cut.
MAX_TEXT = 600
#: Longest step text put in the step list (longer text is cut, and says so).
MAX_STEP_TEXT = 20_000
#: Trajectories of at most this many nodes also get the layered layout (it is the default
#: when it fits the frame, see :func:`choose_layout`); longer ones are drawn in reading order.
LAYERED_MAX = 60
#: Widest layered drawing (layout px) still chosen by default: at most this wide, its labels
#: stay readable when the frame fits it.
LAYERED_MAX_WIDTH = 1000.0
#: Most layers still drawn layered by default: deeper, mostly sequential chains read better
#: in reading order (a 22-step real solution 20 layers deep would need scrolling either way).
LAYERED_MAX_LAYERS = 12

#: Least and most height (CSS px) a ``fit_window`` view takes: below the least, a graph
#: pane would show too few rows to read, so the page scrolls once to the view instead.
MIN_FIT_HEIGHT = 440
MAX_FIT_HEIGHT = 1600

_FAULT_BORDER = "#d62728"
_FAULT_BORDER_WIDTH = 4
_ASSETS = Path(__file__).parent / "assets"


@dataclass(frozen=True, slots=True)
class LegendEntry:
    """One legend row: what it means, its fill colour and how its border or line looks."""

    label: str
    color: str
    border: str
    kind: str


# kind -> (fill, border colour, border width). Every final step has a fill of its own and a
# dark border: green or red when scored, a darker grey than a step's when not (it must not
# read as an ordinary step, in the view, its overview strip, the legend or a picture).
_STYLE: dict[str, tuple[str, str, int]] = {
    "given": ("#a6cee3", "#1f78b4", 1),
    "step": ("#e0e0e0", "#8c8c8c", 1),
    "dead_end": ("#f28e2b", "#a65300", 1),
    "final_correct": ("#59a14f", "#2d6a27", 2),
    "final_incorrect": ("#e15759", "#8c1c1e", 2),
    "final": ("#9e9e9e", "#3a3a3a", 2),
    "missing": ("#ffffff", "#7f7f7f", 1),
    # logic-program proofs (render_proof_html)
    "axiom": ("#a6cee3", "#1f78b4", 1),
    "shortest": ("#c7e9c0", "#2d6a27", 2),
    "goal": ("#59a14f", "#2d6a27", 2),
    "detour": ("#f28e2b", "#a65300", 1),
    "irrelevant": ("#d4c4e8", "#6a3d9a", 1),
}

#: The legend as data (paper conventions, DESIGN.md §3).
LEGEND: tuple[LegendEntry, ...] = (
    LegendEntry("Given (no parents)", _STYLE["given"][0], "thin blue", "given"),
    LegendEntry("Step", _STYLE["step"][0], "thin grey", "step"),
    LegendEntry("Dead end (nothing uses it)", _STYLE["dead_end"][0], "thin", "dead_end"),
    LegendEntry("Final step, correct", _STYLE["final_correct"][0], "dark", "final_correct"),
    LegendEntry("Final step, incorrect", _STYLE["final_incorrect"][0], "dark", "final_incorrect"),
    LegendEntry("Final step, not scored", _STYLE["final"][0], "dark", "final"),
    LegendEntry("Structural fault", "#ffffff", "thick red", "fault"),
    LegendEntry("Missing or later parent", "#ffffff", "dashed; dashed red edge", "missing"),
)

#: Node kinds of a drawn logic-program proof (``render_proof_html``).
PROOF_KINDS = ("axiom", "shortest", "goal", "detour", "irrelevant")
#: The legend of a drawn proof.
PROOF_LEGEND: tuple[LegendEntry, ...] = (
    LegendEntry("Axiom of the shortest proof", _STYLE["axiom"][0], "thin blue", "axiom"),
    LegendEntry("Theorem of the shortest proof", _STYLE["shortest"][0], "green", "shortest"),
    LegendEntry("Goal", _STYLE["goal"][0], "dark", "goal"),
    LegendEntry("Detour (not in the shortest proof)", _STYLE["detour"][0], "thin", "detour"),
    LegendEntry(
        "Irrelevant axiom, or derived from one", _STYLE["irrelevant"][0], "purple", "irrelevant"
    ),
)

_EDGE_COLOR = "#8c8c8c"
_BAD_EDGE_COLOR = "#d62728"

#: Colours of the tag stripe (``color_by="tag"``), given to the most frequent first tags;
#: no orange (dead ends) and no grey (steps): the stripe must not read as a node kind.
TAG_COLORS = ("#4e79a7", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f",
              "#e15759", "#17becf")  # fmt: skip
_OTHER_TAG = "#555555"
#: The importance bar: positive and negative values (DESIGN.md §3 keeps red for faults).
BAR_COLORS = ("#2b5c8a", "#7b3294")
#: Longest field name and summary carried to the view.
_MAX_FIELD_NAME = 40
_MAX_SUMMARY = 120


@dataclass(frozen=True, slots=True)
class StepEncodings:
    """What a trajectory's steps offer to draw beyond their kind: numeric fields (a bar in
    each box), tags (a coloured stripe) and a ``summary`` (a short label in reading order)."""

    numeric: tuple[str, ...]
    tags: bool
    summary: bool

    @property
    def default_bar(self) -> str | None:
        """The field drawn as a bar until the user picks another: the source's
        counterfactual importance (Thought Anchors' headline measure) when the steps have
        it, else the first field named ``*importance*``, else none.

        Example:
            >>> StepEncodings(("accuracy", "resampling_importance_kl"), False, False).default_bar
            'resampling_importance_kl'
            >>> StepEncodings(("accuracy",), False, False).default_bar is None
            True
        """
        if PREFERRED_BAR in self.numeric:
            return PREFERRED_BAR
        return next((name for name in self.numeric if "importance" in name.lower()), None)


#: The bar shown by default where the steps have it (:attr:`StepEncodings.default_bar`).
PREFERRED_BAR = "counterfactual_importance_accuracy"


def step_encodings(traj: Trajectory) -> StepEncodings:
    """The numeric fields present on some step (in the source's order), and whether any step
    has tags or a text ``summary``: the choices the Trajectory page offers.

    Example:
        >>> from dagmath_viz.schema import Step, Trajectory
        >>> s = Step(1, (), "a", fields=(("accuracy", 0.5), ("summary", "set up")))
        >>> step_encodings(Trajectory("m", "d", "1", 0, (s,)))
        StepEncodings(numeric=('accuracy',), tags=False, summary=True)
    """
    numeric: dict[str, None] = {}
    summary = False
    for step in traj.steps:
        numeric.update(dict.fromkeys(_numeric_fields(step)))
        summary = summary or bool(_summary(step))
    return StepEncodings(tuple(numeric), any(_tags(s) for s in traj.steps), summary)


def render_trajectory_html(
    traj: Trajectory,
    *,
    dead_ends: Iterable[int] | None = None,
    final_correct: bool | None = None,
    height_px: int = 600,
    selected_step: Any = None,
    scale: float | None = None,
    show_steps: bool = True,
    layout: str = "auto",
    fit_window: bool = False,
    link_steps: bool = False,
    find: str | None = None,
    bar_field: str | None = None,
    color_by: str = "kind",
    label_by: str = "text",
    katex: bool = True,
) -> str:
    """A self-contained HTML page: the step graph and (``show_steps``) the step list, linked.

    Clicking a node highlights it and scrolls the list to its step; clicking a step selects
    and centres its node. The toolbar has zoom and fit buttons, a layout switch, "path to the
    answer", "hide dead-end branches", a focus mode and one button per dead end.

    Args:
        traj: the trajectory; faulty ones are drawn too (well-formed edges solid, references
            to missing or later steps dashed red, faulty steps outlined in red).
        dead_ends: step ids (as in ``Score.dead_ends``, not positions) to colour as dead ends;
            computed from the graph when ``None``.
        final_correct: colours the final step green (True), red (False) or neutral (None).
        height_px: height of the view in CSS pixels (toolbar and legend included).
        selected_step: a step id (or its text form, as in a ``step=`` link) selected on
            arrival: its node is centred and its step scrolled into view.
        scale: a fixed initial zoom (1 = 100 %) instead of the automatic one, e.g. so that
            graphs shown side by side share a scale.
        show_steps: put the step list beside the graph.
        layout: ``"auto"``, ``"layered"`` or ``"reading"`` (see :func:`choose_layout`).
        fit_window: when embedded same-origin, the view sets its own and its frame's height
            to what the window has below the frame's top (at least :data:`MIN_FIT_HEIGHT`,
            at most :data:`MAX_FIT_HEIGHT` px), so graph and list are on screen on arrival.
        link_steps: when embedded same-origin, selecting a step writes ``step=<id>`` into the
            app's address (``history.replaceState``) and the toolbar gets "Copy link".
        find: a search the trajectory was opened from: the steps whose text or thinking hold
            it are marked, with find-previous/next buttons; with no ``selected_step``, the
            first of them is selected on arrival.
        bar_field: a numeric step field (see :func:`step_encodings`) drawn as a bar along
            the bottom of each box, its length the value's share of the largest absolute
            value (boxes keep their size, so the layout and its checks do not change).
        color_by: ``"kind"``, or ``"tag"`` for a stripe at each box's left in the colour of
            the step's first tag (fills still say the kind: dead ends stay orange).
        label_by: ``"text"``, or ``"summary"``: reading-order rows show the source's
            ``summary`` of the step instead of its text's opening (compact for long chains).
        katex: inline KaTeX (:func:`katex_script`, ~250 KB) to typeset the step list's math
            when a step has any; False when the page embedding the view typesets it with its
            own copy (an exported file: one KaTeX for all its views), so the list shows the
            text as written until then.

    Returns:
        The HTML, with no external URL; show it with ``st.iframe(html, height=height_px)``.

    Example:
        >>> from dagmath_viz.schema import Step, Trajectory
        >>> t = Trajectory("m", "d", "1", 0, (Step(1, (), "a"), Step(2, (1,), "b")))
        >>> 'data-nodes="2"' in render_trajectory_html(t, final_correct=True)
        True
    """
    data = graph_data(traj, dead_ends=dead_ends, final_correct=final_correct)
    hits = matching_steps(traj, find or "")
    selected = _selected_node(traj, selected_step)
    data["view"] = {
        "layout": choose_layout(data) if layout == "auto" else layout,
        "selected": hits[0] if selected is None and hits else selected,
        "link_steps": bool(link_steps),
        "find": (find or "").strip()[:100],
        "find_hits": hits[:2000],
        "scale": None if scale is None else float(scale),
        "show_steps": bool(show_steps),
        "height": int(height_px),
        "fit_window": bool(fit_window),
        "min_height": MIN_FIT_HEIGHT,
        "max_height": MAX_FIT_HEIGHT,
        **encoding_view(data, bar_field, color_by, label_by),
    }
    if data["view"]["layout"] not in data["layouts"]:
        data["view"]["layout"] = "reading"
    return _page(data, int(height_px), katex=katex)


def encoding_view(
    data: dict[str, Any], bar_field: str | None, color_by: str, label_by: str
) -> dict[str, Any]:
    """The view settings of the step-field encodings, each dropped when the data lacks it:
    ``bar`` (a numeric field with its largest absolute value), ``tag_stripe``, ``summary``."""
    ranges = data.get("fields", {})
    bar = None
    if bar_field in ranges and ranges[bar_field]["absmax"] > 0:
        bar = {"field": bar_field, "absmax": ranges[bar_field]["absmax"]}
    return {
        "bar": bar,
        "tag_stripe": color_by == "tag" and bool(data.get("tag_colors")),
        "label_summary": label_by == "summary" and any(n.get("summary") for n in data["nodes"]),
    }


def encoding_legend(data: dict[str, Any]) -> list[tuple[str, str]]:
    """Legend rows (text, swatch CSS) saying what the bar and the stripe of ``data["view"]``
    mean, in the source's own field and tag names."""
    view = data["view"]
    rows: list[tuple[str, str]] = []
    bar = view.get("bar")
    if bar:
        r = data["fields"][bar["field"]]
        rows.append(
            (
                f"Bar: {bar['field']}, length |value| / {bar['absmax']:.3g} (the largest); "
                f"range {r['min']:.3g} to {r['max']:.3g}; {r['n']} of {data['n_steps']} steps "
                "have it",
                f"background:{BAR_COLORS[0]};height:4px;",
            )
        )
        if r["min"] < 0:
            rows.append(("Bar: negative value", f"background:{BAR_COLORS[1]};height:4px;"))
    if view.get("tag_stripe"):
        for tag, colour, count in data["tag_colors"]:
            rows.append((f"Tag: {tag} ({count})", f"background:{colour};width:6px;"))
    if view.get("label_summary"):
        rows.append(("Row text: the source's summary of the step", "background:#ffffff;"))
    return rows


def render_dag_html(
    traj: Trajectory,
    *,
    dead_ends: Iterable[int] | None = None,
    final_correct: bool | None = None,
    height_px: int = 600,
    scale: float | None = None,
    selected_step: Any = None,
) -> str:
    """The graph alone (no step list): :func:`render_trajectory_html` with ``show_steps=False``.

    Example:
        >>> from dagmath_viz.schema import Step, Trajectory
        >>> t = Trajectory("m", "d", "1", 0, (Step(1, (), "a"), Step(2, (1,), "b")))
        >>> "dm-root" in render_dag_html(t, final_correct=True)
        True
    """
    return render_trajectory_html(
        traj,
        dead_ends=dead_ends,
        final_correct=final_correct,
        height_px=height_px,
        scale=scale,
        selected_step=selected_step,
        show_steps=False,
    )


def choose_layout(data: dict[str, Any]) -> str:
    """``"layered"`` when the trajectory is short (at most :data:`LAYERED_MAX` nodes), its
    layers at most :data:`LAYERED_MAX_WIDTH` wide and at most :data:`LAYERED_MAX_LAYERS` deep;
    ``"reading"`` otherwise."""
    lay = data["layouts"].get("layered")
    if lay is None or lay["width"] > LAYERED_MAX_WIDTH:
        return "reading"
    layers = 1 + max((n["level"] for n in data["nodes"]), default=0)
    return "layered" if layers <= LAYERED_MAX_LAYERS else "reading"


def graph_data(
    traj: Trajectory,
    *,
    dead_ends: Iterable[int] | None = None,
    final_correct: bool | None = None,
) -> dict[str, Any]:
    """Everything the view draws, as JSON-ready data (also what the tests check).

    Returns a dict with ``nodes`` (steps in order, then one placeholder per missing parent),
    ``edges`` (``from``/``to`` node indices; ``bad`` for references to missing or later steps),
    ``answer_path`` (nodes the final step depends on, and the final step) and ``layouts``
    (``reading`` always, ``layered`` for short trajectories; each with a ``pruned`` twin
    holding only ``answer_path``), each layout with one ``[x, y, w, h]`` per node and one SVG
    path per edge (``None`` for what it leaves out). Each step node also carries its numeric
    ``fields``, its ``summary`` and (with tags) a ``tag_color``; ``fields`` (per name: min,
    max, largest absolute value, steps that have it) and ``tag_colors`` ([tag, colour,
    steps] of the first tags) are what the bar and the stripe are measured and told by.
    """
    n, nodes, edges, answer = _model(traj, dead_ends, final_correct)
    layouts = _layouts(n, nodes, edges, answer)
    _add_tag_colors(nodes)
    return {
        "fields": _field_ranges(nodes),
        "tag_colors": _tag_legend(nodes),
        "n": len(nodes),
        "n_steps": n,
        "nodes": nodes,
        "edges": edges,
        "answer_path": sorted(answer),
        "final": n - 1 if n else None,
        "layouts": {name: _layout_json(lay) for name, lay in layouts.items()},
        "colors": {k: list(v[:2]) for k, v in _STYLE.items() if k in KINDS},
    }


def _model(
    traj: Trajectory, dead_ends: Iterable[int] | None, final_correct: bool | None
) -> tuple[int, list[dict[str, Any]], list[dict[str, Any]], set[int]]:
    """(number of steps, nodes, edges, the answer path) of :func:`graph_data`."""
    validation = validate(traj)
    graph = validation.graph
    n = graph.n_nodes
    dead = _dead_end_set(graph, dead_ends)
    faulty = _faults_by_position(graph.n_nodes, validation.faults)
    level = depths(graph)
    ghosts, extra_edges = _placeholders(traj, graph, level)
    shift = 1 if any(lv < 0 for _, lv in ghosts.values()) else 0

    nodes: list[dict[str, Any]] = []
    for pos, step in enumerate(traj.steps):
        kind = _kind(pos, traj, dead, final_correct)
        nodes.append(
            {
                "id": pos,
                "sid": _short(step.step_id, 40),
                "label": "S" + _short(graph.ids[pos], 12),
                "kind": kind,
                "dead_end": kind == "dead_end",
                "fault": pos in faulty,
                "position": pos,
                "level": level[pos] + shift,
                "title": _node_title(step, kind, faulty.get(pos, [])),
                "text": _cut(step.text, MAX_STEP_TEXT),
                "why": _cut(step.justification, MAX_STEP_TEXT),
                "snippet": math_plain(step.text, 200) if isinstance(step.text, str) else "",
                **_math_fields(step),
                "parents": [_short(p, 24) for p in step.parents[:50]],
                "tags": [_short(t, 40) for t in _tags(step)][:8],
                "faults": [_cut(m, 300) for m in faulty.get(pos, [])[:5]],
                "fields": _numeric_fields(step),
                "summary": _summary(step),
            }
        )
    for gid, (label, ghost_level) in sorted(ghosts.items()):
        nodes.append(
            {
                "id": gid,
                "label": label,
                "kind": "missing",
                "dead_end": False,
                "fault": False,
                "position": -1,
                "level": ghost_level + shift,
                "title": label + " (referenced, but no such earlier step)",
            }
        )
    edges = [
        {"from": p, "to": child, "bad": False}
        for child, parents in enumerate(graph.parents)
        for p in parents
    ]
    edges += [{"from": f, "to": t, "bad": True, "title": text} for f, t, text in extra_edges]

    return n, nodes, edges, _answer_path(graph)


def legend_html(
    n_steps: int | None = None,
    entries: tuple[LegendEntry, ...] = LEGEND,
    extra: Iterable[tuple[str, str]] = (),
    notes: Iterable[str] = (),
) -> str:
    """The legend as a strip of plain, escaped text above the drawing (never over it).

    ``n_steps`` adds a note for large (> :data:`LARGE_GRAPH`) or empty graphs; ``extra`` rows
    are (text, swatch CSS we wrote) pairs, such as :func:`encoding_legend`'s; ``notes`` are
    further plain-text notes.
    """
    rows = []
    swatches = [(entry.label, _swatch_css(entry.kind)) for entry in entries] + list(extra)
    for label, css in swatches:
        rows.append(
            '<div class="dm-row"><span class="dm-swatch" style="'
            + html.escape(css)
            + '"></span>'
            + html.escape(label)
            + "</div>"
        )
    rows += ['<div class="dm-note">' + html.escape(note) + "</div>" for note in notes]
    if n_steps is not None and n_steps > LARGE_GRAPH:
        rows.append(
            '<div class="dm-note">'
            + html.escape(f"Large graph: {int(n_steps)} steps. Scroll or zoom with the buttons.")
            + "</div>"
        )
    elif n_steps == 0:
        rows.append('<div class="dm-note">No steps to draw.</div>')
    return '<div id="dagmath-legend" role="note" aria-label="legend">' + "".join(rows) + "</div>"


def trajectory_layouts(
    traj: Trajectory, *, dead_ends: Iterable[int] | None = None
) -> dict[str, geo.Layout]:
    """The layouts :func:`graph_data` draws, as geometry (for the truthfulness tests), with
    the edges they route: ``{name: Layout}``; ``Layout.routes`` follow ``graph_data``'s edges."""
    n_steps, nodes, edges, answer = _model(traj, dead_ends, None)
    return _layouts(n_steps, nodes, edges, answer)


def _layouts(
    n_steps: int, nodes: list[dict[str, Any]], edges: list[dict[str, Any]], answer: set[int]
) -> dict[str, geo.Layout]:
    keep = [i in answer for i in range(len(nodes))]
    pairs = [(e["from"], e["to"]) for e in edges]
    order = _reading_order(n_steps, nodes)
    layouts = {
        "reading": geo.reading(len(nodes), pairs, order=order),
        "reading_pruned": geo.reading(len(nodes), pairs, keep=keep, order=order),
    }
    if len(nodes) <= LAYERED_MAX:
        levels = [node["level"] for node in nodes]
        labels = [node["label"] for node in nodes]
        layouts["layered"] = geo.layered(levels, pairs, labels)
        layouts["layered_pruned"] = geo.layered(levels, pairs, labels, keep=keep)
    return layouts


#: Most formulas typeset on one page of steps; beyond it, steps show as raw text. KaTeX takes
#: about 0.7 ms a formula in the browser, so 300 stay well under a second.
FORMULA_BUDGET = 300
#: Steps per page of the typeset step list.
STEPS_PER_PAGE = 25


@dataclass(frozen=True, slots=True)
class TypesetPlan:
    """Which steps of a page get typeset math, within :data:`FORMULA_BUDGET`.

    ``typeset[i]`` is True when step ``start + i`` is typeset; ``formulas`` counts the
    formulas typeset; ``over_budget`` is True when some step with formulas shows raw text.
    """

    start: int
    stop: int
    typeset: tuple[bool, ...]
    formulas: int
    over_budget: bool


def typeset_plan(
    texts: list[str], start: int, stop: int, budget: int = FORMULA_BUDGET
) -> TypesetPlan:
    """Typeset steps ``start..stop-1`` in order while their formulas fit in ``budget``; every
    step after the first that does not fit shows raw (so the page never freezes).

    ``texts[i]`` is all the text of step i that would be typeset (its text and its why).

    Example:
        >>> typeset_plan(["$a$ $b$", "$c$", "$d$ $e$"], 0, 3, budget=3)
        TypesetPlan(start=0, stop=3, typeset=(True, True, False), formulas=3, over_budget=True)
    """
    used, flags, over = 0, [], False
    for text in texts[start:stop]:
        k = count_formulas(text) if not over else 0
        if over or used + k > budget:
            over = over or k > 0
            flags.append(k == 0 and not over)
            continue
        used += k
        flags.append(True)
    return TypesetPlan(start, stop, tuple(flags), used, over)


def _answer_path(graph: StepGraph) -> set[int]:
    """The final step and every step it depends on (linear: each node is visited once)."""
    if not graph.n_nodes:
        return set()
    final = graph.n_nodes - 1
    seen = {final}
    stack = [final]
    while stack:
        for p in graph.parents[stack.pop()]:
            if p not in seen:
                seen.add(p)
                stack.append(p)
    return seen


def _reading_order(n_steps: int, nodes: list[dict[str, Any]]) -> list[int]:
    # Placeholders for missing parents first (they stand for something before the steps).
    return list(range(n_steps, len(nodes))) + list(range(n_steps))


def _layout_json(lay: geo.Layout) -> dict[str, Any]:
    return {
        "kind": lay.kind,
        "width": round(lay.width, 1),
        "height": round(lay.height, 1),
        "boxes": [
            None if b is None else [round(b.x, 1), round(b.y, 1), round(b.w, 1), round(b.h, 1)]
            for b in lay.boxes
        ],
        "paths": [None if r is None else r.svg_path() for r in lay.routes],
    }


def _selected_node(traj: Trajectory, wanted: Any) -> int | None:
    if wanted is None:
        return None
    text = str(wanted)
    for pos, step in enumerate(traj.steps):
        if step.step_id == wanted or str(step.step_id) == text:
            return pos
    return None


def _tags(step: Step) -> tuple[str, ...]:
    tags = getattr(step, "tags", None) or ()
    return tuple(str(t) for t in tags) if isinstance(tags, (list, tuple)) else ()


def _numeric_fields(step: Step) -> dict[str, float]:
    """The step's finite numeric fields (booleans are not numbers here), by name."""
    out: dict[str, float] = {}
    for name, value in getattr(step, "fields", None) or ():
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if math.isfinite(value) and isinstance(name, str):
            out.setdefault(_short(name, _MAX_FIELD_NAME), float(value))
    return out


def _summary(step: Step) -> str:
    """The source's own short label of the step (Thought Anchors' ``summary``), or ""."""
    for name, value in getattr(step, "fields", None) or ():
        if name == "summary" and isinstance(value, str) and value.strip():
            # shown as row text and a badge, where nothing typesets: formulas as plain text
            return math_plain(" ".join(value.split()), _MAX_SUMMARY)
    return ""


def _field_ranges(nodes: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per numeric field: least, greatest and largest absolute value over the steps, and how
    many steps have it (what a bar's length is measured against)."""
    ranges: dict[str, dict[str, float]] = {}
    for node in nodes:
        for name, value in node.get("fields", {}).items():
            r = ranges.setdefault(name, {"min": value, "max": value, "absmax": 0.0, "n": 0})
            r["min"], r["max"] = min(r["min"], value), max(r["max"], value)
            r["absmax"] = max(r["absmax"], abs(value))
            r["n"] += 1
    return ranges


def _tag_legend(nodes: list[dict[str, Any]]) -> list[list[Any]]:
    """[[tag, colour, steps], ...] of the first tags, most frequent first ("other" last)."""
    counts: dict[str, int] = {}
    for node in nodes:
        if node.get("tags"):
            counts[node["tags"][0]] = counts.get(node["tags"][0], 0) + 1
    ranked = sorted(counts, key=lambda t: (-counts[t], t))
    rows = [[t, TAG_COLORS[i], counts[t]] for i, t in enumerate(ranked[: len(TAG_COLORS)])]
    rest = sum(counts[t] for t in ranked[len(TAG_COLORS) :])
    return rows + ([["other", _OTHER_TAG, rest]] if rest else [])


def _add_tag_colors(nodes: list[dict[str, Any]]) -> None:
    colour = {row[0]: row[1] for row in _tag_legend(nodes)}
    for node in nodes:
        if node.get("tags"):
            node["tag_color"] = colour.get(node["tags"][0], _OTHER_TAG)


#: Most formulas typeset in one step of the list; a step with more shows as written (KaTeX
#: takes about 0.7 ms a formula, and steps are typeset as they scroll into view).
MAX_STEP_FORMULAS = 80


def _math_fields(step: Step) -> dict[str, Any]:
    """``math`` / ``why_math``: the step's text and justification as segments for the
    view's typesetter (see :func:`dagmath_viz.text.rich_segments`: text, formulas, and
    markdown emphasis opened and closed), only when they hold a formula or an emphasis,
    and only up to :data:`MAX_STEP_FORMULAS` formulas (beyond, the text shows as written)."""
    out: dict[str, Any] = {}
    for key, text in (("math", step.text), ("why_math", step.justification)):
        if not isinstance(text, str):
            continue
        segments = rich_segments(_cut(text, MAX_STEP_TEXT))
        formulas = sum(1 for kind, _ in segments if kind in (1, 2))
        if formulas <= MAX_STEP_FORMULAS and any(kind for kind, _ in segments):
            out[key] = [[kind, piece] for kind, piece in segments]
    return out


# -- graph facts -----------------------------------------------------------------------------


def _dead_end_set(graph: StepGraph, dead_ends: Iterable[int] | None) -> set[int]:
    if dead_ends is None:
        return set(dead_end_positions(graph))
    wanted = {d for d in dead_ends if is_step_id(d)}
    return {pos for pos, sid in enumerate(graph.ids) if is_step_id(sid) and sid in wanted}


def _faults_by_position(n_steps: int, faults: Iterable[Fault]) -> dict[int, list[str]]:
    """The fault messages naming each step, by the positions each fault records."""
    found: dict[int, list[str]] = {}
    for fault in faults:
        for pos in dict.fromkeys(fault.positions):
            if 0 <= pos < n_steps:
                found.setdefault(pos, []).append(fault.message)
    return found


def _bad_references(traj: Trajectory) -> list[tuple[int, int | None, Any]]:
    """(child position, parent position or None, the cited value) for every reference
    validation drops: to an id that does not exist (or is not an integer), to itself, or
    to a later step. Mirrors :func:`dagmath_viz.score.validation.validate_steps`."""
    position: dict[int, int] = {}
    for i, step in enumerate(traj.steps):
        if is_step_id(step.step_id) and step.step_id not in position:
            position[step.step_id] = i
    bad: list[tuple[int, int | None, Any]] = []
    for i, step in enumerate(traj.steps):
        seen: set[str] = set()
        for p in step.parents:
            key = short_repr(p, 200)
            if key in seen:
                continue
            seen.add(key)
            if not is_step_id(p) or p not in position:
                bad.append((i, None, p))
            elif position[p] >= i:
                bad.append((i, position[p], p))
    return bad


def _placeholders(
    traj: Trajectory, graph: StepGraph, level: list[int]
) -> tuple[dict[int, tuple[str, int]], list[tuple[int, int, str]]]:
    """Placeholder nodes for missing parents ({node id: (label, level)}, one per distinct
    missing id, one level above its highest child) and the dashed edges of every bad
    reference as (from, to, hover text)."""
    n = graph.n_nodes
    ids: dict[str, int] = {}  # repr of a missing parent -> its node id
    ghosts: dict[int, tuple[str, int]] = {}
    edges: list[tuple[int, int, str]] = []
    for child, parent, missing in _bad_references(traj):
        sid = _short(graph.ids[child])
        if parent is not None:
            text = f"S{sid} cites S{_short(graph.ids[parent])}, which is not an earlier step"
            edges.append((parent, child, text))
            continue
        gid = ids.setdefault(short_repr(missing, 200), n + len(ids))
        label = "missing " + _short(missing)
        ghosts[gid] = (label, min(ghosts.get(gid, (label, level[child]))[1], level[child] - 1))
        edges.append((gid, child, f"S{sid} cites step {_short(missing)}, which does not exist"))
    return ghosts, edges


def _kind(pos: int, traj: Trajectory, dead: set[int], final_correct: bool | None) -> str:
    if pos == len(traj.steps) - 1:
        return {True: "final_correct", False: "final_incorrect"}.get(final_correct, "final")
    if pos in dead:
        return "dead_end"
    # A given is a step that cites nothing; one whose citations are all broken is not.
    return "step" if traj.steps[pos].parents else "given"


# -- text -------------------------------------------------------------------------------------

_HREF = re.compile(r"(h)(ref)", re.IGNORECASE)


def break_href(text: str) -> str:
    """Break every ``href`` so pyvis never chooses its innerHTML popup (pyvis pages only)."""
    return _HREF.sub("\\1\u200b\\2", text)


def _cut(text: Any, limit: int = MAX_TEXT) -> str:
    """``text`` (or a short repr) within ``limit``, bidi and invisible characters tagged."""
    # revealed after a first cut (tags only lengthen it): a 1 MB step costs its first limit
    text = reveal_bidi(text[: limit + 1]) if isinstance(text, str) else short_repr(text, limit)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(value: Any, limit: int = 24) -> str:
    return _cut(str(value), limit)


def _readable(text: Any) -> str:
    """Hover text: formulas as readable text, not TeX source (a tooltip cannot typeset)."""
    return math_plain(text, MAX_TEXT) if isinstance(text, str) else _cut(text)


def _node_title(step: Step, kind: str, faults: list[str]) -> str:
    why = _readable(step.justification).strip() or "(no justification given)"
    lines = [f"Step {_short(step.step_id)}", _readable(step.text), f"— why: {why}"]
    if kind == "dead_end":
        lines.append("(dead end: no later step uses it)")
    lines.extend("fault: " + _cut(m, 200) for m in faults[:3])
    if _summary(step):
        lines.append("summary: " + _summary(step))
    fields = _numeric_fields(step)
    lines.extend(f"{name}: {value:.4g}" for name, value in list(fields.items())[:12])
    return "\n".join(lines)


def _color(kind: str, fault: bool) -> dict[str, Any]:
    fill, border, _ = _STYLE[kind]
    if fault:
        border = _FAULT_BORDER
    return {
        "background": fill,
        "border": border,
        "highlight": {"background": fill, "border": "#000000"},
        "hover": {"background": fill, "border": "#000000"},
    }


def swatch_style(kind: str) -> tuple[str, str, int, bool]:
    """How a legend swatch of ``kind`` (a :class:`LegendEntry` kind) is drawn: (fill,
    border colour, border width in px, dashed), the colours its boxes are drawn in.

    Example:
        >>> swatch_style("fault")
        ('#ffffff', '#d62728', 3, False)
        >>> swatch_style("step")[:2] != swatch_style("final")[:2]
        True
    """
    if kind == "fault":
        return "#ffffff", _FAULT_BORDER, 3, False
    fill, border, width = _STYLE[kind]
    return fill, border, max(width, 1), kind == "missing"


def _swatch_css(kind: str) -> str:
    fill, border, width, dashed = swatch_style(kind)
    style = "dashed" if dashed else "solid"
    return f"background:{fill};border:{width}px {style} {border};"


# -- the page ---------------------------------------------------------------------------------

# JSON escapes that keep data inert inside <script>: no tag can close, no URL is spelled out.
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "/": "\\/"}
_JSON_UNSAFE = re.compile("[<>&/]")


def script_json(data: Any) -> str:
    """``data`` as JSON that stays inert inside ``<script type="application/json">``: no tag
    can close and no URL is spelled out (``<``, ``>``, ``&``, ``/`` written as escapes)."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    return _JSON_UNSAFE.sub(lambda m: _JSON_ESCAPES[m.group(0)], text)


@cache
def _asset(name: str) -> str:
    return (_ASSETS / name).read_text(encoding="utf-8")


_KATEX_EXPORT = re.compile(r"export\s*\{\s*([\w$]+)\s+as\s+default\s*\}\s*;?\s*$")


@cache
def katex_script() -> str:
    """KaTeX as a classic script that sets ``window.dmKatex``, or "" when it is not there.

    The app already ships KaTeX: Streamlit's frontend bundles it as one self-contained
    module (``streamlit/static/static/js/katex.*.js``). It is read from there, not fetched
    (the view stays offline), and found with ``find_spec``, which does not import Streamlit.
    Its two XML namespace URLs are written ``http:\\/\\/`` (the same string in JS) so the
    page names no URL. Without it the step list shows formulas as written.
    """
    spec = importlib.util.find_spec("streamlit")
    roots = list(spec.submodule_search_locations or []) if spec else []
    for root in roots:
        for path in sorted((Path(root) / "static" / "static" / "js").glob("katex.*.js")):
            code = path.read_text(encoding="utf-8")
            m = _KATEX_EXPORT.search(code)
            if m is None or "innerHTML" in code or "</script" in code.lower():
                continue
            code = code[: m.start()] + f";window.dmKatex={m.group(1)};"
            code = re.sub(r"(https?):\/\/", r"\1:\\/\\/", code)
            return "(function(){" + code + "})();"
    return ""


def _page(data: dict[str, Any], height_px: int, *, katex: bool = True) -> str:
    n = int(data["n"])
    page = (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        "<style>" + _asset("trajectory_view.css") + f"#dm-root{{height:{height_px}px}}</style>"
        "</head><body>"
        f'<div id="dm-root" data-nodes="{n}" data-layout="{html.escape(data["view"]["layout"])}">'
        + legend_html(data["n_steps"], extra=encoding_legend(data))
        + '<div id="dm-bar" role="toolbar" aria-label="graph controls"></div>'
        '<div id="dm-main"><div id="dm-graph" tabindex="0"></div><div id="dm-overview"></div>'
        '<div id="dm-steps" role="list" aria-label="steps"></div></div>'
        '<div id="dm-tip" role="tooltip"></div></div>'
        '<script type="application/json" id="dm-data">'
        + script_json(data)
        + "</script>"
        + ("<script>" + katex_script() + "</script>" if katex and _has_math(data) else "")
        + "<script>"
        + _asset("trajectory_view.js")
        + "</script>"
        "</body></html>"
    )
    if "innerHTML" in _asset("trajectory_view.js") or re.search(r"https?://", page, re.I):
        raise RuntimeError("the trajectory view would use innerHTML or an external URL")
    return page


def _has_math(data: dict[str, Any]) -> bool:
    return any("math" in n or "why_math" in n for n in data["nodes"]) and bool(katex_script())


# -- logic-program proofs (vis-network through pyvis) ------------------------------------

#: Above this many nodes vis-network's crossing reduction is switched off: on 2 cores it
#: costs ~1.9 s for a 150-step trajectory and ~7 s for 500 (0.13 s and 0.2 s without).
CROSSING_REDUCTION_MAX = 60


def _options(n_nodes: int, hierarchical: bool = True) -> dict[str, Any]:
    large = n_nodes > LARGE_GRAPH
    reduce = n_nodes <= CROSSING_REDUCTION_MAX
    return {
        "layout": {
            "improvedLayout": hierarchical,
            "hierarchical": {
                "enabled": hierarchical,
                "direction": "UD",
                "levelSeparation": 80,
                "nodeSpacing": 70,
                "treeSpacing": 90,
                "blockShifting": reduce,
                "edgeMinimization": reduce,
                "parentCentralization": reduce,
            },
        },
        "physics": {"enabled": False},
        "interaction": {"hover": True, "tooltipDelay": 120, "dragNodes": True},
        "nodes": {
            "shape": "box",
            "margin": 6,
            "font": {"size": 14, "face": "sans-serif", "color": "#111111"},
        },
        "edges": {
            "arrows": {"to": {"enabled": True, "scaleFactor": 0.6}},
            "smooth": (
                False
                if large
                else {"enabled": True, "type": "cubicBezier", "forceDirection": "vertical"}
            ),
            "width": 1.2,
        },
    }


# -- post-processing of pyvis's page -----------------------------------------------------------

_BOOTSTRAP = re.compile(
    r"<link[^>]*bootstrap[^>]*>|<script[^>]*bootstrap[^>]*>\s*</script>", re.IGNORECASE
)
_EMPTY_HEADING = re.compile(r"<center>\s*<h1>\s*</h1>\s*</center>")
_PYVIS_COMMENT = re.compile(r"<!--\s*<link[^>]*node_modules.*?-->", re.DOTALL)
_CODE_BLOCK = re.compile(r"(<(script|style)[^>]*>)(.*?)(</\2>)", re.DOTALL | re.IGNORECASE)
_URL = re.compile(r"(https?)://", re.IGNORECASE)
_POPUP_MARKERS = ("div.popup", "showPopup(", "popup.innerHTML")

_CSS = """
body { margin: 0; font-family: sans-serif; }
#mynetwork { float: none !important; box-sizing: border-box; }
div.vis-tooltip { white-space: pre-wrap !important; max-width: 420px; font-family: sans-serif;
  font-size: 13px; overflow-wrap: anywhere; }
#dagmath-legend { display: flex; flex-wrap: wrap; gap: 2px 14px; pointer-events: none;
  background: #fff; border-bottom: 1px solid #e0e0e0; padding: 4px 7px;
  font: 11px/1.45 sans-serif; color: #222; }
#dagmath-legend .dm-swatch { display: inline-block; width: 14px; height: 9px;
  margin-right: 6px; vertical-align: middle; box-sizing: border-box; }
#dagmath-legend .dm-note { margin-top: 3px; font-style: italic; max-width: 200px; }
"""


def offline_pyvis_page(
    page: str,
    n_steps: int,
    legend: tuple[LegendEntry, ...] = LEGEND,
    extra: Iterable[tuple[str, str]] = (),
    notes: Iterable[str] = (),
) -> str:
    """pyvis's page made safe and offline: refused if pyvis chose its innerHTML popup,
    Bootstrap's CDN tags stripped, ``http://`` inside scripts written ``http:\\/\\/``, our
    legend (with ``extra`` rows and ``notes``, see :func:`legend_html`) put first."""
    if any(marker in page for marker in _POPUP_MARKERS):
        # pyvis chose its innerHTML popup: titles would run as markup in the app. (The word
        # itself may well appear in the data, as text; that is harmless.)
        raise RuntimeError("pyvis produced its innerHTML popup code path; refusing unsafe output")
    page = _BOOTSTRAP.sub("", page)
    page = _EMPTY_HEADING.sub("", page)
    page = _PYVIS_COMMENT.sub("", page)
    # Inside scripts and styles "http:\/\/" reads as "http://" (JS and CSS escapes), but it is
    # not a URL any scanner or browser preloader follows.
    page = _CODE_BLOCK.sub(
        lambda m: m.group(1) + _URL.sub(r"\1:\\/\\/", m.group(3)) + m.group(4), page
    )
    page = page.replace("</head>", "<style>" + _CSS + "</style>\n</head>", 1)
    page = page.replace("<body>", "<body>\n" + legend_html(n_steps, legend, extra, notes), 1)
    if re.search(r"https?://", page, re.IGNORECASE):
        raise RuntimeError("rendered DAG HTML still refers to an external URL")
    return "<!DOCTYPE html>\n" + page.lstrip()


# -- logic-program proofs -----------------------------------------------------------------------


def _proof_kind(node: Any) -> str:
    if node.is_goal:
        return "goal"
    if node.irrelevant:
        return "irrelevant"
    if not node.in_shortest_proof:
        return "detour"
    return "axiom" if node.is_axiom else "shortest"


def render_proof_html(graph: Any, *, height_px: int = 520) -> str:
    """A logic-program proof (:class:`dagmath_viz.logic.ProofGraph`) drawn top-down.

    Theorems of the shortest proof, detours outside it and theorems that come from
    irrelevant axioms are coloured apart (:data:`PROOF_LEGEND`); every node carries
    ``kind`` (one of :data:`PROOF_KINDS`) for tests, like :func:`render_dag_html`.
    """
    # imported here: pyvis (and jinja2 under it) costs ~0.2 s, and every page that draws a
    # trajectory or offers an HTML export imports this module without drawing a proof
    from pyvis.network import Network

    net = Network(
        height=f"{int(height_px)}px", width="100%", directed=True, cdn_resources="in_line",
        heading="",
    )  # fmt: skip
    net.options = _options(len(graph.nodes))
    # proofs are wide and shallow (many axioms at level 0): pack them tighter
    net.options["layout"]["hierarchical"].update(nodeSpacing=48, levelSeparation=110)
    for node in graph.nodes:
        kind = _proof_kind(node)
        title = "\n".join(
            [
                f"Theorem {int(node.node_id)}",
                _cut(node.label),
                f"atom: {_cut(node.atom, 300)}",
                f"rule: {node.rule or 'axiom'}",
            ]
        )
        net.add_node(
            int(node.node_id), label=f"T{int(node.node_id)}", shape="box",
            title=break_href(title), color=_color(kind, False), borderWidth=_STYLE[kind][2],
            level=int(node.level), kind=kind,
        )  # fmt: skip
    for parent, child in graph.edges:
        net.edges.append(
            {"from": int(parent), "to": int(child), "arrows": "to", "color": _EDGE_COLOR}
        )
    return offline_pyvis_page(net.generate_html(), len(graph.nodes), PROOF_LEGEND)
