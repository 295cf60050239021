"""``Trajectory.to_networkx()`` and our graph statistics against networkx's own (issue 31).

The scorer computes its statistics in one linear pass (``score/graph.py``, no networkx on
the hot path); networkx is the field's reference implementation, so on every real
trajectory of ``../shared/data`` the two must agree.
"""

from __future__ import annotations

import os
from pathlib import Path

import networkx as nx
import pytest

from dagmath_viz.formats.discovery import load_paths
from dagmath_viz.schema import Step, StructureError, Trajectory
from dagmath_viz.score import graph as g
from dagmath_viz.score.validation import validate

SHARED = (Path(__file__).parents[1] / ".." / "shared" / "data").resolve()


def _shared(name: str) -> Path:
    path = SHARED / name
    if not path.is_dir():
        if os.environ.get("DAGMATH_REQUIRE_SHARED") == "1":
            pytest.fail(f"shared data not found at {path}", pytrace=False)
        pytest.skip(f"shared data not found at {path} (set DAGMATH_REQUIRE_SHARED=1 to fail)")
    return path


def _networkx_stats(graph: nx.DiGraph) -> tuple:
    """Our five statistics and dead ends, computed by networkx alone."""
    n = graph.number_of_nodes()
    final = max(graph.nodes, key=lambda node: graph.nodes[node]["position"])
    sinks = sorted(node for node, out in graph.out_degree() if out == 0 and node != final)
    return (
        n,
        graph.number_of_edges(),
        nx.density(graph.to_undirected()) if n > 1 else 0.0,
        max((d for _, d in graph.in_degree()), default=0),
        max((d for _, d in graph.out_degree()), default=0),
        sinks,
    )


def _our_stats(traj: Trajectory) -> tuple:
    graph = validate(traj).graph
    stats = g.graph_stats(graph)
    dead = sorted(graph.ids[p] for p in g.dead_end_positions(graph))
    return (
        stats.n_nodes,
        stats.n_edges,
        stats.density,
        stats.max_in_degree,
        stats.max_out_degree,
        dead,
    )


@pytest.mark.shared
@pytest.mark.parametrize(
    ("folder", "expected"),
    [("dagmath-fewshot", 8), ("thought-anchors", 20)],  # 4 few-shot + 4 gold; 10 x 2
)
def test_our_statistics_equal_networkx_on_every_shared_trajectory(folder: str, expected: int):
    loaded = load_paths([_shared(folder)])
    trajectories = loaded.trajectories
    assert len(trajectories) == expected
    for traj in trajectories:
        assert validate(traj).legal, traj.source  # so every edge is one the scorer keeps
        graph = traj.to_networkx()
        assert nx.is_directed_acyclic_graph(graph), traj.source
        ours, theirs = _our_stats(traj), _networkx_stats(graph)
        assert ours[:2] == theirs[:2] and ours[3:] == theirs[3:], traj.source
        assert ours[2] == pytest.approx(theirs[2]), traj.source


def test_nodes_carry_the_step_fields_and_the_graph_its_identity():
    traj = Trajectory(
        "m",
        "d",
        "007",
        3,
        (
            Step(1, (), "x = 2", "given", ("setup",)),
            Step(2, (1,), "x + 1 = 3", "add one"),
            Step(3, (1, 2, 99), r"\boxed{3}", "so"),  # 99 is no step: no edge, no node
        ),
        source="run.jsonl:line 4",
    )
    graph = traj.to_networkx()
    assert sorted(graph.edges) == [(1, 2), (1, 3), (2, 3)]
    assert list(graph.nodes) == [1, 2, 3]
    assert graph.nodes[1] == {
        "position": 0,
        "text": "x = 2",
        "justification": "given",
        "tags": ("setup",),
        "parents": (),
    }
    assert graph.nodes[3]["parents"] == (1, 2, 99)
    assert graph.graph == {
        "model": "m",
        "dataset": "d",
        "problem_id": "007",
        "sample_id": 3,
        "source": "run.jsonl:line 4",
    }


def test_a_graph_needs_unique_hashable_ids():
    twice = Trajectory("m", "d", "1", 0, (Step(1), Step(1, (1,))), source="f.json:item 1")
    with pytest.raises(StructureError, match=r"f\.json:item 1: step id 1 is used twice"):
        twice.to_networkx()
    odd = Trajectory("m", "d", "1", 0, (Step([1]),), source="f.json")
    with pytest.raises(StructureError, match="cannot name a node"):
        odd.to_networkx()
    # an unhashable parent is a fault the scorer reports; here it is just no edge
    graph = Trajectory("m", "d", "1", 0, (Step(1), Step(2, ([1],)))).to_networkx()
    assert graph.number_of_edges() == 0
