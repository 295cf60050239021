"""A trajectory's layered graph drawn by vis-network through pyvis, kept truthful.

The card asks for each DAG rendered through pyvis with its unclosed nodes (dead ends)
highlighted. vis-network lays graphs out itself and draws edges as straight lines or curves
between node centres, which passes behind boxes. So nothing here is left to vis-network's
layout: every box is placed where :func:`dagmath_viz.draw.layout.layered` puts it (physics
off, nodes fixed, box sizes forced), and every edge runs through invisible way-points (size-0
nodes) at the bends of its layered route, so vis-network only draws straight segments between
points we chose. :func:`vis_geometry` is exactly what is handed over (node boxes, and each edge
as the polyline from its source's centre through its way-points to its target's centre, which
is what vis-network draws, clipped at the two boxes); the geometry test checks it with
:func:`dagmath_viz.draw.layout.collisions`, and a browser test checks that vis-network put the
nodes where told (``network.getPositions()``). An edge that would still meet a box it does not
join is drawn dashed and the legend names it.

Safety as in :mod:`dagmath_viz.draw.render`: vis-network is inlined from pyvis's own files
(``cdn_resources="in_line"``), the page is post-processed by
:func:`~dagmath_viz.draw.render.offline_pyvis_page` (no URL, no innerHTML popup), and the step
list is built by ``assets/vis_view.js`` with ``textContent`` from JSON data escaped for a
``<script>`` block.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pyvis.network import Network

from dagmath_viz.draw import layout as geo
from dagmath_viz.draw.render import (
    LEGEND,
    break_href,
    encoding_legend,
    encoding_view,
    graph_data,
    katex_script,
    offline_pyvis_page,
    script_json,
)
from dagmath_viz.schema import Trajectory
from dagmath_viz.text import counted

__all__ = ["VIS_LONG", "VisGeometry", "render_vis_html", "vis_geometry"]

#: Chains longer than this are drawn too, but the legend says the layered drawing is long
#: and that the reading-order view reads better; the geometry test covers chains up to here.
VIS_LONG = 150
#: How far before its target's border an edge's last way-point sits (layout px): the last
#: segment then has room for the arrowhead, and still lies in the empty gap between layers.
APPROACH = 9.0
#: Corner radius of the vis boxes; vis-network grows a box's bounding box by it.
BOX_RADIUS = 4
#: Border widths of the vis boxes (DESIGN.md §3: finals thicker, faults thick red).
_BORDER = {"final_correct": 2, "final_incorrect": 2, "final": 2}
_FAULT = ("#d62728", 3)
_CLEAR = {"background": "rgba(0,0,0,0)", "border": "rgba(0,0,0,0)"}
_ASSETS = Path(__file__).parent / "assets"


@dataclass(frozen=True, slots=True)
class VisGeometry:
    """What the vis view hands to vis-network, as layout geometry.

    ``layout.boxes`` are the nodes' boxes (vis centre = box centre); ``layout.routes[e]`` is
    edge ``e`` of ``graph_data`` as drawn: a polyline from its source's centre through its
    way-points (``waypoints[e]``) to its target's centre. ``untruthful`` lists the edges
    whose drawn path still meets a box it does not join (none, by construction, so far).
    """

    layout: geo.Layout
    waypoints: tuple[tuple[geo.Point, ...], ...]
    untruthful: tuple[int, ...]


def vis_geometry(traj: Trajectory, *, dead_ends: Iterable[int] | None = None) -> VisGeometry:
    """The boxes and drawn edge paths of :func:`render_vis_html` (for the geometry test)."""
    return _geometry(graph_data(traj, dead_ends=dead_ends))


def _geometry(data: dict[str, Any]) -> VisGeometry:
    nodes, edges = data["nodes"], data["edges"]
    pairs = [(e["from"], e["to"]) for e in edges]
    lay = _snapped(geo.layered([n["level"] for n in nodes], pairs, [n["label"] for n in nodes]))
    drawn: list[geo.Route | None] = []
    waypoints: list[tuple[geo.Point, ...]] = []
    for route in lay.routes:
        if route is None:  # layered keeps every node, so every edge has a route
            drawn.append(None)
            waypoints.append(())
            continue
        src, dst = _full(lay.boxes)[route.source], _full(lay.boxes)[route.target]
        via = _waypoints(route.points, dst)
        waypoints.append(via)
        drawn.append(geo.Route(route.source, route.target, "line",
                               ((src.cx, src.cy), *via, (dst.cx, dst.cy))))  # fmt: skip
    drawn_layout = geo.Layout("vis", lay.boxes, tuple(drawn), lay.width, lay.height)
    bad = geo.colliding_routes(drawn_layout)  # edge e is route e
    return VisGeometry(drawn_layout, tuple(waypoints), tuple(bad))


def _full(boxes: tuple[geo.Box | None, ...]) -> tuple[geo.Box, ...]:
    """The boxes of a layout that keeps every node (``layered`` without ``keep``)."""
    if any(b is None for b in boxes):
        raise ValueError("the vis view lays out every node")
    return tuple(b for b in boxes if b is not None)


def _snapped(lay: geo.Layout) -> geo.Layout:
    """Boxes moved (by under half a px) to whole-px centres: vis-network keeps positions as
    given but reports them rounded (``getPositions``), so the browser test compares exactly."""
    boxes = tuple(
        None if b is None else geo.Box(round(b.cx) - b.w / 2, round(b.cy) - b.h / 2, b.w, b.h)
        for b in lay.boxes
    )  # fmt: skip
    return geo.Layout(lay.kind, boxes, lay.routes, lay.width, lay.height)


def _waypoints(points: tuple[geo.Point, ...], dst: geo.Box) -> tuple[geo.Point, ...]:
    """The way-points of one layered route, for straight segments between them.

    Every slanted leg of a layered route crosses an empty gap between two layer bands, from
    one band's edge to the next's, where it may leave a port almost flat and graze the next
    box of the same layer. So each slanted leg gets a vertical stub of :data:`APPROACH` px
    at both ends: it slants only inside the gap, clear of every band. The route's ends, on
    its two boxes' borders, are then left to vis-network (which draws from box centre to the
    first way-point, clipped at the box, inside the port's own box); an end with no stub is
    moved :data:`APPROACH` px out of its box instead, so the arrowhead has room. Points are
    rounded to whole px (as vis-network reports them; the check runs on the rounded points)
    and collinear ones dropped.
    """
    out: list[geo.Point] = [points[0]]
    for (px, py), (qx, qy) in zip(points, points[1:], strict=False):
        if px != qx and py != qy and abs(qy - py) > 2 * APPROACH:
            step = APPROACH if qy > py else -APPROACH
            out += [(px, py + step), (qx, qy - step)]
        out.append((qx, qy))
    if len(out) > 2 and _is_stub(out[0], out[1]):
        out = out[1:]
    if len(out) > 2 and _is_stub(out[-1], out[-2]):
        out = out[:-1]
    else:
        x, y = out[-1]
        out[-1] = (x, y - APPROACH if y <= dst.y + 1e-6 else y + APPROACH)
    pts = [(float(round(x)), float(round(y))) for x, y in out]
    kept: list[geo.Point] = []
    for p in pts:
        while len(kept) >= 2 and _collinear(kept[-2], kept[-1], p):
            kept.pop()
        if not kept or kept[-1] != p:
            kept.append(p)
    return tuple(kept)


def _is_stub(end: geo.Point, nxt: geo.Point) -> bool:
    return end[0] == nxt[0] and abs(abs(end[1] - nxt[1]) - APPROACH) < 1e-9


def _collinear(a: geo.Point, b: geo.Point, c: geo.Point) -> bool:
    """b lies on segment ac (so dropping it changes nothing drawn)."""
    cross = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
    inside = min(a[0], c[0]) - 1e-6 <= b[0] <= max(a[0], c[0]) + 1e-6
    return abs(cross) < 1e-6 and inside and min(a[1], c[1]) - 1e-6 <= b[1] <= max(a[1], c[1]) + 1e-6


def render_vis_html(
    traj: Trajectory,
    *,
    dead_ends: Iterable[int] | None = None,
    final_correct: bool | None = None,
    height_px: int = 600,
    selected_step: Any = None,
    fit_window: bool = False,
    link_steps: bool = False,
    bar_field: str | None = None,
    color_by: str = "kind",
) -> str:
    """The trajectory's layered graph through pyvis, with the step list beside it, linked.

    Positions and edge paths are :func:`vis_geometry`'s; dead ends are orange, the legend is
    the trajectory view's (with the bar and tag rows of
    :func:`~dagmath_viz.draw.render.encoding_legend`). Clicking a node selects its step in the
    list; clicking a step selects and centres its node.

    Args:
        traj, dead_ends, final_correct, height_px, fit_window, link_steps: as for
            :func:`~dagmath_viz.draw.render.render_trajectory_html`.
        selected_step: a step id selected on arrival.
        bar_field, color_by: the step-field encodings (a bar inside each box, a tag stripe).

    Example:
        >>> from dagmath_viz.schema import Step, Trajectory
        >>> t = Trajectory("m", "d", "1", 0, (Step(1, (), "a"), Step(2, (1,), "b")))
        >>> "vis.Network" in render_vis_html(t, final_correct=True)
        True
    """
    data = graph_data(traj, dead_ends=dead_ends, final_correct=final_correct)
    geometry = _geometry(data)
    wanted = None if selected_step is None else str(selected_step)
    selected = next(
        (n["id"] for n in data["nodes"] if wanted is not None and n.get("sid") == wanted), None
    )  # placeholders for missing parents have no "sid": never selected by a step id
    data["view"] = {
        "selected": selected,
        "height": int(height_px),
        "fit_window": bool(fit_window),
        "link_steps": bool(link_steps),
        **encoding_view(data, bar_field, color_by, "text"),
    }
    data["boxes"] = [[b.x, b.y, b.w, b.h] if b else None for b in geometry.layout.boxes]
    data["untruthful"] = list(geometry.untruthful)
    for heavy in ("layouts",):  # the vis view draws its own geometry
        data.pop(heavy, None)
    net = _network(data, geometry, int(height_px))
    page = offline_pyvis_page(
        net.generate_html(), data["n_steps"], LEGEND, encoding_legend(data), _notes(data)
    )
    return _with_steps(page, data)


def _notes(data: dict[str, Any]) -> list[str]:
    notes = ["Drawn by vis-network (pyvis): boxes fixed where the layered layout puts them, "
             "edges through way-points so none passes behind a box it does not join. "
             "Drag to pan, scroll to zoom."]  # fmt: skip
    if data["untruthful"]:
        names = ", ".join(
            data["nodes"][data["edges"][e]["from"]]["label"]
            + "→"
            + data["nodes"][data["edges"][e]["to"]]["label"]
            for e in data["untruthful"][:8]
        )
        notes.append(
            f"{counted(len(data['untruthful']), 'edge')} could not be routed clear of other boxes "
            f"(drawn dashed): {names}. The reading-order view draws them truthfully."
        )
    if data["n_steps"] > VIS_LONG:
        notes.append(
            f"Long chain ({data['n_steps']} steps): the layers run deep; the reading-order "
            "view (Step graph) reads better."
        )
    return notes


def _network(data: dict[str, Any], geometry: VisGeometry, height_px: int) -> Network:
    net = Network(height=f"{height_px}px", width="100%", directed=True,
                  cdn_resources="in_line", heading="")  # fmt: skip
    net.options = _options()
    for node, box in zip(data["nodes"], _full(geometry.layout.boxes), strict=True):
        fill, border = data["colors"][node["kind"]]
        width = _BORDER.get(node["kind"], 1)
        if node["fault"]:
            border, width = _FAULT
        colour = {"background": fill, "border": border,
                  "highlight": {"background": fill, "border": "#1565c0"},
                  "hover": {"background": fill, "border": "#000000"}}  # fmt: skip
        net.add_node(
            int(node["id"]), label=node["label"], title=break_href(node["title"]),
            x=box.cx, y=box.cy, fixed=True, physics=False, shape="box", color=colour,
            borderWidth=width, borderWidthSelected=width + 1,
            widthConstraint={"minimum": box.w, "maximum": box.w},
            heightConstraint={"minimum": box.h, "valign": "middle"},
            shapeProperties={"borderDashes": [4, 3] if node["kind"] == "missing" else False,
                             "borderRadius": BOX_RADIUS},
            kind=node["kind"], dead_end=node["dead_end"], fault=node["fault"],
        )  # fmt: skip
    bad = set(geometry.untruthful)
    for e, (edge, via) in enumerate(zip(data["edges"], geometry.waypoints, strict=True)):
        ids = [f"w{e}.{k}" for k in range(len(via))]
        for wid, (x, y) in zip(ids, via, strict=True):
            net.add_node(wid, label=" ", x=x, y=y, fixed=True, physics=False, shape="dot",
                         size=0.5, borderWidth=0, chosen=False, way=True, color=_CLEAR)  # fmt: skip
        chain = [int(edge["from"]), *ids, int(edge["to"])]
        line = "#d62728" if edge["bad"] else "#8c8c8c"
        title = break_href(
            data["nodes"][edge["from"]]["label"] + " → " + data["nodes"][edge["to"]]["label"]
            + ("\n" + edge["title"] if edge.get("title") else "")
        )  # fmt: skip
        for k, (a, b) in enumerate(zip(chain, chain[1:], strict=False)):
            last = k == len(chain) - 2
            net.edges.append({
                "from": a, "to": b, "color": {"color": line, "highlight": "#1565c0"},
                "arrows": {"to": {"enabled": last, "scaleFactor": 0.55}},
                "dashes": edge["bad"] or e in bad, "title": title, "edge": e,
                "smooth": False, "width": 1.2,
            })  # fmt: skip
    return net


def _options() -> dict[str, Any]:
    return {
        "layout": {"improvedLayout": False, "hierarchical": {"enabled": False}},
        "physics": {"enabled": False},
        "interaction": {
            "hover": True,
            "tooltipDelay": 120,
            "dragNodes": False,
            "selectConnectedEdges": False,
        },  # fmt: skip
        "nodes": {
            "shape": "box",
            "margin": {"top": 0, "right": 0, "bottom": 0, "left": 0},
            "font": {"size": 13, "face": "sans-serif", "color": "#111111"},
        },  # fmt: skip
        "edges": {"smooth": False, "width": 1.2},
    }


@cache
def _asset(name: str) -> str:
    return (_ASSETS / name).read_text(encoding="utf-8")


_CARD = '<div id="mynetwork" class="card-body"></div>'


def _has_math(data: dict[str, Any]) -> bool:
    return any("math" in n for n in data["nodes"]) and bool(katex_script())


def _with_steps(page: str, data: dict[str, Any]) -> str:
    """pyvis's page with our step list beside the network, the data and our script."""
    if page.count(_CARD) != 1 or page.count("</body>") != 1:
        raise RuntimeError("pyvis's page changed: the vis view cannot place its step list")
    page = page.replace(
        _CARD,
        '<div id="dm-vis-main"><div id="mynetwork" class="card-body"></div>'
        '<div id="dm-steps" role="list" aria-label="steps"></div></div>',
    )
    tail = (
        "<style>" + _asset("vis_view.css") + "</style>"
        '<script type="application/json" id="dm-data">'
        + script_json(data)
        + "</script>"
        + ("<script>" + katex_script() + "</script>" if _has_math(data) else "")
        + "<script>"
        + _asset("vis_view.js")
        + "</script>"
    )
    page = page.replace("</body>", tail + "</body>")
    marker = f'<body data-nodes="{int(data["n"])}" data-view="vis">'
    page = page.replace("<body>", marker, 1)
    if re.search(r"https?://", page, re.IGNORECASE):
        raise RuntimeError("the vis view would refer to an external URL")
    if "innerHTML" in _asset("vis_view.js"):
        raise RuntimeError("the vis view's script would use innerHTML")
    return page
