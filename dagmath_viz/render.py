"""Safe, offline HTML of one trajectory's step graph (vis-network through pyvis).

pyvis is unmaintained, so it is wrapped here and nowhere else: the rest of the package only
sees :func:`render_dag_html`, :data:`LEGEND` and :func:`legend_html`.

Safety rules the output keeps (DESIGN.md §5), because Streamlit embeds it in an iframe with
``allow-scripts allow-same-origin``:

- model text only travels inside pyvis's JSON data (Jinja ``tojson`` escapes ``<``, ``>``,
  ``&`` and ``'``), as hover titles that vis-network shows as plain text (``innerText``);
- no title contains ``href``: pyvis would switch to its own popup that assigns the title to
  ``innerHTML``. We break the word with a zero-width space and refuse HTML with that popup;
- node ids are integers, labels are ``S<id>``, the heading is empty and the options are ours;
- no ``http(s)://`` URL is left: the Bootstrap CDN tags are removed and the URL strings inside
  the inline vis-network source (licence comments, the SVG namespace) are written with
  ``:\\/\\/``, which JavaScript reads as ``://``.

Every node carries data fields a browser test can read from the ``nodes`` DataSet:
``kind`` (see :data:`KINDS`), ``dead_end``, ``fault`` and ``position``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pyvis.network import Network

from dagmath_viz.graph import StepGraph, dead_end_positions, depths
from dagmath_viz.schema import Fault, Step, Trajectory
from dagmath_viz.text import short_repr
from dagmath_viz.validation import is_step_id, validate

__all__ = [
    "KINDS",
    "LARGE_GRAPH",
    "LEGEND",
    "PROOF_KINDS",
    "PROOF_LEGEND",
    "LegendEntry",
    "legend_html",
    "render_dag_html",
    "render_proof_html",
]

#: Node kinds, the ``kind`` field of every node in the HTML's ``nodes`` DataSet.
KINDS = ("given", "step", "dead_end", "final_correct", "final_incorrect", "final", "missing")
#: Above this many steps the legend says the graph is large (it is still drawn).
LARGE_GRAPH = 1500
#: Longest hover text piece (node text, justification) before it is cut.
MAX_TEXT = 600
#: Deepest graph handed to vis-network's hierarchical layout: it recurses once per level,
#: and a chain of about 2,800 steps overflows Chromium's stack (nothing is drawn). Deeper
#: graphs get their positions from here, by the same levels.
MAX_LAYOUT_DEPTH = 1000

_FAULT_BORDER = "#d62728"
_FAULT_BORDER_WIDTH = 4


@dataclass(frozen=True, slots=True)
class LegendEntry:
    """One legend row: what it means, its fill colour and how its border or line looks."""

    label: str
    color: str
    border: str
    kind: str


# kind -> (fill, border colour, border width)
_STYLE: dict[str, tuple[str, str, int]] = {
    "given": ("#a6cee3", "#1f78b4", 1),
    "step": ("#e0e0e0", "#8c8c8c", 1),
    "dead_end": ("#f28e2b", "#a65300", 1),
    "final_correct": ("#59a14f", "#2d6a27", 2),
    "final_incorrect": ("#e15759", "#8c1c1e", 2),
    "final": ("#e0e0e0", "#222222", 3),
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
    LegendEntry("Final step, not scored", _STYLE["final"][0], "thick black", "final"),
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


def render_dag_html(
    traj: Trajectory,
    *,
    dead_ends: Iterable[int] | None = None,
    final_correct: bool | None = None,
    height_px: int = 600,
) -> str:
    """A self-contained HTML page drawing the trajectory's step graph, top-down by depth.

    Args:
        traj: the trajectory; faulty ones are drawn too (well-formed edges solid, references
            to missing or later steps dashed, faulty steps outlined in red).
        dead_ends: step ids (as in ``Score.dead_ends``, not positions) to colour as dead ends;
            computed from the graph when ``None``.
        final_correct: colours the final step green (True), red (False) or neutral (None).
        height_px: height of the drawing area in CSS pixels.

    Returns:
        The HTML, with vis-network inline and no external URL; show it with
        ``st.iframe(html, height=height_px + 20)`` or similar.

    Example:
        >>> from dagmath_viz.schema import Step, Trajectory
        >>> t = Trajectory("m", "d", "1", 0, (Step(1, (), "a"), Step(2, (1,), "b")))
        >>> "vis.Network" in render_dag_html(t, final_correct=True)
        True
    """
    validation = validate(traj)
    graph = validation.graph
    n = graph.n_nodes
    dead = _dead_end_set(graph, dead_ends)
    faulty = _faults_by_position(graph.n_nodes, validation.faults)
    level = depths(graph)

    ghosts, extra_edges = _placeholders(traj, graph, level)
    shift = 1 if any(lv < 0 for _, lv in ghosts.values()) else 0

    net = Network(
        height=f"{int(height_px)}px",
        width="100%",
        directed=True,
        cdn_resources="in_line",
        heading="",
    )
    levels = {pos: level[pos] + shift for pos in range(n)}
    levels.update({gid: lv + shift for gid, (_, lv) in ghosts.items()})
    deep = max(levels.values(), default=0) > MAX_LAYOUT_DEPTH
    at = _positions(levels) if deep else {}
    net.options = _options(n, hierarchical=not deep)
    for pos in range(n):
        kind = _kind(pos, traj, dead, final_correct)
        net.add_node(
            pos,
            **at.get(pos, {}),
            label="S" + _short(graph.ids[pos], 12),
            shape="box",
            title=_safe(_node_title(traj.steps[pos], kind, faulty.get(pos, []))),
            color=_color(kind, pos in faulty),
            borderWidth=_FAULT_BORDER_WIDTH if pos in faulty else _STYLE[kind][2],
            level=level[pos] + shift,
            kind=kind,
            dead_end=kind == "dead_end",
            fault=pos in faulty,
            position=pos,
        )
    for gid, (label, ghost_level) in ghosts.items():
        net.add_node(
            gid,
            label=_safe(label),
            shape="box",
            title=_safe(label + " (referenced, but no such earlier step)"),
            color=_color("missing", False),
            shapeProperties={"borderDashes": [4, 4]},
            level=ghost_level + shift,
            **at.get(gid, {}),
            kind="missing",
            dead_end=False,
            fault=False,
            position=-1,
        )
    _add_edges(net, graph, extra_edges)
    page = net.generate_html()
    return _make_safe_and_offline(page, n)


def legend_html(n_steps: int | None = None, entries: tuple[LegendEntry, ...] = LEGEND) -> str:
    """The legend as a strip of plain, escaped text above the drawing (never over it).

    ``n_steps`` adds a note for large (> :data:`LARGE_GRAPH`) or empty graphs.
    """
    rows = []
    for entry in entries:
        rows.append(
            '<div class="dm-row"><span class="dm-swatch" style="'
            + _swatch_css(entry.kind)
            + '"></span>'
            + html.escape(entry.label)
            + "</div>"
        )
    if n_steps is not None and n_steps > LARGE_GRAPH:
        rows.append(
            '<div class="dm-note">'
            + html.escape(f"Large graph: {int(n_steps)} steps. Zoom with the wheel, drag to pan.")
            + "</div>"
        )
    elif n_steps == 0:
        rows.append('<div class="dm-note">No steps to draw.</div>')
    return '<div id="dagmath-legend" role="note" aria-label="legend">' + "".join(rows) + "</div>"


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
    to a later step. Mirrors :func:`dagmath_viz.validation.validate_steps`."""
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


