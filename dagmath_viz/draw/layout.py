"""Where each step's box goes and which path each edge takes: pure geometry, no drawing.

Two layouts, both truthful by construction (an edge's path touches only the two boxes it
joins) and checked by :func:`collisions`:

- :func:`layered`: the paper's top-down layers by longest-path depth (DESIGN.md §3). An edge
  that skips layers runs through one thin "dummy" slot per skipped layer (Sugiyama's method),
  so inside a layer's band it is a vertical line in its own slot, and it only slants in the
  empty gaps between bands. Best for short trajectories.
- :func:`reading`: one row per step in written order, parents drawn as arcs in a margin left
  of the boxes (an arc diagram). Every arc is a cubic Bézier whose control points lie left of
  the boxes, so by the convex-hull property it never enters a box. Reads well at any length:
  real chains of thought (60–320 steps, mostly sequential with back-references) are long,
  not wide.

Both take node indices ``0..n-1`` and directed edges ``(parent, child)``; they cost time linear
in the nodes plus, for :func:`layered`, the layers each edge skips (used only for short
trajectories, see ``render.LAYERED_MAX``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

__all__ = [
    "Box",
    "Layout",
    "Route",
    "colliding_routes",
    "collisions",
    "layered",
    "reading",
    "route_points",
]

Point = tuple[float, float]

#: Layered layout: box height, vertical distance between layer tops, slot gaps.
NODE_H = 26.0
LAYER_STEP = 78.0
NODE_GAP = 18.0
DUMMY_W = 8.0
#: Reading layout: row pitch, box height, arc margin width and box width.
ROW_STEP = 26.0
ROW_H = 20.0
ARC_MARGIN = 150.0
ROW_W = 460.0


@dataclass(frozen=True, slots=True)
class Box:
    """A node's rectangle: top-left corner, width and height (layout units = CSS px at 100 %)."""

    x: float
    y: float
    w: float
    h: float

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def cy(self) -> float:
        return self.y + self.h / 2


@dataclass(frozen=True, slots=True)
class Route:
    """The drawn path of edge ``source -> target``.

    ``kind`` is ``"line"`` (a polyline through ``points``) or ``"cubic"`` (one cubic Bézier
    with control points ``points``, four of them).
    """

    source: int
    target: int
    kind: str
    points: tuple[Point, ...]

    def svg_path(self) -> str:
        """The SVG ``d`` attribute (numbers only, so it never carries model text)."""
        p = [f"{x:.1f},{y:.1f}" for x, y in self.points]
        if self.kind == "cubic":
            return f"M{p[0]} C{p[1]} {p[2]} {p[3]}"
        return "M" + " L".join(p)


@dataclass(frozen=True, slots=True)
class Layout:
    """Boxes (``None`` for a node left out) and routes (``None`` for an edge left out),
    indexed like the nodes and edges given; ``width``/``height`` bound everything drawn."""

    kind: str
    boxes: tuple[Box | None, ...]
    routes: tuple[Route | None, ...]
    width: float
    height: float


# -- reading order ------------------------------------------------------------------------------


def reading(
    n: int,
    edges: Sequence[tuple[int, int]],
    *,
    keep: Sequence[bool] | None = None,
    order: Sequence[int] | None = None,
) -> Layout:
    """One row per node (in ``order``, default ``0..n-1``), parents as arcs on the left.

    Args:
        n: number of nodes.
        edges: ``(parent, child)`` pairs; either may come first in the order (a reference to a
            later step is drawn the same way, its arrow pointing up).
        keep: nodes to lay out (default all); edges touching a node left out are left out.
        order: the row order of the nodes.

    Example:
        >>> lay = reading(3, [(0, 1), (0, 2)])
        >>> [b.y for b in lay.boxes]
        [0.0, 26.0, 52.0]
    """
    keep = [True] * n if keep is None else list(keep)
    row: dict[int, int] = {}
    for node in range(n) if order is None else order:
        if keep[node]:
            row[node] = len(row)
    boxes: list[Box | None] = [None] * n
    for node, r in row.items():
        boxes[node] = Box(ARC_MARGIN, r * ROW_STEP, ROW_W, ROW_H)
    routes: list[Route | None] = []
    for src, dst in edges:
        a, b = boxes[src], boxes[dst]
        if a is None or b is None:
            routes.append(None)
            continue
        span = abs(row[dst] - row[src])
        # Wider arcs for longer spans, so nested arcs stay apart; all stay in the margin.
        reach = min(ARC_MARGIN - 6.0, 14.0 + 13.0 * math.sqrt(span))
        x0 = ARC_MARGIN
        left = x0 - reach
        ya, yb = a.cy, b.cy
        routes.append(Route(src, dst, "cubic", ((x0, ya), (left, ya), (left, yb), (x0, yb))))
    height = max(len(row) * ROW_STEP - (ROW_STEP - ROW_H), 0.0)
    return Layout("reading", tuple(boxes), tuple(routes), ARC_MARGIN + ROW_W, height)


