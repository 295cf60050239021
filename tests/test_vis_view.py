"""Tests of dagmath_viz.draw.vis_view: the layered graph through pyvis, kept truthful.

The geometry checked is what the view hands to vis-network (fixed node positions, box sizes,
way-points); tests/app/test_vis_view_browser.py checks that vis-network draws it there.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import pyvis

from dagmath_viz.draw import layout as geo
from dagmath_viz.draw import vis_view
from dagmath_viz.draw.layout import collisions
from dagmath_viz.draw.vis_view import render_vis_html, vis_geometry
from dagmath_viz.formats.discovery import load_paths
from dagmath_viz.schema import Step, Trajectory

try:  # `python -m pytest` puts the repository root on sys.path, plain `pytest` only tests/
    from tests import thought_anchors
    from tests.test_layout import _require_shared
except ImportError:  # pragma: no cover
    import thought_anchors
    from test_layout import _require_shared


REPO = Path(__file__).resolve().parents[1]


def _traj(*steps: tuple) -> Trajectory:
    return Trajectory("m", "d", "1", 0, tuple(Step(s, p, f"step {s}") for s, p in steps))


def _dataset(page: str, name: str) -> list[dict]:
    match = re.search(name + r" = new vis\.DataSet\((\[.*?\])\);", page, re.S)
    return json.loads(match.group(1))


def _view_data(page: str) -> dict:
    raw = re.search(r'<script type="application/json" id="dm-data">(.*?)</script>', page, re.S)
    return json.loads(raw.group(1))


# S1 -> S2, S1 -> S3, S2 -> S4, and S5 cites S1 and S4. Layers (longest path): S1 0; S2, S3
# 1; S4 2; S5 3. S1 and S5 share a column with S3 in layer 1, so a straight line S1 -> S5
# (what vis-network draws between two nodes) runs through S3's box, which it does not join.
AROUND = _traj((1, ()), (2, (1,)), (3, (1,)), (4, (2,)), (5, (1, 4)))


def test_a_straight_line_would_pass_behind_a_box_and_the_way_points_go_round_it():
    g = vis_geometry(AROUND)
    boxes = g.layout.boxes
    assert [b.y for b in boxes] == [0, 78, 78, 156, 234]  # layers 0, 1, 1, 2, 3 (LAYER_STEP)
    s1, s3, s5 = boxes[0], boxes[2], boxes[4]
    straight = geo.Route(0, 4, "line", ((s1.cx, s1.cy), (s5.cx, s5.cy)))
    assert collisions(geo.Layout("t", boxes, (straight,), 0, 0)) == [(2, 0, 4)]  # behind S3
    route = next(r for r in g.layout.routes if (r.source, r.target) == (0, 4))
    assert route.points[0] == (s1.cx, s1.cy) and route.points[-1] == (s5.cx, s5.cy)
    # Across layer 1's band (y 78..104) the route runs right of S3 (which ends at x 98), in
    # its own slot beside it: every segment that meets the band is there.
    legs = [(p, q) for p, q in zip(route.points, route.points[1:], strict=False)
            if min(p[1], q[1]) <= s3.y + s3.h and max(p[1], q[1]) >= s3.y]  # fmt: skip
    assert legs and all(min(p[0], q[0]) > s3.x + s3.w for p, q in legs)
    assert collisions(g.layout) == [] and g.untruthful == ()


def test_the_page_hands_vis_network_exactly_that_geometry():
    page = render_vis_html(AROUND, final_correct=True)
    g = vis_geometry(AROUND)
    nodes = _dataset(page, "nodes")
    steps = [n for n in nodes if isinstance(n["id"], int)]
    ways = [n for n in nodes if not isinstance(n["id"], int)]
    assert len(steps) == 5
    for n in steps:
        box = g.layout.boxes[n["id"]]
        assert (n["x"], n["y"]) == (box.cx, box.cy) and n["fixed"] and n["physics"] is False
        assert n["widthConstraint"] == {"minimum": box.w, "maximum": box.w}
        assert n["heightConstraint"]["minimum"] == box.h
        assert float(n["x"]).is_integer()  # getPositions() reports whole px
    assert len(ways) == sum(len(w) for w in g.waypoints)
    assert all(n["size"] < 1 and n["color"]["border"] == "rgba(0,0,0,0)" for n in ways)
    # Every edge is a chain of straight segments; only its last segment has the arrow.
    segments = _dataset(page, "edges")
    assert len(segments) == sum(len(w) + 1 for w in g.waypoints)
    assert all(s["smooth"] is False for s in segments)
    arrows = [s for s in segments if s["arrows"]["to"]["enabled"]]
    assert sorted((a["to"], a["edge"]) for a in arrows) == [(1, 0), (2, 1), (3, 2), (4, 3), (4, 4)]
    assert '"physics": {"enabled": false}' in page


def test_dead_ends_are_orange_and_the_final_step_green():
    page = render_vis_html(AROUND, final_correct=True)
    fills = {n["id"]: n["color"]["background"] for n in _dataset(page, "nodes")}
    assert fills[2] == "#f28e2b"  # S3: nothing cites it
    assert fills[4] == "#59a14f"  # S5, final, correct
    assert [n["label"] for n in _dataset(page, "nodes") if n.get("dead_end")] == ["S3"]
    assert "Dead end (nothing uses it)" in page  # the same legend as the step graph


def test_offline_vis_network_inlined_from_pyvis_and_no_url():
    page = render_vis_html(AROUND)
    lib = Path(pyvis.__file__).parent / "lib" / "vis-9.1.2" / "vis-network.min.js"
    vis_js = lib.read_text(encoding="utf-8")
    middle = vis_js[len(vis_js) // 2 : len(vis_js) // 2 + 300]
    assert "http" not in middle and middle in page  # pyvis's own copy, inlined
    assert not re.search(r"https?://", page, re.I)
    assert "<script src" not in page and "<link" not in page


HOSTILE = "</script><script>window.top.__pwned=1</script> <a href=javascript:alert(1)>x</a> $5"


def test_model_text_stays_data():
    bad = Trajectory("m", "d", "1", 0, (Step(1, (), HOSTILE), Step(2, (1,), "ok " + HOSTILE)))
    page = render_vis_html(bad)
    assert "<script>window.top" not in page
    assert "popup.innerHTML" not in page  # pyvis's unsafe popup was not chosen
    titles = [n["title"] for n in _dataset(page, "nodes") if isinstance(n["id"], int)]
    assert all("href" not in t and "h\u200bref" in t for t in titles)
    # The step list gets the exact text (the script puts it with textContent only).
    assert _view_data(page)["nodes"][0]["text"] == HOSTILE
    assert "innerHTML" not in vis_view._asset("vis_view.js")


def test_an_edge_that_cannot_be_routed_is_dashed_and_named(monkeypatch):
    # Without way-points every edge is the straight centre-to-centre line vis-network draws.
    monkeypatch.setattr(vis_view, "_waypoints", lambda points, dst: ())
    g = vis_geometry(AROUND)
    edges = [(r.source, r.target) for r in g.layout.routes]
    assert [edges[e] for e in g.untruthful] == [(0, 4)]
    page = render_vis_html(AROUND)
    dashed = [s for s in _dataset(page, "edges") if s["dashes"]]
    assert [(s["from"], s["to"]) for s in dashed] == [(0, 4)]
    assert "1 edge could not be routed clear of other boxes (drawn dashed): S1→S5" in page


def test_a_long_chain_says_the_reading_order_reads_better():
    chain = _traj(*((i, (i - 1,) if i > 1 else ()) for i in range(1, vis_view.VIS_LONG + 2)))
    assert "the reading-order view (Step graph) reads better" in render_vis_html(chain)
    short = _traj(*((i, (i - 1,) if i > 1 else ()) for i in range(1, vis_view.VIS_LONG + 1)))
    assert "reads better" not in render_vis_html(short)


def test_selection_and_field_encodings_reach_the_view():
    steps = (Step(1, (), "a", fields=(("importance", 0.5),)),
             Step(2, (1,), "b", tags=("check",), fields=(("importance", -2.0),)))  # fmt: skip
    traj = Trajectory("m", "d", "1", 0, steps)
    page = render_vis_html(traj, selected_step=2, bar_field="importance", color_by="tag")
    view = _view_data(page)["view"]
    assert view["selected"] == 1 and view["bar"] == {"field": "importance", "absmax": 2.0}
    assert view["tag_stripe"] is True
    assert "Bar: importance, length |value| / 2 (the largest)" in page
    assert "Tag: check (1)" in page


# -- every shared Thought Anchors chain of up to 150 steps ----------------------------------


def _shared_chains(limit: int) -> list[Trajectory]:
    _require_shared(thought_anchors.ROOT)
    trajs = [thought_anchors.trajectory(p) for p in thought_anchors.files()]
    return [t for t in trajs if len(t.steps) <= limit]


def test_every_shared_chain_up_to_150_steps_has_no_edge_behind_a_box():
    chains = _shared_chains(vis_view.VIS_LONG)
    assert len(chains) == 12  # of the 20 shared chains (60-251 steps), these have <= 150
    for traj in chains:
        g = vis_geometry(traj)
        assert collisions(g.layout) == [], traj.source
        assert g.untruthful == ()
        # Every depends_on entry is drawn, once, from its centre to its child's.
        where = {s.step_id: i for i, s in enumerate(traj.steps)}
        declared = sorted((where[p], i) for i, s in enumerate(traj.steps) for p in s.parents)
        assert sorted((r.source, r.target) for r in g.layout.routes) == declared
        for r in g.layout.routes:
            a, b = g.layout.boxes[r.source], g.layout.boxes[r.target]
            assert r.points[0] == (a.cx, a.cy) and r.points[-1] == (b.cx, b.cy)


def test_shared_chains_dead_ends_are_the_uncited_steps():
    for traj in _shared_chains(vis_view.VIS_LONG):
        cited = {p for s in traj.steps for p in s.parents}
        # DEFINITIONS: a dead end is a step other than the final one with out-degree 0.
        expected = [f"S{s.step_id}" for s in traj.steps[:-1] if s.step_id not in cited]
        nodes = _dataset(render_vis_html(traj), "nodes")
        orange = [n["label"] for n in nodes if n.get("color", {}).get("background") == "#f28e2b"]
        assert orange == expected, traj.source


@pytest.mark.parametrize("name", ["vis_view.js", "vis_view.css"])
def test_assets_ship_with_the_package(name):
    assert (Path(vis_view.__file__).parent / "assets" / name).is_file()


def _check(traj: Trajectory) -> None:
    g = vis_geometry(traj)
    assert collisions(g.layout) == [] and g.untruthful == (), traj.source


def test_wide_proof_layers_do_not_graze_a_neighbour():
    # 128 steps over 6 layers, 4000 px wide: edges leave their ports almost flat. Before the
    # stubs at both ends of each slanted leg, 23 of them passed within 1 px of a box
    # in their start or end layer (S9 -> S41 under S6's box, the first).
    path = REPO / "sample_data" / "runs" / "gsm-bfs" / "gsm-logic" / "problem_1_all_samples.json"
    traj = load_paths([path]).trajectories[0]
    assert len(traj.steps) == 128
    g = vis_geometry(traj)
    assert g.layout.width > 3000
    # every slanted leg lies inside one gap between layer bands, clear of every band
    for route in g.layout.routes:
        for p, q in zip(route.points[1:-1], route.points[2:-1], strict=False):
            if p[0] != q[0] and p[1] != q[1]:
                lo, hi = sorted((p[1], q[1]))
                band = int(lo // geo.LAYER_STEP) * geo.LAYER_STEP
                assert band + geo.NODE_H < lo and hi < band + geo.LAYER_STEP, (p, q)
    _check(traj)


def test_every_shared_trajectory_is_drawn_truthfully_by_the_vis_view():
    _require_shared(thought_anchors.ROOT)
    trajs = load_paths([REPO / ".." / "shared" / "data"]).trajectories
    assert len(trajs) >= 28  # 20 Thought Anchors chains, 8 few-shot solutions
    for traj in trajs:
        _check(traj)


@pytest.mark.slow
def test_every_bundled_trajectory_is_drawn_truthfully_by_the_vis_view():
    trajs = load_paths([REPO / "sample_data" / "runs"]).trajectories
    assert len(trajs) > 4000
    for traj in trajs:
        _check(traj)


def test_nothing_is_selected_unless_asked_even_with_a_placeholder():
    # S2 cites step 42, which does not exist: a "missing 42" placeholder node (no step id)
    faulty = _traj((1, ()), (2, (1, 42)), (3, (2,)))
    view = _view_data(render_vis_html(faulty))["view"]
    assert view["selected"] is None
    assert _view_data(render_vis_html(faulty, selected_step="3"))["view"]["selected"] == 2
    assert _view_data(render_vis_html(faulty, selected_step="42"))["view"]["selected"] is None


def _segment_meets_box(p, q, box) -> bool:
    """Whether segment p-q enters the open rectangle ``box`` (x0, y0, x1, y1): Liang-Barsky
    clipping, written here apart from draw/layout.py's own check."""
    (x0, y0, x1, y1), t0, t1 = box, 0.0, 1.0
    dx, dy = q[0] - p[0], q[1] - p[1]
    for step, room in ((-dx, p[0] - x0), (dx, x1 - p[0]), (-dy, p[1] - y0), (dy, y1 - p[1])):
        if step == 0:
            if room <= 0:
                return False
            continue
        t = room / step
        if step < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 >= t1:
            return False
    return True