def _safe(text: str) -> str:
    """Break every ``href`` so pyvis never chooses its innerHTML popup (see module doc)."""
    return _HREF.sub("\\1\u200b\\2", text)


def _cut(text: Any, limit: int = MAX_TEXT) -> str:
    text = text if isinstance(text, str) else short_repr(text, limit)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(value: Any, limit: int = 24) -> str:
    return _cut(str(value), limit)


def _node_title(step: Step, kind: str, faults: list[str]) -> str:
    why = _cut(step.justification).strip() or "(no justification given)"
    lines = [f"Step {_short(step.step_id)}", _cut(step.text), f"— why: {why}"]
    if kind == "dead_end":
        lines.append("(dead end: no later step uses it)")
    lines.extend("fault: " + _cut(m, 200) for m in faults[:3])
    return "\n".join(lines)


# -- drawing ----------------------------------------------------------------------------------


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


def _swatch_css(kind: str) -> str:
    if kind == "fault":
        return f"background:#ffffff;border:3px solid {_FAULT_BORDER};"
    fill, border, width = _STYLE[kind]
    style = "dashed" if kind == "missing" else "solid"
    return f"background:{fill};border:{max(width, 1)}px {style} {border};"


def _add_edges(net: Network, graph: StepGraph, extra: list[tuple[int, int, str]]) -> None:
    # Appended directly: pyvis's add_edge checks membership in a list (O(N) per edge), and
    # every id here is known to exist.
    for child, parents in enumerate(graph.parents):
        for p in parents:
            net.edges.append({"from": p, "to": child, "arrows": "to", "color": _EDGE_COLOR})
    for frm, to, text in extra:
        net.edges.append(
            {
                "from": frm,
                "to": to,
                "arrows": "to",
                "dashes": True,
                "color": _BAD_EDGE_COLOR,
                "title": _safe(text),
                "kind": "bad_reference",
            }
        )


def _positions(levels: dict[int, int]) -> dict[int, dict[str, int]]:
    """x, y of each node: one row per level, top-down, each row centred (in node order)."""
    rows: dict[int, list[int]] = {}
    for node, lv in sorted(levels.items()):
        rows.setdefault(lv, []).append(node)
    at = {}
    for lv, nodes in rows.items():
        for i, node in enumerate(nodes):
            at[node] = {"x": int((i - (len(nodes) - 1) / 2) * 90), "y": lv * 80}
    return at


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


def _make_safe_and_offline(
    page: str, n_steps: int, legend: tuple[LegendEntry, ...] = LEGEND
) -> str:
    if "innerHTML" in page:
        # pyvis chose its innerHTML tooltip (or another innerHTML path): titles would run as
        # markup in the app. Neither vis-network nor our template otherwise uses innerHTML.
        raise RuntimeError("pyvis produced an innerHTML code path; refusing unsafe output")
    page = _BOOTSTRAP.sub("", page)
    page = _EMPTY_HEADING.sub("", page)
    page = _PYVIS_COMMENT.sub("", page)
    # Inside scripts and styles "http:\/\/" reads as "http://" (JS and CSS escapes), but it is
    # not a URL any scanner or browser preloader follows.
    page = _CODE_BLOCK.sub(
        lambda m: m.group(1) + _URL.sub(r"\1:\\/\\/", m.group(3)) + m.group(4), page
    )
    page = page.replace("</head>", "<style>" + _CSS + "</style>\n</head>", 1)
    page = page.replace("<body>", "<body>\n" + legend_html(n_steps, legend), 1)
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
            title=_safe(title), color=_color(kind, False), borderWidth=_STYLE[kind][2],
            level=int(node.level), kind=kind,
        )  # fmt: skip
    for parent, child in graph.edges:
        net.edges.append(
            {"from": int(parent), "to": int(child), "arrows": "to", "color": _EDGE_COLOR}
        )
    return _make_safe_and_offline(net.generate_html(), len(graph.nodes), PROOF_LEGEND)
