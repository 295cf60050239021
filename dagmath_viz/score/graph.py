"""The step graph of a trajectory: degrees, dead ends, depths, ancestors, statistics.

Nodes are addressed by *position* (0-based index in the order the model wrote the steps),
so a trajectory with faulty ids still has a graph. Only well-formed edges are kept (see
:func:`dagmath_viz.score.validation.validate_steps`); on them every parent is earlier than its
child, so the graph is a DAG in topological order by construction and every algorithm
here is a single linear pass (no networkx on the hot path).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "GraphStats",
    "StepGraph",
    "ancestors",
    "closeness_rate",
    "dead_end_positions",
    "density",
    "depths",
    "graph_stats",
    "in_degrees",
    "out_degrees",
]


@dataclass(frozen=True, slots=True)
class StepGraph:
    """Well-formed edges of one trajectory.

    Attributes:
        ids: the step ids in written order, as read.
        parents: for each position, the sorted positions of its distinct well-formed parents.
    """

    ids: tuple[Any, ...]
    parents: tuple[tuple[int, ...], ...]

    @property
    def n_nodes(self) -> int:
        return len(self.ids)

    @property
    def n_edges(self) -> int:
        return sum(len(p) for p in self.parents)


def dead_end_positions(graph: StepGraph) -> list[int]:
    """Positions of the dead ends: steps other than the last one that nothing cites.

    >>> dead_end_positions(StepGraph(ids=(1, 2, 3), parents=((), (0,), (0,))))
    [1]
    """
    out = out_degrees(graph)
    return [i for i in range(graph.n_nodes - 1) if out[i] == 0]


def ancestors(graph: StepGraph, position: int) -> set[int]:
    """Positions of every step that ``position`` depends on, directly or not."""
    seen: set[int] = set()
    stack = list(graph.parents[position])
    while stack:
        p = stack.pop()
        if p not in seen:
            seen.add(p)
            stack.extend(graph.parents[p])
    return seen


def graph_stats(graph: StepGraph) -> GraphStats:
    """The five statistics of one trajectory's graph."""
    n, e = graph.n_nodes, graph.n_edges
    return GraphStats(
        n_nodes=n,
        n_edges=e,
        density=density(n, e),
        max_in_degree=max(in_degrees(graph), default=0),
        max_out_degree=max(out_degrees(graph), default=0),
    )


@dataclass(frozen=True, slots=True)
class GraphStats:
    """The paper's five per-trajectory statistics (Table 1)."""

    n_nodes: int
    n_edges: int
    density: float
    max_in_degree: int
    max_out_degree: int


def in_degrees(graph: StepGraph) -> list[int]:
    """Number of parents of each step."""
    return [len(p) for p in graph.parents]


def out_degrees(graph: StepGraph) -> list[int]:
    """Number of later steps that cite each step."""
    out = [0] * graph.n_nodes
    for parents in graph.parents:
        for p in parents:
            out[p] += 1
    return out


def closeness_rate(n_nodes: int, n_dead_ends: int) -> float:
    """(N - dead ends) / N; the final step counts as closed. 0.0 for an empty trajectory."""
    if n_nodes == 0:
        return 0.0
    return (n_nodes - n_dead_ends) / n_nodes


def density(n_nodes: int, n_edges: int) -> float:
    """2E / (N(N - 1)), the paper's density; 0 when N < 2."""
    if n_nodes < 2:
        return 0.0
    return 2.0 * n_edges / (n_nodes * (n_nodes - 1))


def depths(graph: StepGraph) -> list[int]:
    """Longest-path depth of each step from the givens (sources have depth 0)."""
    depth = [0] * graph.n_nodes
    for i, parents in enumerate(graph.parents):
        if parents:
            depth[i] = 1 + max(depth[p] for p in parents)
    return depth
