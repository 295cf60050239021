"""The checks each stage of the gold construction applies to a model's answer.

Each function returns the reason an answer is rejected (one line, for the manifest), or
``None`` when it passes; stage 2 also returns the pruned, renumbered graph. Everything is
linear in the number of nodes (plus the size of each node's text), except the SymPy
arithmetic check, which :class:`ArithmeticChecker` runs in a worker process behind a
deadline.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ArithmeticChecker",
    "Graph",
    "arithmetic_fault",
    "arithmetic_faults",
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


def arithmetic_faults(nodes: list[str]) -> str | None:
    """The first false arithmetic claim among ``nodes``, named by node, else ``None``.

    Unbounded on hostile text: call it through :class:`ArithmeticChecker`.
    """
    for i, node in enumerate(nodes, start=1):
        fault = arithmetic_fault(node)
        if fault:
            return f"node {i}: {fault}"
    return None


class ArithmeticChecker:
    """:func:`arithmetic_faults` in a worker process, with a deadline per node list.

    A check that overruns ``deadline`` seconds kills the worker (the next check starts a
    new one) and rejects the nodes: a gold DAG holds only claims that were checked. One
    check runs at a time; ordinary ones take milliseconds.
    """

    #: seconds the worker may take to start (importing SymPy and the LaTeX parser)
    START_SECONDS = 60.0

    def __init__(self, deadline: float = 5.0) -> None:
        self.deadline = deadline
        self._proc: asyncio.subprocess.Process | None = None
        self._lock: asyncio.Lock | None = None

    async def fault(self, nodes: list[str]) -> str | None:
        """Why ``nodes`` are rejected (a false claim, or a check that overran), or None."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._proc is None or self._proc.returncode is not None:
                try:
                    await self._start()
                except (OSError, RuntimeError) as exc:
                    return f"the arithmetic check could not run ({exc})"
            answer = await self._ask(nodes, self.deadline)
            if answer is _OVERRAN:
                await self.close()
                return f"the arithmetic check took longer than {self.deadline:g} s"
            return answer

    async def _start(self) -> None:
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "dagmath_viz.generation.arith_worker", str(os.getpid()),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        if await self._ask([], self.START_SECONDS) is _OVERRAN:
            await self.close()
            raise RuntimeError("the arithmetic-check worker did not start")

    async def _ask(self, nodes: list[str], seconds: float) -> Any:
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(nodes).encode() + b"\n")
            await proc.stdin.drain()
            line = await asyncio.wait_for(proc.stdout.readline(), seconds)
        except (TimeoutError, OSError, ValueError):
            return _OVERRAN
        if not line:  # the worker died (its memory cap, a kill)
            return _OVERRAN
        try:
            return json.loads(line)
        except ValueError:
            return _OVERRAN

    async def close(self) -> None:
        """Stop the worker (the next check starts another)."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.returncode is None:
            proc.kill()
            await proc.wait()


_OVERRAN = object()


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
