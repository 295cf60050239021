"""The inference rules (1a)-(6) of DEFINITIONS.md §6, a chart, the closure and consistency.

Rule ids (the ``rule`` of a :class:`Hyperedge`):

- ``1a`` cont(L, q) ∧ comp(M, L, d) ⇒ cont(M, q + d); ``1b`` cont(M, q) ∧ comp(M, L, d) ⇒
  cont(L, q − d); ``1c`` cont(A, q₁) ∧ cont(B, q₂) ⇒ comp(B, A, q₂ − q₁) for disjoint A, B.
- ``2a`` the giver of a transfer at t has q − d at t + 1; ``2b`` the receiver has q + d.
- ``3`` union: conts of disjoint agent sets covering a group mentioned by the program ⇒ the
  group's cont (the sum). Only mentioned groups are built, so the closure stays finite.
- ``4`` cont(A, c, n) ∧ rate(A, e, c, r) ⇒ cont(A, e, n·r).
- ``5a`` comp on one pair of a compeq ∧ the compeq ∧ cont of one member of the other pair ⇒
  cont of its other member (the rule of DEFINITIONS.md read in both directions, as 1a/1b).
  ``5b`` comp(A, B, d) ∧ comp(C, D, d) ⇒ compeq(A, B, C, D) for two different comparisons.
- ``6`` frame: cont(A, e, q, t) and no transfer of e involving a member of A at t ⇒
  cont(A, e, q, t + 1), up to the program's horizon.
- Relations (MathGAP v1's comparisons across two entities and "N times as many"):
  ``1a`` / ``1b`` also read rel(A, ea, B, eb, +n): cont(B, eb, q) ⇒ cont(A, ea, q + n) and
  back; ``7a`` cont(B, eb, q) ∧ rel(A, ea, B, eb, ×n) ⇒ cont(A, ea, q·n); ``7b`` cont(A, ea,
  q) ∧ rel(..., ×n) ⇒ cont(B, eb, q / n) when n divides q (else a violation).

Every atom a rule fires on is in the chart, so each hyperedge is found exactly once: when its
last premise enters the chart. Tails are sorted by :func:`atom_key`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from dagmath_viz.logic.program import (
    Agent,
    Atom,
    Comp,
    CompEq,
    Cont,
    Program,
    ProgramError,
    Rate,
    Rel,
    Transfer,
    atom_key,
    comparison,
)

__all__ = [
    "RULE_NAMES",
    "Chart",
    "Closure",
    "ClosureLimitError",
    "Hyperedge",
    "check_consistency",
    "closure",
]


class ClosureLimitError(ProgramError, RuntimeError):
    """A program derives more theorems than the closure allows (a RuntimeError, as before)."""


RULE_NAMES = {
    "1a": "comparison elimination",
    "1b": "comparison elimination",
    "1c": "comparison introduction",
    "2a": "transfer (giver)",
    "2b": "transfer (receiver)",
    "3": "union",
    "4": "rate",
    "5a": "comparison-of-differences elimination",
    "5b": "comparison-of-differences introduction",
    "6": "frame",
    "7a": "multiplicative comparison elimination",
    "7b": "multiplicative comparison elimination",
}


def _names_in(atom: Atom) -> set[str]:
    fields = ("agent", "more", "less", "giver", "receiver", "a", "b", "c", "d")
    return {
        n for f in fields if isinstance(getattr(atom, f, None), tuple) for n in getattr(atom, f)
    }


@dataclass(frozen=True, slots=True)
class Hyperedge:
    """One rule instance: premises (the tail, sorted) ⇒ conclusion (the head)."""

    rule: str
    tail: tuple[Atom, ...]
    head: Atom


def _edge(rule: str, tail: tuple[Atom, ...], head: Atom) -> Hyperedge:
    return Hyperedge(rule, tuple(sorted(tail, key=atom_key)), head)


@dataclass
class Chart:
    """Proved atoms with the indexes the rules look them up by.

    ``add`` refuses an atom that contradicts the chart (another quantity for the same cont key
    or another difference for the same pair) or has a negative quantity, and records why.
    """

    program: Program
    atoms: set[Atom] = field(default_factory=set)
    violations: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cont_at: dict[tuple, Cont] = {}
        self.conts_et: dict[tuple, list[Cont]] = defaultdict(list)
        self.conts_ae: dict[tuple, list[Cont]] = defaultdict(list)
        self.comp_at: dict[tuple, Comp] = {}
        self.comps_of: dict[tuple, list[Comp]] = defaultdict(list)
        self.comps_diff: dict[tuple, list[Comp]] = defaultdict(list)
        self.compeqs_of: dict[tuple, list[CompEq]] = defaultdict(list)
        self.transfers_of: dict[tuple, list[Transfer]] = defaultdict(list)
        self.rates_of: dict[tuple, list[Rate]] = defaultdict(list)
        self.rels_of: dict[tuple, list[Rel]] = defaultdict(list)
        self.horizon = self.program.horizon
        self.groups_of: dict[str, list[Agent]] = defaultdict(list)
        for g in sorted(self.program.groups):
            for n in g:
                self.groups_of[n].append(g)
        # one-sided transfers (the authors' semantics) change only the side they are about
        self.sides: dict[Transfer, str] = dict(self.program.one_sided)
        self.moving = {
            (n, x.entity, x.time)
            for x in self.program.axioms
            if isinstance(x, Transfer)
            for n in self._moved(x)
        }
        # A rate ties its entity to its container: when the container moves, so does the
        # entity, and a frame step would carry a stale count past the transfer.
        for r in self.program.axioms:
            if isinstance(r, Rate):
                self.moving |= {
                    (n, r.entity, t)
                    for (n, e, t) in list(self.moving)
                    if e == r.container
                    if n in r.agent
                }
        self.parts = dict(self.program.parts)
        # bidirectional frames jump between the times statements talk about (see _jumps)
        self.needed: dict[tuple[str, str], set[int]] = defaultdict(set)
        if self.program.bidirectional:
            q = self.program.query
            for x in self.program.axioms:
                if isinstance(x, Rate):
                    continue
                t_x = x.time
                if isinstance(x, Rel):
                    for n in x.a:
                        self.needed[(n, x.a_entity)].add(t_x)
                for n in _names_in(x):
                    self.needed[(n, x.entity)].add(t_x)
                    if isinstance(x, Transfer):
                        self.needed[(n, x.entity)].add(t_x + 1)
                    for r in self.program.axioms:  # a rate's entity is counted when its
                        if isinstance(r, Rate) and n in r.agent and r.container == x.entity:
                            self.needed[(n, r.entity)] |= {t_x, t_x + 1}
            for n in {*q.agent, *(n for pair in self.program.compare for a in pair for n in a)}:
                self.needed[(n, self.parts.get(n, q.entity))].add(q.time)
                self.needed[(n, q.entity)].add(q.time)
        # tree_rules: introductions only as the authors' trees use them (a comparison for a
        # pair that a compeq names; no new compeq), which keeps text problems' closures small.
        self.intro_pairs: set[frozenset] | None = None
        if self.program.tree_rules:
            self.intro_pairs = {
                frozenset(p) for x in self.program.axioms if isinstance(x, CompEq) for p in x.pairs
            } | {frozenset(p) for p in self.program.compare}
        if self.parts:  # a category total moves when one member's part moves
            cat = self.program.query.entity
            self.moving |= {
                (n, cat, t) for (n, e, t) in list(self.moving) if self.parts.get(n) == e
            }

    def __contains__(self, atom: object) -> bool:
        return atom in self.atoms

    def conflict(self, atom: Atom) -> str | None:
        """Why ``atom`` contradicts the chart, or None."""
        if isinstance(atom, Cont):
            if atom.quantity < 0:
                return f"negative quantity in {atom}"
            old = self.cont_at.get(atom.key)
            if old is not None and old != atom:
                return f"{old} contradicts {atom}"
        if isinstance(atom, Comp):
            old_comp = self.comp_at.get((atom.pair, atom.entity, atom.time))
            if old_comp is not None and old_comp != atom:
                return f"{old_comp} contradicts {atom}"
        return None

    def add(self, atom: Atom) -> bool:
        """Add ``atom``; False if it was there already or contradicts the chart."""
        if atom in self.atoms:
            return False
        why = self.conflict(atom)
        if why is not None:
            self.violations.append(why)
            return False
        self.atoms.add(atom)
        self._index(atom)
        return True

    def _index(self, x: Atom) -> None:
        if isinstance(x, Cont):
            self.cont_at[x.key] = x
            self.conts_et[(x.entity, x.time)].append(x)
            self.conts_ae[(x.agent, x.entity)].append(x)
        elif isinstance(x, Comp):
            self.comp_at[(x.pair, x.entity, x.time)] = x
            for a in (x.more, x.less):
                self.comps_of[(a, x.entity, x.time)].append(x)
            self.comps_diff[(x.entity, x.time, x.diff)].append(x)
        elif isinstance(x, CompEq):
            for a in {x.a, x.b, x.c, x.d}:
                self.compeqs_of[(a, x.entity, x.time)].append(x)
        elif isinstance(x, Transfer):
            for a in {x.giver, x.receiver}:
                if set(a) <= set(self._moved(x)):
                    self.transfers_of[(a, x.entity, x.time)].append(x)
        elif isinstance(x, Rate):
            self.rates_of[(x.agent, x.container)].append(x)
        elif isinstance(x, Rel):
            self.rels_of[(x.a, x.a_entity, x.time)].append(x)
            self.rels_of[(x.b, x.entity, x.time)].append(x)

    def derive(self, x: Atom) -> Iterator[Hyperedge]:
        """Every hyperedge with ``x`` (already in the chart) as its newest premise."""
        if isinstance(x, Cont):
            yield from self._from_cont(x)
        elif isinstance(x, Comp):
            yield from self._from_comp(x)
        elif isinstance(x, CompEq):
            yield from self._from_compeq(x)
        elif isinstance(x, Transfer):
            yield from self._from_transfer(x)
        elif isinstance(x, Rate):
            for c in self.conts_ae.get((x.agent, x.container), ()):
                yield _edge("4", (c, x), Cont(x.agent, x.entity, c.quantity * x.rate, c.time))
        elif isinstance(x, Rel):
            for side in ((x.b, x.entity, x.time), (x.a, x.a_entity, x.time)):
                known = self.cont_at.get(side)
                if known is not None:
                    yield from self._rel_elim(known, x)

    # --- rule bodies, grouped by the predicate of the newest premise ------------------------

    def _from_cont(self, c: Cont) -> Iterator[Hyperedge]:
        for k in self.comps_of.get((c.agent, c.entity, c.time), ()):
            yield self._comp_elim(c, k)
        for o in self.conts_et.get((c.entity, c.time), ()):
            if (
                self.intro_pairs is not None
                and frozenset((o.agent, c.agent)) not in self.intro_pairs
            ):
                continue
            if not set(o.agent) & set(c.agent):
                diff = c.quantity - o.quantity
                yield _edge("1c", (o, c), comparison(c.agent, o.agent, c.entity, diff, c.time))
        for t in self.transfers_of.get((c.agent, c.entity, c.time), ()):
            yield self._transfer(c, t)
        for r in self.rels_of.get((c.agent, c.entity, c.time), ()):
            yield from self._rel_elim(c, r)
        yield from self._unions(c)
        for rate in self.rates_of.get((c.agent, c.entity), ()):
            yield _edge("4", (c, rate), Cont(c.agent, rate.entity, c.quantity * rate.rate, c.time))
        for q in self.compeqs_of.get((c.agent, c.entity, c.time), ()):
            yield from self._compeq_elim(q, cont=c)
        if self.program.bidirectional:
            yield from self._jumps(c)
        elif c.time < self.horizon and not any(
            (n, c.entity, c.time) in self.moving for n in c.agent
        ):
            yield _edge("6", (c,), Cont(c.agent, c.entity, c.quantity, c.time + 1))
        if self.parts and len(c.agent) == 1 and self.parts.get(c.agent[0]) == c.entity:
            yield from self._category(c)

    def _from_comp(self, k: Comp) -> Iterator[Hyperedge]:
        for a in (k.less, k.more):
            c = self.cont_at.get((a, k.entity, k.time))
            if c is not None:
                yield self._comp_elim(c, k)
        for q in self._compeqs_on_pair(k.pair, k.entity, k.time):
            yield from self._compeq_elim(q, comp=k)
        for o in self.comps_diff.get((k.entity, k.time, k.diff), ()):
            if o != k and self.intro_pairs is None:
                head = CompEq.of(k.more, k.less, o.more, o.less, k.entity, k.time)
                yield _edge("5b", (o, k), head)

    def _from_compeq(self, q: CompEq) -> Iterator[Hyperedge]:
        yield from self._compeq_elim(q)

    def _moved(self, t: Transfer) -> tuple[str, ...]:
        """The names whose counts a transfer changes: both sides, or the side it is about."""
        side = self.sides.get(t)
        if side == "giver":
            return t.giver
        if side == "receiver":
            return t.receiver
        return t.giver + t.receiver

    def _from_transfer(self, t: Transfer) -> Iterator[Hyperedge]:
        moved = set(self._moved(t))
        for a in (t.giver, t.receiver):
            if not set(a) <= moved:
                continue
            c = self.cont_at.get((a, t.entity, t.time))
            if c is not None:
                yield self._transfer(c, t)

    def _comp_elim(self, c: Cont, k: Comp) -> Hyperedge:
        if c.agent == k.less:
            return _edge("1a", (c, k), Cont(k.more, c.entity, c.quantity + k.diff, c.time))
        return _edge("1b", (c, k), Cont(k.less, c.entity, c.quantity - k.diff, c.time))

    def _rel_elim(self, c: Cont, r: Rel) -> Iterator[Hyperedge]:
        """1a/1b (across entities) and 7a/7b: one side's count gives the other's."""
        add = r.op == "+"
        if (c.agent, c.entity) == (r.b, r.entity):
            q = c.quantity + r.n if add else c.quantity * r.n
            yield _edge("1a" if add else "7a", (c, r), Cont(r.a, r.a_entity, q, c.time))
            return
        if add:
            yield _edge("1b", (c, r), Cont(r.b, r.entity, c.quantity - r.n, c.time))
        elif c.quantity % r.n == 0:
            yield _edge("7b", (c, r), Cont(r.b, r.entity, c.quantity // r.n, c.time))
        else:
            self.violations.append(f"{c} is not {r.n} times a whole number ({r})")

    def _transfer(self, c: Cont, t: Transfer) -> Hyperedge:
        if c.agent == t.giver:
            return _edge("2a", (c, t), Cont(c.agent, c.entity, c.quantity - t.amount, c.time + 1))
        return _edge("2b", (c, t), Cont(c.agent, c.entity, c.quantity + t.amount, c.time + 1))

    def _compeqs_on_pair(self, pair: tuple[Agent, Agent], e: str, t: int) -> Iterator[CompEq]:
        for q in self.compeqs_of.get((pair[0], e, t), ()):
            if any(sorted(p) == list(pair) for p in q.pairs):
                yield q

    def _compeq_elim(
        self, q: CompEq, comp: Comp | None = None, cont: Cont | None = None
    ) -> Iterator[Hyperedge]:
        """5a: the difference of one pair (a comp) gives the other pair's (x - y = delta)."""
        (a, b), (c, d) = q.pairs
        if sorted((a, b)) == sorted((c, d)):
            return
        for (x, y), (u, v) in (((a, b), (c, d)), ((c, d), (a, b))):
            k = self.comp_at.get((tuple(sorted((u, v))), q.entity, q.time))
            if k is None or (comp is not None and k != comp):
                continue
            delta = k.value(u)
            for known, other, sign in ((y, x, 1), (x, y, -1)):
                kc = self.cont_at.get((known, q.entity, q.time))
                if kc is None or (cont is not None and kc != cont):
                    continue
                head = Cont(other, q.entity, kc.quantity + sign * delta, q.time)
                yield _edge("5a", (k, q, kc), head)

    def _unions(self, c: Cont) -> Iterator[Hyperedge]:
        seen: set[Agent] = set()
        for g in (g for n in c.agent for g in self.groups_of.get(n, ())):
            if g in seen or not set(c.agent) < set(g):
                continue
            if self.program.tree_rules and g == self.program.query.agent:
                if c.time != self.program.query.time:
                    continue  # the question's total is asked at its time only
            seen.add(g)
            rest = frozenset(g) - frozenset(c.agent)
            for cover in self._covers(rest, c.entity, c.time):
                parts = (c, *cover)
                total = sum(p.quantity for p in parts)
                yield _edge("3", parts, Cont(g, c.entity, total, c.time))

    def _jumps(self, c: Cont) -> Iterator[Hyperedge]:
        """6, both ways in time: to the nearest earlier and later time that a statement about
        one of the agent's names and the entity (or the question) talks about, when no
        transfer of the entity involving the agent lies between."""
        times = sorted({t for n in c.agent for t in self.needed.get((n, c.entity), ())})
        later = [t for t in times if c.time < t <= self.horizon]
        earlier = [t for t in times if t < c.time]
        moves = [(n, c.entity) for n in c.agent]
        if later and not any(
            (n, e, t) in self.moving for n, e in moves for t in range(c.time, later[0])
        ):
            yield _edge("6", (c,), Cont(c.agent, c.entity, c.quantity, later[0]))
        if earlier and not any(
            (n, e, t) in self.moving for n, e in moves for t in range(earlier[-1], c.time)
        ):
            yield _edge("6", (c,), Cont(c.agent, c.entity, c.quantity, earlier[-1]))

    def _category(self, c: Cont) -> Iterator[Hyperedge]:
        """3 (across entities): each member's count of its own entity ⇒ the category total.

        Only at the question's time: the total is what the question asks.
        """
        if c.time != self.program.query.time:
            return
        parts = []
        for name, entity in self.program.parts:
            found = self.cont_at.get(((name,), entity, c.time))
            if found is None:
                return
            parts.append(found)
        q = self.program.query
        yield _edge(
            "3", tuple(parts), Cont(q.agent, q.entity, sum(p.quantity for p in parts), c.time)
        )

    def _covers(self, rest: frozenset[str], e: str, t: int) -> Iterator[tuple[Cont, ...]]:
        """Every set of chart conts at (e, t) whose agents partition ``rest``."""
        if not rest:
            yield ()
            return
        first = min(rest)
        for o in self.conts_et.get((e, t), ()):
            if first in o.agent and set(o.agent) <= rest:
                for more in self._covers(rest - frozenset(o.agent), e, t):
                    yield (o, *more)