# -- layered ------------------------------------------------------------------------------------


def _node_width(label: str) -> float:
    return max(40.0, 8.0 * len(label) + 16.0)


def layered(
    levels: Sequence[int],
    edges: Sequence[tuple[int, int]],
    labels: Sequence[str],
    *,
    keep: Sequence[bool] | None = None,
    sweeps: int = 4,
) -> Layout:
    """Top-down layers (``levels[i]`` >= 0 is node i's layer), edges routed between layers.

    Each edge leaves its source's bottom (top, when it points up to a higher layer) at a port
    of its own, passes every layer it skips in a dummy slot, and enters its target's top
    (bottom). An edge within one layer dips into the gap below and comes back up. Within a
    layer, nodes and dummy slots are ordered by a few barycentre sweeps (fewer crossings).

    Example:
        >>> lay = layered([0, 1, 2], [(0, 1), (1, 2), (0, 2)], ["S1", "S2", "S3"])
        >>> [b.y for b in lay.boxes]
        [0.0, 78.0, 156.0]
    """
    n = len(levels)
    keep = [True] * n if keep is None else list(keep)
    layers: dict[int, list[tuple]] = {}
    for node in range(n):
        if keep[node]:
            layers.setdefault(levels[node], []).append(("n", node))
    # Dummy slots, one per skipped layer, listed from the source's side to the target's.
    chains: list[list[tuple] | None] = []
    for e, (src, dst) in enumerate(edges):
        if not (keep[src] and keep[dst]):
            chains.append(None)
            continue
        a, b = levels[src], levels[dst]
        step = 1 if b > a else -1
        chain = [("d", e, lv) for lv in range(a + step, b, step)] if abs(b - a) > 1 else []
        for slot in chain:
            layers.setdefault(slot[2], []).append(slot)
        chains.append(chain)

    neighbours = _neighbours(edges, chains, keep)
    slot_level = {s: lv for lv, slots in layers.items() for s in slots}
    ordered = _order(layers, neighbours, slot_level, sweeps)
    width_of = {("n", i): _node_width(labels[i]) for i in range(n) if keep[i]}
    x = _place(ordered, neighbours, slot_level, width_of)
    left = min((x[s] - width_of.get(s, DUMMY_W) / 2 for lv in ordered.values() for s in lv),
               default=0.0)  # fmt: skip
    boxes: list[Box | None] = [None] * n
    for lv, slots in ordered.items():
        for s in slots:
            x[s] -= left
            if s[0] == "n":
                w = width_of[s]
                boxes[s[1]] = Box(x[s] - w / 2, lv * LAYER_STEP, w, NODE_H)
    routes = _route_layered(edges, chains, boxes, x, levels)
    width = max((b.x + b.w for b in boxes if b), default=0.0)
    width = max([width] + [x[s] + DUMMY_W for lv in ordered.values() for s in lv])
    top = max(ordered, default=0)
    return Layout("layered", tuple(boxes), tuple(routes), width, top * LAYER_STEP + LAYER_STEP)


def _neighbours(edges, chains, keep) -> dict[tuple, list[tuple]]:
    """Slot -> the slots joined to it in adjacent layers (both directions)."""
    nb: dict[tuple, list[tuple]] = {}
    for (src, dst), chain in zip(edges, chains, strict=True):
        if chain is None:
            continue
        path = [("n", src), *chain, ("n", dst)]
        for u, v in zip(path, path[1:], strict=False):
            nb.setdefault(u, []).append(v)
            nb.setdefault(v, []).append(u)
    return nb


def _order(layers, neighbours, slot_level, sweeps) -> dict[int, list[tuple]]:
    """Barycentre ordering, alternating downward and upward sweeps."""
    order = {lv: list(slots) for lv, slots in sorted(layers.items())}
    rank = {s: i for slots in order.values() for i, s in enumerate(slots)}
    levels = sorted(order)
    for sweep in range(sweeps):
        seq = levels[1:] if sweep % 2 == 0 else levels[-2::-1]
        for lv in seq:
            ref = lv - 1 if sweep % 2 == 0 else lv + 1

            def key(s, ref=ref):
                near = [rank[t] for t in neighbours.get(s, ()) if slot_level.get(t) == ref]
                return (sum(near) / len(near) if near else rank[s], rank[s])

            slots = sorted(order[lv], key=key)
            order[lv] = slots
            for i, s in enumerate(slots):
                rank[s] = i
    return order


