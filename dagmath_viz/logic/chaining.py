"""Forward chaining (the efficiency paper's Algorithm 1) with a pluggable agenda policy.

The agenda holds theorems waiting to be used, the chart the theorems proved so far. A popped
theorem enters the chart (it is *proved*), every rule instance it completes pushes its
conclusion, and the search stops when the query's cont is proved. The order of the pops is
the order in which the strategy proves theorems.

Policies:

- ``dfs``: LIFO agenda (depth first). Axioms are pushed in reverse problem order, so the first
  sentence of the problem is popped first.
- ``bfs``: FIFO agenda (breadth first): every axiom, then everything one step away, ...
- ``overlap``: goal-aware priority; the theorem sharing the most with the query pops first
  (one point per query agent name it mentions, one for the query entity), ties first in.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass
from typing import cast

from dagmath_viz.logic.program import Atom, Program, Query, entities_of, names_of
from dagmath_viz.logic.rules import Chart, Hyperedge

__all__ = ["POLICIES", "ChainResult", "forward_chain", "overlap_score"]

POLICIES = ("dfs", "bfs", "overlap")


def overlap_score(atom: Atom, query: Query) -> int:
    """Lexical overlap of an atom with the query: shared agent names plus a shared entity."""
    return len(names_of(atom) & set(query.agent)) + int(query.entity in entities_of(atom))


@dataclass(frozen=True, slots=True)
class ChainResult:
    """What one run of forward chaining did.

    ``order`` lists the theorems in the order they were proved (axioms included, as popped);
    ``edges`` gives the hyperedge each was proved by (None for an axiom); ``goal`` is the
    proved query atom, or None when the agenda ran dry first.
    """

    policy: str
    order: tuple[Atom, ...]
    edges: tuple[Hyperedge | None, ...]
    goal: Atom | None


class _Agenda:
    """A LIFO, FIFO or priority agenda of (atom, hyperedge) entries."""

    def __init__(self, policy: str, query: Query):
        if policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r}; expected one of {POLICIES}")
        self.policy, self.query, self.count = policy, query, 0
        self.items: deque | list = deque() if policy == "bfs" else []

    def push(self, atom: Atom, edge: Hyperedge | None) -> None:
        self.count += 1
        if self.policy == "overlap":
            prio = -overlap_score(atom, self.query)
            heapq.heappush(cast(list, self.items), (prio, self.count, atom, edge))
        else:
            self.items.append((atom, edge))

    def pop(self) -> tuple[Atom, Hyperedge | None]:
        if self.policy == "overlap":
            _, _, atom, edge = heapq.heappop(cast(list, self.items))
            return atom, edge
        if self.policy == "bfs":
            return cast(deque, self.items).popleft()
        return self.items.pop()

    def __bool__(self) -> bool:
        return bool(self.items)


def forward_chain(program: Program, policy: str = "bfs", max_steps: int = 1_000_000) -> ChainResult:
    """Run forward chaining until the query is answered.

    Args:
        program: axioms and query.
        policy: ``"dfs"``, ``"bfs"`` or ``"overlap"``.
        max_steps: safety limit on the number of proved theorems.

    Returns:
        The proof order; its last theorem is the goal when one was found.

    Example:
        >>> from dagmath_viz.logic.program import Cont, Program, Query, comparison
        >>> p = Program((Cont(("Ryan",), "cats", 5), comparison(("Eli",), ("Ryan",), "cats", 3)),
        ...             Query(("Eli",), "cats"))
        >>> forward_chain(p, "bfs").goal
        Cont(agent=('Eli',), entity='cats', quantity=8, time=0)
    """
    agenda = _Agenda(policy, program.query)
    axioms = program.axioms[::-1] if policy == "dfs" else program.axioms
    for x in axioms:
        agenda.push(x, None)
    chart = Chart(program)
    order: list[Atom] = []
    edges: list[Hyperedge | None] = []
    while agenda and len(order) < max_steps:
        atom, edge = agenda.pop()
        if not chart.add(atom):
            continue
        order.append(atom)
        edges.append(edge)
        if program.query.matches(atom):
            return ChainResult(policy, tuple(order), tuple(edges), atom)
        for e in chart.derive(atom):
            if e.head not in chart and chart.conflict(e.head) is None:
                agenda.push(e.head, e)
    return ChainResult(policy, tuple(order), tuple(edges), None)
