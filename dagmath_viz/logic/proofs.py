"""Proofs as hyperpaths, and the exact shortest proof (fewest vertices) of a program's goal.

A proof is a set of theorems in which every non-axiom has one chosen hyperedge whose premises
are in the set, without cycles. Its size is its number of vertices (axioms included). Axioms
are always leaves (our convention): re-deriving a given fact never makes a proof smaller.

:func:`shortest_proofs` is a branch and bound over the goal's ancestors in the closure's
hypergraph: it expands unjustified vertices depth first, tries hyperedges cheapest first (by
a greedy upper bound) and prunes a branch once it has more vertices than the best proof found.
It returns every minimum proof (up to ``limit``), so uniqueness can be checked.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from dagmath_viz.logic.program import Atom, Program, atom_key
from dagmath_viz.logic.rules import Closure, Hyperedge, closure

__all__ = [
    "Proof",
    "ProofStep",
    "certify_unique_shortest",
    "proof_from_edges",
    "shortest_proof",
    "shortest_proofs",
]


@dataclass(frozen=True, slots=True)
class ProofStep:
    """One vertex of a proof: a theorem, the rule that gave it and its premises.

    Axioms have ``rule=None`` and no premises.
    """

    theorem: Atom
    rule: str | None = None
    premises: tuple[Atom, ...] = ()


@dataclass(frozen=True, slots=True)
class Proof:
    """A proof in topological order (premises before conclusions); the goal is last."""

    steps: tuple[ProofStep, ...]

    @property
    def goal(self) -> Atom:
        """The last step's theorem."""
        return self.steps[-1].theorem

    @property
    def theorems(self) -> tuple[Atom, ...]:
        """The vertices, in order."""
        return tuple(s.theorem for s in self.steps)

    @property
    def axioms(self) -> tuple[Atom, ...]:
        """The leaves, in order."""
        return tuple(s.theorem for s in self.steps if s.rule is None)

    @property
    def size(self) -> int:
        """Number of vertices."""
        return len(self.steps)

    @property
    def depth(self) -> int:
        """Rule applications on the longest path from the goal down to an axiom."""
        level: dict[Atom, int] = {}
        for s in self.steps:
            level[s.theorem] = 1 + max((level[p] for p in s.premises), default=-1)
        return level[self.goal] if self.steps else 0

    @property
    def signature(self) -> frozenset[tuple[Atom, str | None, tuple[Atom, ...]]]:
        """The hyperpath as a set, for comparing proofs whatever their step order."""
        return frozenset((s.theorem, s.rule, s.premises) for s in self.steps)


def proof_from_edges(goal: Atom, chosen: Mapping[Atom, Hyperedge | None]) -> Proof:
    """Order a hyperpath (a justification per vertex) as a post-order from the goal."""
    steps: list[ProofStep] = []
    done: set[Atom] = set()

    def visit(x: Atom) -> None:
        if x in done:
            return
        done.add(x)
        e = chosen[x]
        for p in e.tail if e else ():
            visit(p)
        steps.append(ProofStep(x, e.rule, e.tail) if e else ProofStep(x))

    visit(goal)
    return Proof(tuple(steps))


def _ancestors(goal: Atom, incoming: Mapping[Atom, list[Hyperedge]]) -> set[Atom]:
    seen, stack = {goal}, [goal]
    while stack:
        for e in incoming.get(stack.pop(), ()):
            for p in e.tail:
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
    return seen


def _greedy_sets(
    nodes: set[Atom], axioms: frozenset[Atom], incoming: Mapping[Atom, list[Hyperedge]]
) -> dict[Atom, frozenset[Atom]]:
    """A small (not always minimum) proof vertex set for each node, by fixpoint iteration.

    Each set is a valid proof: the union of premise proofs plus the head stays acyclic.
    """
    best: dict[Atom, frozenset[Atom]] = {x: frozenset((x,)) for x in nodes if x in axioms}
    changed = True
    while changed:
        changed = False
        for x in sorted(nodes - axioms, key=atom_key):
            for e in incoming.get(x, ()):
                if all(p in best for p in e.tail):
                    s = frozenset((x,)).union(*(best[p] for p in e.tail))
                    if x not in best or len(s) < len(best[x]):
                        best[x], changed = s, True
    return best


class _Search:
    """Branch and bound over justifications; collects every minimum hyperpath."""

    def __init__(
        self,
        goal: Atom,
        axioms: frozenset[Atom],
        incoming: Mapping[Atom, list[Hyperedge]],
        limit: int,
    ):
        nodes = _ancestors(goal, incoming)
        cost = {x: len(v) for x, v in _greedy_sets(nodes, axioms, incoming).items()}
        self.options = {
            x: sorted(
                (e for e in incoming.get(x, ()) if all(p in cost for p in e.tail)),
                key=lambda e: (sum(cost[p] for p in e.tail), e.rule, [atom_key(p) for p in e.tail]),
            )
            for x in nodes
        }
        self.axioms, self.goal, self.limit = axioms, goal, limit
        self.best = cost.get(goal, float("inf"))
        self.found: list[dict[Atom, Hyperedge | None]] = []

    def run(self) -> list[Proof]:
        if self.best != float("inf"):
            self._step({}, [self.goal], {self.goal})
        return [proof_from_edges(self.goal, c) for c in self.found]

    def _reaches(self, start: Atom, target: Atom, chosen: dict[Atom, Hyperedge | None]) -> bool:
        stack, seen = [start], {start}
        while stack:
            x = stack.pop()
            if x == target:
                return True
            e = chosen.get(x)
            for p in e.tail if e else ():
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
        return False

    def _step(self, chosen: dict, stack: list[Atom], used: set[Atom]) -> None:
        if len(used) > self.best:
            return
        while stack and stack[-1] in chosen:
            stack = stack[:-1]
        if not stack:
            if len(used) < self.best:
                self.best, self.found = len(used), []
            if len(self.found) < self.limit:
                self.found.append(dict(chosen))
            return
        x, rest = stack[-1], stack[:-1]
        if x in self.axioms:
            self._step({**chosen, x: None}, rest, used)
            return
        for e in self.options.get(x, ()):
            if any(self._reaches(p, x, chosen) for p in e.tail):
                continue  # would close a cycle
            new = [p for p in e.tail if p not in used]
            self._step({**chosen, x: e}, rest + new, used | set(new))


