"""Typed logic programs for math word problems: terms, atoms, queries, programs.

Terms (DEFINITIONS.md §6): an *agent* is a non-empty set of names, stored as a sorted tuple;
an *entity* is a plural noun (one lowercase word); quantities are natural numbers; time stamps
are natural numbers (a transfer at time t takes effect at t + 1).

Atoms are frozen dataclasses in a canonical form, so two atoms that state the same fact are
equal: ``Comp`` always names the larger side first (``diff >= 0``) and ``CompEq`` is the
smallest of its four equivalent spellings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Any, ClassVar

from dagmath_viz.schema import InputError

__all__ = [
    "Agent",
    "Atom",
    "Comp",
    "CompEq",
    "Cont",
    "Program",
    "ProgramError",
    "Query",
    "Rate",
    "Rel",
    "Transfer",
    "agent",
    "atom_from_dict",
    "atom_key",
    "atom_to_dict",
    "comparison",
    "entities_of",
    "names_of",
    "query_from_dict",
    "query_to_dict",
    "relation",
    "shift_time",
]

Agent = tuple[str, ...]


class ProgramError(InputError):
    """A logic program or problem record is malformed or numerically inconsistent."""


def agent(*names: str) -> Agent:
    """Build an agent (a set of names) in canonical form.

    Example:
        >>> agent("Sam", "Ryan")
        ('Ryan', 'Sam')
    """
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ProgramError(f"an agent needs at least one non-empty name, got {names!r}")
    return tuple(sorted(set(names)))


def _fmt_agent(a: Agent) -> str:
    return a[0] if len(a) == 1 else "{" + ",".join(a) + "}"


@dataclass(frozen=True, slots=True)
class Cont:
    """cont(A, e, q, t): agent A has q of entity e at time t."""

    agent: Agent
    entity: str
    quantity: int
    time: int = 0
    pred: ClassVar[str] = "cont"

    @property
    def key(self) -> tuple[Agent, str, int]:
        """(agent, entity, time): at most one quantity per key in a consistent program."""
        return (self.agent, self.entity, self.time)

    def __str__(self) -> str:
        return f"cont({_fmt_agent(self.agent)}, {self.entity}, {self.quantity}, t{self.time})"


@dataclass(frozen=True, slots=True)
class Comp:
    """comp(M, L, e, d, t): M has d more of e than L at time t (canonical: d >= 0)."""

    more: Agent
    less: Agent
    entity: str
    diff: int
    time: int = 0
    pred: ClassVar[str] = "comp"

    def __post_init__(self) -> None:
        if self.diff < 0 or (self.diff == 0 and self.more > self.less):
            raise ValueError(f"non-canonical comparison {self!s}; build it with comparison()")

    @property
    def pair(self) -> tuple[Agent, Agent]:
        """The two agents, sorted: the key of the comparison with ``entity`` and ``time``."""
        return (self.more, self.less) if self.more <= self.less else (self.less, self.more)

    def value(self, first: Agent) -> int:
        """The signed difference ``first - other``."""
        return self.diff if first == self.more else -self.diff

    def __str__(self) -> str:
        m, le = _fmt_agent(self.more), _fmt_agent(self.less)
        return f"comp({m}, {le}, {self.entity}, {self.diff}, t{self.time})"


def comparison(b: Agent, a: Agent, entity: str, d: int, time: int = 0) -> Comp:
    """The canonical atom for "b has d more of entity than a" (d may be negative).

    Example:
        >>> comparison(("Ryan",), ("Eli",), "cats", -3)
        Comp(more=('Eli',), less=('Ryan',), entity='cats', diff=3, time=0)
    """
    if d < 0 or (d == 0 and b > a):
        b, a, d = a, b, -d
    return Comp(b, a, entity, d, time)


@dataclass(frozen=True, slots=True)
class Transfer:
    """transfer(G -> R, e, d, t): at time t, G gives R d of e (effective at t + 1)."""

    giver: Agent
    receiver: Agent
    entity: str
    amount: int
    time: int = 0
    pred: ClassVar[str] = "transfer"

    def __str__(self) -> str:
        g, r = _fmt_agent(self.giver), _fmt_agent(self.receiver)
        return f"transfer({g} -> {r}, {self.entity}, {self.amount}, t{self.time})"


@dataclass(frozen=True, slots=True)
class Rate:
    """rate(A, e, c, r): each of A's containers c holds r of e (timeless)."""

    agent: Agent
    entity: str
    container: str
    rate: int
    pred: ClassVar[str] = "rate"

    def __str__(self) -> str:
        return f"rate({_fmt_agent(self.agent)}, {self.entity}, {self.container}, {self.rate})"