@dataclass(frozen=True, slots=True)
class Closure:
    """Every theorem of a program (in breadth-first order) and every hyperedge among them."""

    theorems: tuple[Atom, ...]
    hyperedges: tuple[Hyperedge, ...]
    violations: tuple[str, ...]


def closure(program: Program, max_theorems: int = 200_000) -> Closure:
    """Forward-chain a program to its fixpoint, breadth first.

    Hyperedges whose head contradicts the chart are dropped and the contradiction is listed in
    ``violations`` (a consistent program has none).
    """
    chart = Chart(program)
    order: list[Atom] = []
    edges: list[Hyperedge] = []
    queue = list(program.axioms)
    i = 0
    while i < len(queue):
        x = queue[i]
        i += 1
        if not chart.add(x):
            continue
        order.append(x)
        if len(order) > max_theorems:
            raise ClosureLimitError(f"closure exceeded {max_theorems} theorems")
        for e in chart.derive(x):
            why = chart.conflict(e.head)
            if why is not None:
                chart.violations.append(why)
                continue
            edges.append(e)
            queue.append(e.head)
    violations = tuple(dict.fromkeys(chart.violations))
    return Closure(tuple(order), tuple(edges), violations)


def check_consistency(program: Program) -> tuple[str, ...]:
    """Why a program is not numerically consistent (empty when it is).

    Consistent means: no two theorems give different quantities for the same (agent set,
    entity, time), no two give different differences for the same pair, and no rule has to
    produce a negative quantity.
    """
    return closure(program).violations