def _index(clos: Closure, axioms: frozenset[Atom]) -> dict[Atom, list[Hyperedge]]:
    incoming: dict[Atom, list[Hyperedge]] = defaultdict(list)
    for e in clos.hyperedges:
        if e.head not in axioms and e.head not in e.tail:
            incoming[e.head].append(e)
    return incoming


class _Reach:
    """Forward reachability over hyperedges, with one vertex blocked at a time."""

    def __init__(self, axioms: frozenset[Atom], edges: list[Hyperedge]):
        self.by_premise: dict[Atom, list[int]] = defaultdict(list)
        self.need = []
        self.heads = [e.head for e in edges]
        for i, e in enumerate(edges):
            tail = set(e.tail)
            self.need.append(len(tail))
            for p in tail:
                self.by_premise[p].append(i)
        self.axioms = sorted(axioms, key=atom_key)

    def derivable_without(self, goal: Atom, blocked: Atom) -> bool:
        """Is ``goal`` still a theorem when ``blocked`` may not be used?"""
        need, done = list(self.need), set()
        stack = [a for a in self.axioms if a != blocked]
        while stack:
            x = stack.pop()
            if x in done or x == blocked:
                continue
            if x == goal:
                return True
            done.add(x)
            for i in self.by_premise.get(x, ()):
                need[i] -= 1
                if need[i] == 0:
                    stack.append(self.heads[i])
        return False


def certify_unique_shortest(program: Program, proof: Proof, clos: Closure | None = None) -> bool:
    """A sufficient, polynomial test that ``proof`` is the goal's unique shortest proof.

    It holds when (a) every vertex of the proof is necessary (the goal is not a theorem when
    that vertex may not be used) and (b) no other hyperpath uses exactly the same vertices
    (an exhaustive search restricted to them, which is small). By (a) every proof contains
    all of this proof's vertices, so none is smaller and an equally small one has the same
    vertex set; by (b) it is this proof.
    """
    clos = clos if clos is not None else closure(program)
    axioms = frozenset(program.axioms)
    if any(s.rule is None and s.theorem not in axioms for s in proof.steps):
        return False
    incoming = _index(clos, axioms)
    goal, vertices = proof.goal, set(proof.theorems)
    relevant = _ancestors(goal, incoming)
    reach = _Reach(axioms & relevant, [e for x in relevant for e in incoming.get(x, ())])
    if any(reach.derivable_without(goal, v) for v in proof.theorems if v != goal):
        return False
    inside = {x: [e for e in incoming.get(x, ()) if set(e.tail) <= vertices] for x in vertices}
    found = _Search(goal, axioms & vertices, inside, limit=2).run()
    return len(found) == 1 and found[0].signature == proof.signature


def _candidate(goal: Atom, axioms: frozenset[Atom], clos: Closure) -> Proof | None:
    """A small proof of ``goal``: the greedy vertex set, justified inside itself."""
    incoming = _index(clos, axioms)
    best = _greedy_sets(_ancestors(goal, incoming), axioms, incoming)
    if goal not in best:
        return None
    chosen: dict[Atom, Hyperedge | None] = {x: None for x in best[goal] if x in axioms}
    todo = sorted(best[goal] - axioms, key=atom_key)
    while todo:
        for x in todo:
            e = next((e for e in incoming[x] if all(p in chosen for p in e.tail)), None)
            if e is not None:
                chosen[x] = e
        if all(x not in chosen for x in todo):
            return None  # cannot happen for a greedy set; guards the loop
        todo = [x for x in todo if x not in chosen]
    return proof_from_edges(goal, chosen)


def shortest_proofs(
    program: Program, goal: Atom, clos: Closure | None = None, limit: int = 2
) -> list[Proof]:
    """Every minimum-vertex proof of ``goal`` (at most ``limit``), in a deterministic order.

    A greedy candidate is tried first; when :func:`certify_unique_shortest` accepts it, it is
    the only answer. Otherwise an exact branch and bound (exponential in the worst case)
    enumerates the minimum proofs.

    Args:
        program: the logic program.
        goal: the theorem to prove.
        clos: the program's closure, if already computed.
        limit: stop collecting after this many minimum proofs (2 suffices to test uniqueness).

    Returns:
        An empty list when the goal is not a theorem.
    """
    clos = clos if clos is not None else closure(program)
    if goal not in set(clos.theorems):
        return []
    axioms = frozenset(program.axioms)
    if goal in axioms:
        return [Proof((ProofStep(goal),))]
    cand = _candidate(goal, axioms, clos)
    if cand is not None and certify_unique_shortest(program, cand, clos):
        return [cand]
    return _Search(goal, axioms, _index(clos, axioms), limit).run()


def shortest_proof(program: Program, clos: Closure | None = None) -> Proof | None:
    """The first minimum proof of the program's query, or None when it has no answer."""
    clos = clos if clos is not None else closure(program)
    goal = next((x for x in clos.theorems if program.query.matches(x)), None)
    if goal is None:
        return None
    proofs = shortest_proofs(program, goal, clos, limit=1)
    return proofs[0] if proofs else None