@dataclass(frozen=True, slots=True)
class CompEq:
    """compeq(A, B, C, D, e, t): A - B = C - D for entity e at time t (canonical spelling)."""

    a: Agent
    b: Agent
    c: Agent
    d: Agent
    entity: str
    time: int = 0
    pred: ClassVar[str] = "compeq"

    @classmethod
    def of(cls, a: Agent, b: Agent, c: Agent, d: Agent, entity: str, time: int = 0) -> CompEq:
        """The canonical atom for A - B = C - D (the least of its four spellings)."""
        forms = [(a, b, c, d), (c, d, a, b), (b, a, d, c), (d, c, b, a)]
        return cls(*min(forms), entity, time)

    @property
    def pairs(self) -> tuple[tuple[Agent, Agent], tuple[Agent, Agent]]:
        """((A, B), (C, D))."""
        return ((self.a, self.b), (self.c, self.d))

    def __str__(self) -> str:
        a, b, c, d = (_fmt_agent(x) for x in (self.a, self.b, self.c, self.d))
        return f"compeq({a}, {b}, {c}, {d}, {self.entity}, t{self.time})"


@dataclass(frozen=True, slots=True)
class Rel:
    """rel(A, ea, B, eb, op, n, t): at time t, A's count of ea is B's count of eb plus n
    (op ``+``: a comparison across two entities, "A has 3 apples more than B has pears") or
    n times it (op ``*``: "A has 3 times as many apples as B has pears"; eb may equal ea).

    Build it with :func:`relation`, which keeps one spelling per fact (a same-entity ``+``
    relation is a :class:`Comp`; ``n >= 0``; a tie names the smaller side first).
    """

    a: Agent
    a_entity: str
    b: Agent
    entity: str
    op: str
    n: int
    time: int = 0
    pred: ClassVar[str] = "rel"

    def __post_init__(self) -> None:
        if self.op not in ("+", "*") or self.n < (1 if self.op == "*" else 0):
            raise ValueError(f"non-canonical relation {self!s}; build it with relation()")

    def __str__(self) -> str:
        a, b = _fmt_agent(self.a), _fmt_agent(self.b)
        return f"rel({a}, {self.a_entity}, {b}, {self.entity}, {self.op}{self.n}, t{self.time})"


def relation(
    a: Agent, a_entity: str, b: Agent, b_entity: str, op: str, n: int, time: int = 0
) -> Comp | Rel:
    """The canonical atom for "a has n more a_entity than b has b_entity" (op ``+``, n may be
    negative) or "a has n times as many a_entity as b has b_entity" (op ``*``, n >= 1).

    Example:
        >>> relation(("Ann",), "apples", ("Bo",), "pears", "+", -2)
        Rel(a=('Bo',), a_entity='pears', b=('Ann',), entity='apples', op='+', n=2, time=0)
    """
    if op == "+" and a_entity == b_entity:
        return comparison(a, b, a_entity, n, time)
    if op == "+" and n < 0:
        a, a_entity, b, b_entity, n = b, b_entity, a, a_entity, -n
    if op == "*" and (not isinstance(n, int) or n < 1):
        raise ProgramError(f"a factor must be a positive whole number, got {n!r}")
    if op not in ("+", "*"):
        raise ProgramError(f"unknown relation {op!r}")
    tie = n == 0 if op == "+" else n == 1
    if tie and (a, a_entity) > (b, b_entity):
        a, a_entity, b, b_entity = b, b_entity, a, a_entity
    return Rel(a, a_entity, b, b_entity, op, n, time)