def test_the_segments_handed_to_vis_network_pass_behind_no_other_box():
    """Read back from the page itself (the nodes' and segments' DataSets vis-network is
    given): on every shared chain of up to 150 steps, no segment of an edge enters the box
    of a step it does not join, and every drawn dead end is orange."""
    for traj in _shared_chains(vis_view.VIS_LONG):
        page = render_vis_html(traj)
        nodes = {n["id"]: n for n in _dataset(page, "nodes")}
        boxes = {
            i: (n["x"] - n["widthConstraint"]["minimum"] / 2,
                n["y"] - n["heightConstraint"]["minimum"] / 2,
                n["x"] + n["widthConstraint"]["minimum"] / 2,
                n["y"] + n["heightConstraint"]["minimum"] / 2)
            for i, n in nodes.items() if isinstance(i, int)
        }  # fmt: skip
        segments = _dataset(page, "edges")
        ends: dict[int, set] = {}
        for s in segments:  # an edge's two steps: the step ends of its segments
            ends.setdefault(s["edge"], set()).update(
                e for e in (s["from"], s["to"]) if isinstance(e, int)
            )
        assert all(len(v) == 2 for v in ends.values()), traj.source
        # every depends_on entry is one edge here
        assert len(ends) == sum(len(s.parents) for s in traj.steps), traj.source
        for s in segments:
            p = (nodes[s["from"]]["x"], nodes[s["from"]]["y"])
            q = (nodes[s["to"]]["x"], nodes[s["to"]]["y"])
            for i, box in boxes.items():
                if i not in ends[s["edge"]]:
                    assert not _segment_meets_box(p, q, box), (traj.source, s["title"], i)
        cited = {p for s in traj.steps for p in s.parents}
        uncited = {i for i, s in enumerate(traj.steps[:-1]) if s.step_id not in cited}
        orange = {i for i, n in nodes.items() if isinstance(i, int)
                  and n["color"]["background"] == "#f28e2b"}  # fmt: skip
        assert orange == uncited, traj.source