def _place(ordered, neighbours, slot_level, width_of) -> dict[tuple, float]:
    """x of each slot's centre: packed in order, then pulled toward the barycentre of the
    layer above while keeping order and gaps."""
    x: dict[tuple, float] = {}
    for slots in ordered.values():
        cursor = 0.0
        for s in slots:
            w = width_of.get(s, DUMMY_W)
            x[s] = cursor + w / 2
            cursor += w + NODE_GAP
        shift = (cursor - NODE_GAP) / 2
        for s in slots:
            x[s] -= shift
    levels = sorted(ordered)
    for lv_seq, dv in ((levels[1:], -1), (levels[-2::-1], 1), (levels[1:], -1)):
        for lv in lv_seq:
            slots = ordered[lv]
            want = []
            for s in slots:
                near = [x[t] for t in neighbours.get(s, ()) if slot_level.get(t) == lv + dv]
                want.append(sum(near) / len(near) if near else x[s])
            # Keep order and gaps: push right, then pull back left, then average.
            fwd = list(want)
            for i in range(1, len(slots)):
                gap = (width_of.get(slots[i - 1], DUMMY_W) + width_of.get(slots[i], DUMMY_W)) / 2
                fwd[i] = max(fwd[i], fwd[i - 1] + gap + NODE_GAP)
            back = list(want)
            for i in range(len(slots) - 2, -1, -1):
                gap = (width_of.get(slots[i + 1], DUMMY_W) + width_of.get(slots[i], DUMMY_W)) / 2
                back[i] = min(back[i], back[i + 1] - gap - NODE_GAP)
            for i, s in enumerate(slots):
                x[s] = (fwd[i] + back[i]) / 2
            # Averaging two order-keeping placements keeps the order, and both keep the gaps.
    return x


def _route_layered(edges, chains, boxes, x, levels) -> list[Route | None]:
    # Spread each node's ports over its bottom (out, down) and top (in, down) edge.
    ports: dict[tuple[int, str], list[tuple[float, int]]] = {}
    ends: list[tuple[str, str] | None] = []
    for e, ((src, dst), chain) in enumerate(zip(edges, chains, strict=True)):
        if chain is None:
            ends.append(None)
            continue
        a, b = levels[src], levels[dst]
        side_out, side_in = ("bottom", "top") if b > a else ("top", "bottom")
        if a == b:
            side_out = side_in = "bottom"
        first = x[chain[0]] if chain else boxes[dst].cx
        last = x[chain[-1]] if chain else boxes[src].cx
        ports.setdefault((src, side_out), []).append((first, e))
        ports.setdefault((dst, side_in), []).append((last, e))
        ends.append((side_out, side_in))
    port_x: dict[tuple[int, int, str], float] = {}
    for (node, side), items in ports.items():
        box = boxes[node]
        items.sort()
        k = len(items)
        for i, (_, e) in enumerate(items):
            port_x[(e, node, side)] = box.x + box.w * (i + 1) / (k + 1)
    routes: list[Route | None] = []
    for e, ((src, dst), chain) in enumerate(zip(edges, chains, strict=True)):
        if chain is None:
            routes.append(None)
            continue
        side_out, side_in = ends[e]
        bs, bd = boxes[src], boxes[dst]
        ys = bs.y + bs.h if side_out == "bottom" else bs.y
        yd = bd.y + bd.h if side_in == "bottom" else bd.y
        pts: list[Point] = [(port_x[(e, src, side_out)], ys)]
        down = levels[dst] > levels[src]
        for s in chain:
            top, bottom = s[2] * LAYER_STEP, s[2] * LAYER_STEP + NODE_H
            pts += [(x[s], top), (x[s], bottom)] if down else [(x[s], bottom), (x[s], top)]
        if levels[src] == levels[dst]:
            dip = bs.y + NODE_H + (LAYER_STEP - NODE_H) / 2
            pts += [(pts[0][0], dip), (port_x[(e, dst, side_in)], dip)]
        pts.append((port_x[(e, dst, side_in)], yd))
        routes.append(Route(src, dst, "line", tuple(pts)))
    return routes


# -- geometry check ----------------------------------------------------------------------------


def route_points(route: Route, samples: int = 48) -> list[Point]:
    """The route as a polyline (a Bézier sampled at ``samples + 1`` points)."""
    if route.kind != "cubic":
        return list(route.points)
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = route.points
    return [
        (a * x0 + b * x1 + c * x2 + d * x3, a * y0 + b * y1 + c * y2 + d * y3)
        for a, b, c, d in _bernstein(samples)
    ]