Atom = Cont | Comp | Transfer | Rate | CompEq | Rel

_PRED_ORDER = {"cont": 0, "comp": 1, "transfer": 2, "rate": 3, "compeq": 4, "rel": 5}


_GETTERS = {
    cls.pred: attrgetter(*cls.__dataclass_fields__)
    for cls in (Cont, Comp, Transfer, Rate, CompEq, Rel)
}


def atom_key(atom: Atom) -> tuple[Any, ...]:
    """A total, deterministic sort key over atoms of every predicate."""
    return (_PRED_ORDER[atom.pred], _GETTERS[atom.pred](atom))


def names_of(atom: Atom) -> frozenset[str]:
    """Every agent name an atom mentions."""
    fields = ("agent", "more", "less", "giver", "receiver", "a", "b", "c", "d")
    agents = (getattr(atom, f, None) for f in fields)
    return frozenset(n for a in agents if isinstance(a, tuple) for n in a)


def entities_of(atom: Atom) -> frozenset[str]:
    """Every entity an atom mentions (a rate mentions its container too)."""
    if isinstance(atom, Rate):
        return frozenset((atom.entity, atom.container))
    if isinstance(atom, Rel):
        return frozenset((atom.entity, atom.a_entity))
    return frozenset((atom.entity,))


def shift_time(atom: Atom, dt: int) -> Atom:
    """The same atom ``dt`` time steps later (rates are timeless)."""
    if isinstance(atom, Rate):
        return atom
    return replace(atom, time=atom.time + dt)


@dataclass(frozen=True, slots=True)
class Query:
    """The question: how many of ``entity`` does ``agent`` have at ``time``?"""

    agent: Agent
    entity: str
    time: int = 0

    @property
    def key(self) -> tuple[Agent, str, int]:
        """The cont key the answer is stored under."""
        return (self.agent, self.entity, self.time)

    def matches(self, atom: Atom) -> bool:
        """True for the cont atom that answers the query."""
        return isinstance(atom, Cont) and atom.key == self.key


@dataclass(frozen=True, slots=True)
class Program:
    """A logic program for one problem: axioms (in problem order) and the query.

    Two options serve problems read from text (``dagmath_viz.logic.text``):

    - ``parts``: when the query totals different entities into one category ("snacks" =
      waffles + granola bars), the entity each member of the query's group contributes, as
      ``((name, entity), ...)``; empty for an ordinary query.
    - ``bidirectional``: the frame rule also runs backwards in time (a count that no transfer
      changed at t was the same before t), so a statement may precede, in time stamps, the
      count it is combined with.
    - ``tree_rules``: the introduction rules fire only as the authors' generated trees use
      them: 1c only for a pair of agents that a compeq axiom names (or ``compare`` lists:
      the pair a question asks to compare), 5b never.
    - ``one_sided``: transfers that change only one side's count, ``(transfer, "giver" |
      "receiver")``. The authors' templates are about one side ("R then gets N more E from
      S" concludes R's count, "S then donates N E to R" concludes S's), and their generator
      never updates the other side: a distractor may take from the goal's agent without
      changing the answer.
    """

    axioms: tuple[Atom, ...]
    query: Query
    parts: tuple[tuple[str, str], ...] = ()
    bidirectional: bool = False
    tree_rules: bool = False
    compare: tuple[tuple[Agent, Agent], ...] = ()
    one_sided: tuple[tuple[Transfer, str], ...] = ()

    @property
    def horizon(self) -> int:
        """The last time stamp the program talks about; the frame rule stops there."""
        times = [self.query.time]
        for x in self.axioms:
            if isinstance(x, Transfer):
                times.append(x.time + 1)
            elif not isinstance(x, Rate):
                times.append(x.time)
        return max(times)

    @property
    def groups(self) -> frozenset[Agent]:
        """Agent sets of two or more names mentioned by an axiom or the query."""
        found = {self.query.agent}
        for x in self.axioms:
            for f in ("agent", "more", "less", "giver", "receiver", "a", "b", "c", "d"):
                if isinstance(getattr(x, f, None), tuple):
                    found.add(getattr(x, f))
        return frozenset(a for a in found if len(a) > 1)


