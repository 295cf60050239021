"""Verbalizer and parser: every ground atom as an English sentence, and back.

Each predicate has two templates (written for this project), each a sentence ending in a
period. Time t > 0 is said as "After round t, ..."; a transfer at time t happens "In round
t + 1". A group agent is "Ryan and Sam together". Names are capitalised single words,
entities and containers lowercase plural nouns.

The parser splits a text into sentences and matches each against a fixed set of anchored
regular expressions, so it runs in time linear in the text (sentences longer than
``MAX_SENTENCE`` characters are not matched). Duplicated theorems are kept once; sentences
that match no template are counted.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from dagmath_viz.logic.program import (
    Agent,
    Atom,
    Comp,
    CompEq,
    Cont,
    ProgramError,
    Query,
    Rate,
    Transfer,
    agent,
    comparison,
)

__all__ = [
    "MAX_SENTENCE",
    "N_TEMPLATES",
    "ParseResult",
    "parse_proof",
    "parse_question",
    "parse_sentence",
    "verbalize",
    "verbalize_question",
]

N_TEMPLATES = 2
MAX_SENTENCE = 1000


def _names(a: Agent) -> str:
    return a[0] if len(a) == 1 else ", ".join(a[:-1]) + " and " + a[-1]


def _subj(a: Agent) -> str:
    return _names(a) if len(a) == 1 else _names(a) + " together"


def _s(a: Agent, singular: str, plural: str) -> str:
    return singular if len(a) == 1 else plural


def _prefix(t: int) -> str:
    return f"After round {t}, " if t > 0 else ""


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _cont(x: Cont, v: int) -> str:
    has = _s(x.agent, "has", "have")
    if v == 0:
        return f"{_subj(x.agent)} {has} {x.quantity} {x.entity}."
    return f"the number of {x.entity} {_subj(x.agent)} {has} is {x.quantity}."


def _comp(x: Comp, v: int) -> str:
    if x.diff == 0:
        return f"{_subj(x.more)} {_s(x.more, 'has', 'have')} as many {x.entity} as {_subj(x.less)}."
    if v == 0:
        has = _s(x.more, "has", "have")
        return f"{_subj(x.more)} {has} {x.diff} more {x.entity} than {_subj(x.less)}."
    has = _s(x.less, "has", "have")
    return f"{_subj(x.less)} {has} {x.diff} fewer {x.entity} than {_subj(x.more)}."


def _compeq(x: CompEq, v: int) -> str:
    a, b, c, d, e = x.a, x.b, x.c, x.d, x.entity
    if v == 0:
        ha, hc = _s(a, "has", "have"), _s(c, "has", "have")
        return (
            f"{_subj(a)} {ha} as many more {e} than {_subj(b)} as {_subj(c)} {hc} more than"
            f" {_subj(d)}."
        )
    left = f"{_names(a)}'s {e} minus {_names(b)}'s {e}"
    right = f"{_names(c)}'s {e} minus {_names(d)}'s {e}"
    return f"{left} equals {right}."


def _transfer(x: Transfer, v: int) -> str:
    r = f"In round {x.time + 1}, "
    if v == 0:
        gives = _s(x.giver, "gives", "give")
        return f"{r}{_subj(x.giver)} {gives} {x.amount} {x.entity} to {_subj(x.receiver)}."
    gets = _s(x.receiver, "receives", "receive")
    return f"{r}{_subj(x.receiver)} {gets} {x.amount} {x.entity} from {_subj(x.giver)}."


def _rate(x: Rate, v: int) -> str:
    each, verb = ("Each", "holds") if v == 0 else ("Every one", "contains")
    return f"{each} of {_names(x.agent)}'s {x.container} {verb} {x.rate} {x.entity}."


_RENDER: dict[type, Callable] = {
    Cont: _cont,
    Comp: _comp,
    CompEq: _compeq,
    Transfer: _transfer,
    Rate: _rate,
}


def verbalize(atom: Atom, variant: int | random.Random = 0) -> str:
    """One sentence for a ground atom.

    Args:
        atom: the atom.
        variant: template index (0 or 1), or a seeded ``random.Random`` to pick one.

    Example:
        >>> from dagmath_viz.logic.program import comparison
        >>> verbalize(comparison(("Eleanor",), ("Ryan",), "cats", 3))
        'Eleanor has 3 more cats than Ryan.'
    """
    v = variant.randrange(N_TEMPLATES) if isinstance(variant, random.Random) else variant
    if v not in range(N_TEMPLATES):
        raise ValueError(f"template variant must be in 0..{N_TEMPLATES - 1}, got {v}")
    body = _RENDER[type(atom)](atom, v)
    time = 0 if isinstance(atom, Rate | Transfer) else atom.time
    return _cap(_prefix(time) + body)


def verbalize_question(query: Query) -> str:
    """The question sentence, e.g. "How many cats does Eleanor have?"."""
    does = _s(query.agent, "does", "do")
    when = f" after round {query.time}" if query.time > 0 else ""
    return f"How many {query.entity} {does} {_subj(query.agent)} have{when}?"


# --- parsing ---------------------------------------------------------------------------

_NAME = r"[A-Z][a-z]+(?:'s [a-z]+)?"  # possessive agents too: "Ryan's aunt"
_NAMES = rf"{_NAME}(?:(?:, | and ){_NAME})*"
_E = r"[a-z]+"
_HAS = r"(?:has|have)"
_PRE = r"(?:After round (?P<t>\d+), )?"


def _subj_re(group: str) -> str:
    return rf"(?P<{group}>{_NAMES})(?: together)?"


def _poss(group: str) -> str:
    return rf"(?P<{group}>{_NAMES})'s"


_PATTERNS: tuple[tuple[str, str], ...] = (
    ("cont", rf"{_PRE}{_subj_re('a')} {_HAS} (?P<q>\d+) (?P<e>{_E})\."),
    ("cont", rf"{_PRE}[Tt]he number of (?P<e>{_E}) {_subj_re('a')} {_HAS} is (?P<q>\d+)\."),
    ("more", rf"{_PRE}{_subj_re('m')} {_HAS} (?P<d>\d+) more (?P<e>{_E}) than {_subj_re('l')}\."),
    ("fewer", rf"{_PRE}{_subj_re('l')} {_HAS} (?P<d>\d+) fewer (?P<e>{_E}) than {_subj_re('m')}\."),
    ("same", rf"{_PRE}{_subj_re('m')} {_HAS} as many (?P<e>{_E}) as {_subj_re('l')}\."),
    (
        "give",
        rf"In round (?P<r>\d+), {_subj_re('g')} (?:gives|give) (?P<d>\d+) (?P<e>{_E}) to"
        rf" {_subj_re('rc')}\.",
    ),
    (
        "receive",
        rf"In round (?P<r>\d+), {_subj_re('rc')} (?:receives|receive) (?P<d>\d+) (?P<e>{_E})"
        rf" from {_subj_re('g')}\.",
    ),
    (
        "rate",
        rf"(?:Each|Every one) of {_poss('a')} (?P<c>{_E}) (?:holds|contains) (?P<n>\d+)"
        rf" (?P<e>{_E})\.",
    ),
    (
        "compeq",
        rf"{_PRE}{_subj_re('a')} {_HAS} as many more (?P<e>{_E}) than {_subj_re('b')} as"
        rf" {_subj_re('c')} {_HAS} more than {_subj_re('d')}\.",
    ),
    (
        "compeq",
        rf"{_PRE}{_poss('a')} (?P<e>{_E}) minus {_poss('b')} (?P=e) equals {_poss('c')} (?P=e)"
        rf" minus {_poss('d')} (?P=e)\.",
    ),
)
_COMPILED = tuple((kind, re.compile(p)) for kind, p in _PATTERNS)
_QUESTION = re.compile(
    rf"How many (?P<e>{_E}) (?:does|do) {_subj_re('a')} have(?: after round (?P<t>\d+))?\?"
)
_SPLIT = re.compile(r"(?<=[.?!])\s+")
_NAME_SEP = re.compile(r", | and ")


def _agent(text: str) -> Agent:
    return agent(*_NAME_SEP.split(text))


def _build(kind: str, m: re.Match[str]) -> Atom:
    g = m.groupdict()
    t = int(g["t"]) if g.get("t") else 0
    e = g["e"]
    if kind == "cont":
        return Cont(_agent(g["a"]), e, int(g["q"]), t)
    if kind in ("more", "fewer", "same"):
        d = 0 if kind == "same" else int(g["d"])
        return comparison(_agent(g["m"]), _agent(g["l"]), e, d, t)
    if kind in ("give", "receive"):
        return Transfer(_agent(g["g"]), _agent(g["rc"]), e, int(g["d"]), int(g["r"]) - 1)
    if kind == "rate":
        return Rate(_agent(g["a"]), e, g["c"], int(g["n"]))
    return CompEq.of(_agent(g["a"]), _agent(g["b"]), _agent(g["c"]), _agent(g["d"]), e, t)


def parse_sentence(sentence: str) -> Atom | None:
    """The atom a sentence states, or None when it matches no template."""
    s = sentence.strip()
    if len(s) > MAX_SENTENCE:
        return None
    for kind, rx in _COMPILED:
        m = rx.fullmatch(s)
        if m is not None:
            if kind in ("give", "receive") and int(m["r"]) < 1:
                return None
            try:
                return _build(kind, m)
            except (ProgramError, ValueError):
                return None
    return None


@dataclass(frozen=True, slots=True)
class ParseResult:
    """Theorems read from a text, in first-mention order; plus what was not understood.

    ``sentences[i]`` is the sentence that first stated ``theorems[i]``.
    """

    theorems: tuple[Atom, ...]
    sentences: tuple[str, ...]
    unmatched: tuple[str, ...]
    duplicates: int


def split_sentences(text: str) -> list[str]:
    """Split a text after each '.', '?' or '!' followed by white space."""
    return [s for s in _SPLIT.split(text.strip()) if s]


def parse_proof(text: str) -> ParseResult:
    """Read a natural-language proof back into theorems.

    Example:
        >>> text = "Ryan has 5 cats. Eli has 3 more cats than Ryan. Eli has 8 cats."
        >>> parse_proof(text).theorems[2]
        Cont(agent=('Eli',), entity='cats', quantity=8, time=0)
    """
    seen: dict[Atom, str] = {}
    unmatched: list[str] = []
    duplicates = 0
    for s in split_sentences(text):
        atom = parse_sentence(s)
        if atom is None:
            unmatched.append(s)
        elif atom in seen:
            duplicates += 1
        else:
            seen[atom] = s
    return ParseResult(tuple(seen), tuple(seen.values()), tuple(unmatched), duplicates)


def parse_question(sentence: str) -> Query | None:
    """The query a question sentence asks, or None."""
    m = _QUESTION.fullmatch(sentence.strip())
    if m is None:
        return None
    return Query(_agent(m["a"]), m["e"], int(m["t"]) if m["t"] else 0)
