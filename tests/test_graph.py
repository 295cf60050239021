"""graph.py: degrees, dead ends, closeness rate, density, depths, ancestors (DEFINITIONS §1, §3).

Graphs are written as parent lists by position (0-based), the form ``StepGraph`` stores.
"""

from __future__ import annotations

import pytest

from dagmath_viz.score import graph as g
from dagmath_viz.score.graph import StepGraph


def make(*parents: tuple[int, ...]) -> StepGraph:
    """A graph whose step ids are 1..N and whose position i has the given parent positions."""
    return StepGraph(ids=tuple(range(1, len(parents) + 1)), parents=tuple(parents))


EMPTY = make()
ONE = make(())
CHAIN = make((), (0,), (1,))  # 1 -> 2 -> 3
# 1 and 2 are givens, 3 uses 1, 4 uses 1 and 3 (2 is a dead end)
WITH_DEAD_END = make((), (), (0,), (0, 2))
# diamond: 1 -> 2, 1 -> 3, 2 -> 4, 3 -> 4
DIAMOND = make((), (0,), (0,), (1, 2))


# --------------------------------------------------------------------------- degrees

DEGREE_CASES = [
    # graph, in-degrees, out-degrees
    pytest.param(EMPTY, [], [], id="empty"),
    pytest.param(ONE, [0], [0], id="one-node"),
    pytest.param(CHAIN, [0, 1, 1], [1, 1, 0], id="chain"),
    # 1 is cited by 3 and 4; 3 by 4
    pytest.param(WITH_DEAD_END, [0, 0, 1, 2], [2, 0, 1, 0], id="dead-end"),
    pytest.param(DIAMOND, [0, 1, 1, 2], [2, 1, 1, 0], id="diamond"),
]


@pytest.mark.parametrize(("graph", "ins", "outs"), DEGREE_CASES)
def test_degrees(graph: StepGraph, ins: list[int], outs: list[int]) -> None:
    assert g.in_degrees(graph) == ins
    assert g.out_degrees(graph) == outs
    # every edge is counted once on each side
    assert sum(ins) == sum(outs) == graph.n_edges


# --------------------------------------------------------------------------- dead ends

DEAD_END_CASES = [
    # graph, dead-end positions
    pytest.param(EMPTY, [], id="empty"),
    pytest.param(ONE, [], id="one-node-is-final"),
    pytest.param(CHAIN, [], id="chain-closed"),
    pytest.param(WITH_DEAD_END, [1], id="uncited-given"),
    pytest.param(DIAMOND, [], id="diamond-closed"),
    # three givens, nothing cites anything: all but the final step are dead ends
    pytest.param(make((), (), ()), [0, 1], id="no-edges"),
    # the final step cites only step 1: steps 2 and 3 are dead ends
    pytest.param(make((), (0,), (1,), (0,)), [2], id="final-skips-chain-end"),
]


@pytest.mark.parametrize(("graph", "expected"), DEAD_END_CASES)
def test_dead_end_positions(graph: StepGraph, expected: list[int]) -> None:
    assert g.dead_end_positions(graph) == expected


def test_final_step_never_counts_as_dead_end() -> None:
    # the final step has out-degree 0 by construction; the definition exempts it
    graph = make((), (0,))
    assert g.out_degrees(graph)[-1] == 0
    assert g.dead_end_positions(graph) == []


CLOSENESS_CASES = [
    # N, dead ends, r = (N - dead ends) / N
    pytest.param(0, 0, 0.0, id="empty-is-0"),
    pytest.param(1, 0, 1.0, id="single-step"),
    pytest.param(10, 1, 0.9, id="10-steps-1-dead"),  # (10 - 1) / 10
    pytest.param(7, 1, 6 / 7, id="7-steps-1-dead"),  # (7 - 1) / 7
    pytest.param(4, 3, 0.25, id="4-steps-3-dead"),  # (4 - 3) / 4
]


@pytest.mark.parametrize(("n", "dead", "expected"), CLOSENESS_CASES)
def test_closeness_rate(n: int, dead: int, expected: float) -> None:
    assert g.closeness_rate(n, dead) == pytest.approx(expected)


# --------------------------------------------------------------------------- density, stats

DENSITY_CASES = [
    # N, E, 2E / (N (N - 1)), 0 when N < 2
    pytest.param(0, 0, 0.0, id="empty"),
    pytest.param(1, 0, 0.0, id="one-node"),
    pytest.param(2, 1, 1.0, id="two-nodes-one-edge"),  # 2*1 / (2*1)
    pytest.param(4, 3, 0.5, id="chain-of-4"),  # 2*3 / (4*3)
    pytest.param(9, 10, 20 / 72, id="log-count-perfect"),  # 2*10 / (9*8)
    pytest.param(22, 30, 60 / 462, id="fewshot-1"),  # 2*30 / (22*21)
]


@pytest.mark.parametrize(("n", "e", "expected"), DENSITY_CASES)
def test_density(n: int, e: int, expected: float) -> None:
    assert g.density(n, e) == pytest.approx(expected)


STATS_CASES = [
    # graph, (N, E, density, max in, max out)
    pytest.param(EMPTY, (0, 0, 0.0, 0, 0), id="empty"),
    pytest.param(ONE, (1, 0, 0.0, 0, 0), id="one-node"),
    pytest.param(CHAIN, (3, 2, 4 / 6, 1, 1), id="chain"),  # 2*2 / (3*2)
    pytest.param(DIAMOND, (4, 4, 8 / 12, 2, 2), id="diamond"),  # 2*4 / (4*3)
]


@pytest.mark.parametrize(("graph", "expected"), STATS_CASES)
def test_graph_stats(graph: StepGraph, expected: tuple) -> None:
    stats = g.graph_stats(graph)
    n, e, dens, max_in, max_out = expected
    assert (stats.n_nodes, stats.n_edges) == (n, e)
    assert stats.density == pytest.approx(dens)
    assert (stats.max_in_degree, stats.max_out_degree) == (max_in, max_out)


# --------------------------------------------------------------------------- depth, ancestors

DEPTH_CASES = [
    pytest.param(EMPTY, [], id="empty"),
    pytest.param(ONE, [0], id="one-node"),
    pytest.param(CHAIN, [0, 1, 2], id="chain"),
    # longest path: 4 sits below 3, which sits below 1
    pytest.param(WITH_DEAD_END, [0, 0, 1, 2], id="longest-path-not-shortest"),
    pytest.param(DIAMOND, [0, 1, 1, 2], id="diamond"),
]


@pytest.mark.parametrize(("graph", "expected"), DEPTH_CASES)
def test_depths(graph: StepGraph, expected: list[int]) -> None:
    assert g.depths(graph) == expected


ANCESTOR_CASES = [
    pytest.param(ONE, 0, set(), id="one-node"),
    pytest.param(CHAIN, 2, {0, 1}, id="chain-transitive"),
    pytest.param(WITH_DEAD_END, 3, {0, 2}, id="dead-end-not-ancestor"),
    pytest.param(DIAMOND, 3, {0, 1, 2}, id="diamond-counted-once"),
    pytest.param(DIAMOND, 0, set(), id="source"),
]


@pytest.mark.parametrize(("graph", "position", "expected"), ANCESTOR_CASES)
def test_ancestors(graph: StepGraph, position: int, expected: set[int]) -> None:
    assert g.ancestors(graph, position) == expected