# --- serialisation ------------------------------------------------------------------------

_FIELDS: dict[str, tuple[type, tuple[tuple[str, str], ...]]] = {
    "cont": (Cont, (("agent", "A"), ("entity", "e"), ("quantity", "n"), ("time", "n"))),
    "comp": (Comp, (("more", "A"), ("less", "A"), ("entity", "e"), ("diff", "z"), ("time", "n"))),
    "transfer": (
        Transfer,
        (("giver", "A"), ("receiver", "A"), ("entity", "e"), ("amount", "n"), ("time", "n")),
    ),
    "rate": (Rate, (("agent", "A"), ("entity", "e"), ("container", "e"), ("rate", "n"))),
    "compeq": (
        CompEq,
        (("a", "A"), ("b", "A"), ("c", "A"), ("d", "A"), ("entity", "e"), ("time", "n")),
    ),
    "rel": (
        Rel,
        (
            ("a", "A"),
            ("a_entity", "e"),
            ("b", "A"),
            ("entity", "e"),
            ("op", "e"),
            ("n", "z"),
            ("time", "n"),
        ),
    ),
}


def atom_to_dict(atom: Atom) -> dict[str, Any]:
    """A JSON-ready dict: ``{"pred": ..., field: value, ...}``; agents become name lists."""
    out: dict[str, Any] = {"pred": atom.pred}
    for f in atom.__dataclass_fields__:
        v = getattr(atom, f)
        out[f] = list(v) if isinstance(v, tuple) else v
    return out


def _field(d: Mapping[str, Any], name: str, kind: str) -> Any:
    v = d.get(name)
    if kind == "A":
        if isinstance(v, str):
            v = [v]
        if not isinstance(v, list | tuple) or not v or not all(isinstance(n, str) for n in v):
            raise ProgramError(f"field {name!r} must be a non-empty list of names, got {v!r}")
        return agent(*v)
    if kind == "e":
        if not isinstance(v, str) or not v:
            raise ProgramError(f"field {name!r} must be a non-empty string, got {v!r}")
        return v
    if isinstance(v, bool) or not isinstance(v, int) or (kind == "n" and v < 0):
        raise ProgramError(f"field {name!r} must be a natural number, got {v!r}")
    return v


def atom_from_dict(d: Mapping[str, Any]) -> Atom:
    """Read an atom written by :func:`atom_to_dict`; raise ProgramError on a malformed one."""
    if not isinstance(d, Mapping) or d.get("pred") not in _FIELDS:
        raise ProgramError(f"not an atom: {d!r}")
    cls, fields = _FIELDS[d["pred"]]
    values = [_field(d, name, kind) for name, kind in fields]
    if cls is Comp:
        return comparison(*values)
    if cls is CompEq:
        return CompEq.of(*values)
    if cls is Rel:
        return relation(*values)
    return cls(*values)


def query_to_dict(query: Query) -> dict[str, Any]:
    """A JSON-ready dict for a query."""
    return {"agent": list(query.agent), "entity": query.entity, "time": query.time}


def query_from_dict(d: Mapping[str, Any]) -> Query:
    """Read a query written by :func:`query_to_dict`."""
    if not isinstance(d, Mapping):
        raise ProgramError(f"not a query: {d!r}")
    return Query(_field(d, "agent", "A"), _field(d, "entity", "e"), _field(d, "time", "n"))
