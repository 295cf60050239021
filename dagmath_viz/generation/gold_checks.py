"""The checks each stage of the gold construction applies to a model's answer.

Each function returns the reason an answer is rejected (one line, for the manifest), or
``None`` when it passes; stage 2 also returns the pruned, renumbered graph. Everything is
linear in the number of nodes (plus the size of each node's text).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Graph",
    "arithmetic_fault",
    "check_edges",
    "check_nodes_shape",
    "check_parents",
    "novel_numbers",
]

MAX_NODES = 200
_MATH = re.compile(r"\$\$(.+?)\$\$|\$([^$]+?)\$", re.S)
# relations other than '=' (and anything we would rather not evaluate) leave a segment unchecked
_SKIP = re.compile(r"\\(?:ne|neq|le|leq|ge|geq|approx|equiv|pmod|mod|lt|gt|sim|cong)\b|[<>^!]")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?")
_STEP_REF = re.compile(r"\b[Ss]teps?\s+\d+(?:\s*(?:,|and|&)\s*\d+)*")
#: Longest side of an equation handed to SymPy.
_MAX_SIDE = 120


def _brief(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:60] + "..."


def check_nodes_shape(value: Any) -> str | None:
    """Stage 1 envelope: ``{"nodes": [non-empty strings]}``."""
    nodes = value.get("nodes") if isinstance(value, dict) else None
    if not isinstance(nodes, list) or not nodes:
        return "no non-empty 'nodes' list"
    if len(nodes) > MAX_NODES:
        return f"{len(nodes)} nodes, more than {MAX_NODES}"
    for i, node in enumerate(nodes, start=1):
        if not isinstance(node, str) or not node.strip():
            return f"node {i} is not a non-empty string"
    return None


def _numeric(latex: str) -> Any:
    """A SymPy number for a LaTeX side, or ``None`` when it has symbols or does not parse."""
    if len(latex) > _MAX_SIDE or not latex.strip():
        return None
    from latex2sympy2_extended import latex2sympy

    try:
        expr = latex2sympy(latex)
    except Exception:  # noqa: BLE001 - any parse failure means "not arithmetic we check"
        return None
    if getattr(expr, "free_symbols", {1}) or not getattr(expr, "is_number", False):
        return None
    return expr


def arithmetic_fault(node: str) -> str | None:
    """Why an arithmetic claim in ``node`` is false (``$6 \\times 4 = 25$``), else ``None``.

    Only ``=`` chains whose every side is a plain number expression are checked (SymPy,
    via the LaTeX parser math-verify ships); anything with a variable, an inequality, a
    power or a factorial is left alone rather than guessed at.

    >>> arithmetic_fault(r"The area is $6 \\times 4 = 24$.") is None
    True
    >>> arithmetic_fault(r"So $2 \\times 24 = 46$.")
    '$2 \\\\times 24 = 46$ is false'
    """
    import sympy

    for match in _MATH.finditer(node):
        segment = match.group(1) if match.group(1) is not None else match.group(2)
        if "=" not in segment or _SKIP.search(segment):
            continue
        sides = [_numeric(side) for side in segment.split("=")]
        if len(sides) < 2 or any(side is None for side in sides):
            continue
        for left, right in zip(sides, sides[1:], strict=False):
            difference = sympy.N(left - right, 30)
            if not difference.is_number or abs(complex(difference)) > 1e-9:
                return f"${segment.strip()}$ is false"
    return None


@dataclass(frozen=True, slots=True)
class Graph:
    """Stage 2's result: kept node texts (renumbered 1..n) and their parents."""

    nodes: tuple[str, ...]
    parents: tuple[tuple[int, ...] | None, ...]
    pruned: tuple[int, ...]  # original ids of the nodes dropped as non-contributing