@functools.lru_cache(maxsize=8)
def _bernstein(samples: int) -> tuple[tuple[float, float, float, float], ...]:
    """The cubic Bernstein weights at ``t = i / samples``, i = 0..samples (computed once per
    ``samples``: the truthfulness check samples tens of thousands of curves)."""
    out = []
    for i in range(samples + 1):
        t = i / samples
        out.append(((1 - t) ** 3, 3 * t * (1 - t) ** 2, 3 * t * t * (1 - t), t**3))
    return tuple(out)


def _segment_hits_box(p: Point, q: Point, box: Box, pad: float) -> bool:
    """Liang–Barsky clipping: does segment pq meet the box grown by ``pad``?"""
    x0, y0 = p
    dx, dy = q[0] - x0, q[1] - y0
    lo, hi = 0.0, 1.0
    for d, near, far in (
        (dx, box.x - pad - x0, box.x + box.w + pad - x0),
        (dy, box.y - pad - y0, box.y + box.h + pad - y0),
    ):
        if d == 0:
            if near > 0 or far < 0:
                return False
            continue
        t1, t2 = near / d, far / d
        if t1 > t2:
            t1, t2 = t2, t1
        lo, hi = max(lo, t1), min(hi, t2)
        if lo > hi:
            return False
    return True


def collisions(layout: Layout, pad: float = 1.0) -> list[tuple[int, int, int]]:
    """Every ``(node, source, target)`` where the drawn path of edge source->target meets the
    box of a node it does not join (boxes grown by ``pad`` px). Empty means truthful.

    Uses a row index of boxes by y and bounding-box tests first (the route's, then each
    segment's), so the check stays fast on long layouts and on the tens of thousands of
    layouts the tests check.
    """
    return [(i, r.source, r.target) for _, r, hit in _hits(layout, pad) for i in hit]


def colliding_routes(layout: Layout, pad: float = 1.0) -> list[int]:
    """The indices in ``layout.routes`` of the routes :func:`collisions` finds at fault."""
    return [k for k, _, _ in _hits(layout, pad)]


def _hits(layout: Layout, pad: float) -> Iterator[tuple[int, Route, list[int]]]:
    """Each route that meets a box it does not join: its index, itself, those boxes."""
    cell = 40.0
    grown: dict[int, tuple[float, float, float, float]] = {}
    bands: dict[int, list[int]] = {}
    for i, b in enumerate(layout.boxes):
        if b is None:
            continue
        grown[i] = (b.x - pad, b.y - pad, b.x + b.w + pad, b.y + b.h + pad)
        for k in range(int(grown[i][1] // cell), int(grown[i][3] // cell) + 1):
            bands.setdefault(k, []).append(i)
    for index, route in enumerate(layout.routes):
        if route is None:
            continue
        pts = route_points(route, samples=32)
        source, target = route.source, route.target
        # the boxes the whole route's bounding box meets: a segment (its box inside the
        # route's) can meet no other, and one clear of all of them is skipped at once (an
        # arc of the reading layout comes near the boxes only at its two ends)
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        rxlo, rxhi, rylo, ryhi = min(xs), max(xs), min(ys), max(ys)
        near = {
            i
            for k in range(int(rylo // cell), int(ryhi // cell) + 1)
            for i in bands.get(k, ())
            if i != source
            and i != target
            and not (
                rxhi < grown[i][0] or rxlo > grown[i][2] or ryhi < grown[i][1] or rylo > grown[i][3]
            )
        }
        if not near:
            continue
        nx0 = min(grown[i][0] for i in near)
        nx1 = max(grown[i][2] for i in near)
        ny0 = min(grown[i][1] for i in near)
        ny1 = max(grown[i][3] for i in near)
        hit: set[int] = set()
        for p, q in zip(pts, pts[1:], strict=False):
            xlo, xhi = min(p[0], q[0]), max(p[0], q[0])
            ylo, yhi = min(p[1], q[1]), max(p[1], q[1])
            if xhi < nx0 or xlo > nx1 or yhi < ny0 or ylo > ny1:
                continue
            for k in range(int(ylo // cell), int(yhi // cell) + 1):
                for i in bands.get(k, ()):
                    if i not in near or i in hit:
                        continue
                    x0, y0, x1, y1 = grown[i]
                    if xhi < x0 or xlo > x1 or yhi < y0 or ylo > y1:
                        continue
                    if _segment_hits_box(p, q, layout.boxes[i], pad):
                        hit.add(i)
        if hit:
            yield index, route, sorted(hit)
