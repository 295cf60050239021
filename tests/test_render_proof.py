"""Drawing a logic-program proof: node kinds from the proof's flags, offline HTML."""

from __future__ import annotations

import json
import re

from dagmath_viz.draw.render import render_proof_html
from dagmath_viz.logic.export import GraphNode, ProofGraph


def _node(i, *, axiom=False, goal=False, shortest=True, irrelevant=False, level=0, label="x"):
    return GraphNode(i, label, f"atom{i}", None if axiom else "1a", axiom, goal, shortest,
                     irrelevant, level)  # fmt: skip


# Axioms 1, 2 of the shortest proof; 3 an irrelevant axiom; 4 <- 3 derived from it;
# 5 <- 1 a detour (derived, not in the shortest proof); 6 <- 1, 2 the goal.
GRAPH = ProofGraph(
    nodes=(
        _node(1, axiom=True),
        _node(2, axiom=True),
        _node(3, axiom=True, shortest=False, irrelevant=True),
        _node(4, shortest=False, irrelevant=True, level=1),
        _node(5, shortest=False, level=1),
        _node(6, goal=True, level=1, label="<script>window.top.__pwned=1</script> href"),
    ),
    edges=((3, 4), (1, 5), (1, 6), (2, 6)),
)


def _nodes(html: str) -> list[dict]:
    match = re.search(r"nodes = new vis\.DataSet\((\[.*?\])\);", html, re.S)
    return json.loads(match.group(1))


def test_kinds_follow_the_flags():
    kinds = {n["id"]: n["kind"] for n in _nodes(render_proof_html(GRAPH))}
    assert kinds == {1: "axiom", 2: "axiom", 3: "irrelevant", 4: "irrelevant", 5: "detour",
                     6: "goal"}  # fmt: skip


def test_offline_and_text_stays_data():
    html = render_proof_html(GRAPH)
    assert not re.search(r"https?://", html)
    assert "<script>window.top" not in html  # escaped inside the JSON data
    assert "Irrelevant axiom, or derived from one" in html  # the legend