def check_parents(nodes: list[str], value: Any) -> tuple[Graph | None, str | None]:
    """Validate stage 2's parent lists, then prune what does not lead to the final node.

    Enforced: one entry per node; parents are existing, earlier nodes (so the graph is
    acyclic), listed once; the final node has parents (unless it is the only node).
    Nodes that are not ancestors of the final node are removed and the rest renumbered,
    so the result is closed relative to the sink.
    """
    entries = value.get("parents") if isinstance(value, dict) else None
    if not isinstance(entries, list):
        return None, "no 'parents' list"
    n = len(nodes)
    parents: dict[int, tuple[int, ...]] = {}
    for entry in entries:
        sid = entry.get("step_id") if isinstance(entry, dict) else None
        if type(sid) is not int or not 1 <= sid <= n:
            return None, f"entry {_brief(entry)} does not name a node 1..{n}"
        if sid in parents:
            return None, f"node {sid} has two parent lists"
        raw = entry.get("direct_dependent_steps")
        raw = [] if raw is None else raw
        if not isinstance(raw, list) or any(type(p) is not int for p in raw):
            return None, f"node {sid}: parents must be a list of node ids or null"
        if len(set(raw)) != len(raw):
            return None, f"node {sid}: a parent is listed twice"
        late = [p for p in raw if not 1 <= p < sid]
        if late:
            return None, f"node {sid}: parent {late[0]} is not an earlier node"
        parents[sid] = tuple(sorted(raw))
    missing = [i for i in range(1, n + 1) if i not in parents]
    if missing:
        return None, f"no parent list for node {missing[0]}"
    if n > 1 and not parents[n]:
        return None, "the final node depends on nothing"
    keep = {n}
    for sid in range(n, 0, -1):  # parents precede children: one backward sweep
        if sid in keep:
            keep.update(parents[sid])
    order = sorted(keep)
    new_id = {old: new for new, old in enumerate(order, start=1)}
    return (
        Graph(
            nodes=tuple(nodes[old - 1] for old in order),
            parents=tuple(
                tuple(new_id[p] for p in parents[old]) if parents[old] else None for old in order
            ),
            pruned=tuple(i for i in range(1, n + 1) if i not in keep),
        ),
        None,
    )


def novel_numbers(edge: str, allowed_text: str) -> list[str]:
    """Numbers in ``edge`` that appear nowhere in ``allowed_text`` (step references and
    the digits 0-9 aside): a justification should only connect facts already stated.

    >>> novel_numbers("By Step 3, 6 times 4 is 24; then add 17.", "area $6 \\\\times 4 = 24$")
    ['17']
    """
    known = set(_NUMBER.findall(allowed_text))
    text = _STEP_REF.sub(" ", edge)
    found = []
    for number in _NUMBER.findall(text):
        if len(number) == 1 or number in known or number in found:
            continue
        found.append(number)
    return found


def check_edges(problem_text: str, graph: Graph, value: Any) -> tuple[list[str] | None, str | None]:
    """Stage 3: one non-empty justification per node that adds no new numbers.

    Returns the edges in node order, or the reason for rejecting them.
    """
    entries = value.get("edges") if isinstance(value, dict) else None
    if not isinstance(entries, list):
        return None, "no 'edges' list"
    n = len(graph.nodes)
    edges: dict[int, str] = {}
    for entry in entries:
        sid = entry.get("step_id") if isinstance(entry, dict) else None
        text = entry.get("edge") if isinstance(entry, dict) else None
        if type(sid) is not int or not 1 <= sid <= n:
            return None, f"entry {_brief(entry)} does not name a node 1..{n}"
        if not isinstance(text, str) or not text.strip():
            return None, f"node {sid}: the justification is empty"
        edges[sid] = text.strip()
    missing = [i for i in range(1, n + 1) if i not in edges]
    if missing:
        return None, f"no justification for node {missing[0]}"
    for sid in range(1, n + 1):
        parents = graph.parents[sid - 1] or ()
        allowed = " ".join(
            [graph.nodes[sid - 1], *(graph.nodes[p - 1] for p in parents)]
            + ([problem_text] if not parents else [])
        )
        new = novel_numbers(edges[sid], allowed)
        if new:
            return None, (
                f"node {sid}: the justification introduces {', '.join(new[:3])}, "
                "found in neither the node nor its parents"
            )
    return [edges[i] for i in range(1, n + 1)], None
