"""Word problems and proofs in natural language: read them into logic programs and theorems.

This reads the sentences of the efficiency paper's own generator (rycolab/reasoning-efficiency,
its "extended" and MathGAP v1 templates) and the proofs written in its style:

- containers: "X has / owns / possesses N E."; "A, B and C together have N E.";
- comparisons: "X has N E more / less / fewer than Y.", "X has N more / fewer E than Y.",
  and MathGAP v1's "If we take away N E from X, then X has as many E as Y.", "The number of
  E X has exceeds the number of E Y has by N.", "X's number of E exceeds Y's by N.";
- comparisons across two entities (the authors' templates when the two sides differ): "X has N
  E more / less than Y has F.", "X has N more E than Y has F.", "The number of E X has exceeds
  the number of F Y has by N.", "If we take away N E from X, then X has as many E as Y has F.";
- "N times as many" (MathGAP v1): "X has N times as many E as Y[ has F].", "Y has 1/N as many
  F as X[ has E].", "The number of E X has divided by N equals the number of F Y has.", "If we
  divide the number of E X has by N, then X has the same number of E as Y[ has F]." (these
  become :class:`~dagmath_viz.logic.program.Rel` atoms; the comparison question across two
  entities is not read);
- comparisons of differences: "The number of E that A has more than B is the same as (or is
  equal to) the difference between (or in) the number of E that C has compared to D.";
- transfers: "R then gets / receives N more E from S.", "R then gets another N E from S.",
  "S then gives N E more to R.", "S then gives R N E.", "S then donates / gives away / sells /
  loses / gifts N E to R." (also with a leading "Then");
- rates: "X possesses N E per C." (C singular);
- questions: "How many E does X have[ in all | in total | totaled | in their collection]?",
  "What is the number of E that X has?", and "If A, B and C sum up the E that they have, how
  many E do they have combined / in total?" (also "what is the number of E that they have in
  total?"), where E may be a category of the members' entities ("snacks");
- proof steps: any statement above, and conclusions "So X (now) has 20 + 4 = 24 E.", "So X
  has 4 = 4 times as many E as Y.", "So Y has 1/(2 × 2) = 1/4 as many E as X.",
  "Therefore, X has 7 - 3 = 4 E more than Y.", "So the difference between the number of E X
  and Y have is 3.", "So A and B have a total of 9 E.", "If A and B sum up the E that they
  have, they have 4 + 5 = 9 in total.". A conclusion may open with "This means (that)", "It
  follows that", "As a result," … and close with "in total", "in all", "now", "left"; a
  justification after a statement ("(18 + 9 = 27)", ", because 19 - 10 = 9") is dropped; a
  sentence that joins two statements ("A, so B", "A; therefore B", "A, which means B", "A,
  which gives B", "Since A, B") gives both (the parts that read, when some do not), and so
  does one that lists them ("Dennie has 19 parrots and Dianna has 4 parrots"); "The
  difference between A and B is 19 - 4 = 15" is about the goal's entity;
- ground queries: "Prove that X has N E." (the authors' ``groundquery``), read as the
  question "How many E does X have?", the claim kept in ``ParsedProblem.claim``.

Agents are names, possibly possessive ("Jory's aunt"); entities are lowercase phrases of one
or more words ("granola bars", "yo-yos"). Every sentence is matched against a fixed list of
anchored regular expressions, so reading is linear in the length of the text.

**Time.** Transfers change counts, so each transfer sentence starts a new time stamp: a
transfer stated after k transfer sentences happens at k (effective at k + 1), and the question
asks about the last time stamp. A statement made after k transfer sentences holds at k and
back to the last transfer that moves one of the counts it talks about; it is dated there (and a
comparison of differences with the comparisons on its pairs at a time all of them hold), see
``_settle``. The frame rule runs
both ways (:attr:`Program.bidirectional`), so a count stated at one time combines with a
comparison stated at another as long as no transfer of that agent and entity lies between.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from dagmath_viz.logic.program import (
    Agent,
    Atom,
    Comp,
    CompEq,
    Cont,
    Program,
    ProgramError,
    Query,
    Rate,
    Rel,
    Transfer,
    agent,
    comparison,
    relation,
)

__all__ = [
    "MAX_SENTENCE",
    "ParsedProblem",
    "ProofSentence",
    "TextError",
    "parse_own_problem",
    "parse_problem",
    "parse_proof_text",
    "say",
    "split_sentences",
]

MAX_SENTENCE = 2000
NOBODY = "(someone)"  # the other side of "X then loses N E." / "X then gets N more E."


class TextError(ProgramError):
    """A sentence of a problem could not be read."""


# --- lexical pieces ----------------------------------------------------------------------

_CAP = r"[A-ZÀ-ÖØ-Þ][\w\-]*"
# A name: one or two capitalised words ("Dee Dee" is one of the authors' names), never a
# connective ("So Pierce has ..."), possibly possessive ("Jory's aunt").
_NAME = (
    rf"(?!(?:So|Then|Therefore|Thus|Hence|Now|If|The|And|But|Finally|First|Next)\b){_CAP}"
    rf"(?: {_CAP})?(?:'s [a-z]+(?:-[a-z]+)*)?"
)
_LIST = rf"{_NAME}(?:, {_NAME})*(?:,? and {_NAME})?"
_ENT = r"[a-z][a-z\-]*(?: [a-z][a-z\-]*)*?"
_NUM = r"\d+"
_HAS = r"(?:has|have|owns|own|possesses|possess)"
_EXPR = r"[\d\s+\-*/×x·().]*?"  # the arithmetic before "=" in a conclusion

_LIST_SEP = re.compile(r",? and |, ")
_SPLIT = re.compile(r"(?<=[.?!])\s+")
_ENUM = re.compile(r"^\s*(?:\(?\d+[.)]|step \d+[:.]|[-*•])\s+", re.IGNORECASE)


def _quote(sentence: str, limit: int = 200) -> str:
    """A sentence quoted in an error message, cut after ``limit`` characters (a hostile
    text must not make a message of megabytes)."""
    return repr(sentence if len(sentence) <= limit else sentence[:limit] + "…")


def _names(text: str) -> Agent:
    return agent(*(n for n in _LIST_SEP.split(text) if n))


def normalize(sentence: str) -> str:
    """Straight apostrophes, single spaces, no markdown bold, no trailing period."""
    s = sentence.replace("\u2019", "'").replace("\u2018", "'")
    s = " ".join(s.split())
    s = s.rstrip(".!").strip()
    s = s.replace("**", "")
    return s


# --- problem statements ------------------------------------------------------------------

_THEN = r"(?:then |Then )?"


def _p(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


# (kind, pattern); kinds are built by _build. Order matters only where two could match.
_STATEMENTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "compeq",
        _p(
            rf"[Tt]he number of (?P<e>{_ENT}) (?:that )?(?P<a>{_NAME}) has more than"
            rf" (?:the number of (?P=e) )?(?P<b>{_NAME})(?: has)? is (?:the same as|equal to)"
            rf" the difference (?:between|in) the number of (?P<e2>{_ENT}) (?:that )?"
            rf"(?P<c>{_NAME}) has (?:compared to|and the number of (?P=e2)) (?P<d>{_NAME})"
            r"(?: has)?"
        ),
    ),
    (
        "rate",
        _p(rf"(?P<a>{_NAME}) (?:possesses|has|owns) (?P<n>{_NUM}) (?P<e>{_ENT}) per (?P<c>{_ENT})"),
    ),
    ("group", _p(rf"(?P<a>{_LIST}) together have (?:a total of )?(?P<q>{_NUM}) (?P<e>{_ENT})")),
    (
        "more",
        _p(
            rf"(?P<a>{_NAME}) {_HAS} (?P<d>{_NUM}) (?P<e>{_ENT}) (?P<dir>more|less|fewer) than"
            rf" (?P<b>{_NAME})(?: has (?P<e2>{_ENT}))?"
        ),
    ),
    (
        "more",
        _p(
            rf"(?P<a>{_NAME}) {_HAS} (?P<d>{_NUM}) (?P<dir>more|less|fewer) (?P<e>{_ENT}) than"
            rf" (?P<b>{_NAME})(?: has (?P<e2>{_ENT}))?"
        ),
    ),
    ("same", _p(rf"(?P<a>{_NAME}) {_HAS} as many (?P<e>{_ENT}) as (?P<b>{_NAME})")),
    (
        "exceeds",
        _p(
            rf"If we take away (?P<d>{_NUM}) (?P<e>{_ENT}) from (?P<a>{_NAME}), then (?P=a) has as"
            rf" many (?P=e) as (?P<b>{_NAME})(?: has (?P<e2>{_ENT}))?"
        ),
    ),
    (
        "exceeds",
        _p(
            rf"[Tt]he number of (?P<e>{_ENT}) (?P<a>{_NAME}) has exceeds the number of"
            rf" (?P<e2>{_ENT}) (?P<b>{_NAME}) has by (?P<d>{_NUM})"
        ),
    ),
    (
        "exceeds",
        _p(rf"(?P<a>{_NAME})'s number of (?P<e>{_ENT}) exceeds (?P<b>{_NAME})'s by (?P<d>{_NUM})"),
    ),
    (
        "times",
        _p(
            rf"(?P<a>{_NAME}) {_HAS} (?P<d>{_NUM}) times as many (?P<e>{_ENT}) as"
            rf" (?P<b>{_NAME})(?: has (?P<e2>{_ENT}))?"
        ),
    ),
    (
        "frac",
        _p(
            rf"(?P<b>{_NAME}) {_HAS} 1/(?P<d>{_NUM}) as many (?P<e2>{_ENT}) as"
            rf" (?P<a>{_NAME})(?: has (?P<e>{_ENT}))?"
        ),
    ),
    (
        "times",
        _p(
            rf"[Tt]he number of (?P<e>{_ENT}) (?P<a>{_NAME}) has divided by (?P<d>{_NUM}) equals"
            rf" the number of (?P<e2>{_ENT}) (?P<b>{_NAME}) has"
        ),
    ),
    (
        "times",
        _p(
            rf"If we divide the number of (?P<e>{_ENT}) (?P<a>{_NAME}) has by (?P<d>{_NUM}), then"
            rf" (?P=a) has the same number of (?P=e) as (?P<b>{_NAME})(?: has (?P<e2>{_ENT}))?"
        ),
    ),
    ("cont", _p(rf"(?P<a>{_NAME}) {_HAS} (?P<q>{_NUM}) (?P<e>{_ENT})")),
    (
        "get",
        _p(
            rf"{_THEN}(?P<r>{_NAME}) {_THEN}(?:gets|receives|buys) (?P<d>{_NUM}) more (?P<e>{_ENT})"
            rf"(?: from (?P<g>{_NAME}))?"
        ),
    ),
    (
        "get",
        _p(
            rf"{_THEN}(?P<r>{_NAME}) {_THEN}(?:gets|receives) another (?P<d>{_NUM}) (?P<e>{_ENT})"
            rf"(?: from (?P<g>{_NAME}))?"
        ),
    ),
    (
        "give_more",
        _p(
            rf"{_THEN}(?P<g>{_NAME}) {_THEN}gives (?P<d>{_NUM}) (?P<e>{_ENT}) more to"
            rf" (?P<r>{_NAME})"
        ),
    ),
    (
        "give",
        _p(
            rf"{_THEN}(?P<g>{_NAME}) {_THEN}(?:gives away|gives|donates|sells|loses|gifts)"
            rf" (?P<d>{_NUM}) (?P<e>{_ENT})(?: to (?P<r>{_NAME}))?"
        ),
    ),
    ("give", _p(rf"{_THEN}(?P<g>{_NAME}) {_THEN}gives (?P<r>{_NAME}) (?P<d>{_NUM}) (?P<e>{_ENT})")),
)

_Q_END = r"(?: in all| in total| totaled| altogether| combined| in their collection| now)?"
_QUESTIONS: tuple[re.Pattern[str], ...] = (
    _p(rf"How many (?P<e>{_ENT}) does (?P<a>{_NAME}) have{_Q_END}\?"),
    _p(rf"What is the number of (?P<e>{_ENT}) that (?P<a>{_NAME}) has{_Q_END}\?"),
    _p(
        rf"If (?P<a>{_LIST}) sum up the (?P<e>{_ENT}) that they have, (?:how many (?P=e) do they"
        rf" have(?: combined| in total)|what is the number of (?P=e) that they have in total)\?"
    ),
    _p(rf"How many (?P<e>{_ENT}) do (?P<a>{_LIST}) have{_Q_END}\?"),
)


@dataclass(frozen=True, slots=True)
class _Statement:
    kind: str
    match: re.Match[str]


def _match_statement(s: str) -> _Statement | None:
    if len(s) > MAX_SENTENCE:
        return None
    for kind, rx in _STATEMENTS:
        m = rx.fullmatch(s)
        if m is not None:
            return _Statement(kind, m)
    return None


def _plural_of(word: str, known: Iterable[str]) -> str:
    """The plural entity a singular container names ("backpack" -> "backpacks")."""
    cands = [word + "s", word + "es", word[:-1] + "ies" if word.endswith("y") else word + "s"]
    known = set(known)
    return next((c for c in cands if c in known), cands[0] if not word.endswith("s") else word)


def _side(kind: str) -> str:
    """The side a transfer sentence is about (the authors' templates): its count changes."""
    return "receiver" if kind in ("get", "give_more") else "giver"


def _build(st: _Statement, t: int, entities: set[str]) -> Atom:
    g, kind = st.match.groupdict(), st.kind
    if kind == "cont":
        return Cont(_names(g["a"]), g["e"], int(g["q"]), t)
    if kind == "group":
        return Cont(_names(g["a"]), g["e"], int(g["q"]), t)
    if kind == "more":
        d = int(g["d"]) * (1 if g["dir"] == "more" else -1)
        return relation(_names(g["a"]), g["e"], _names(g["b"]), g.get("e2") or g["e"], "+", d, t)
    if kind in ("times", "frac"):
        # "frac" is "B has 1/d as many E2 as A has E": A has d times as many
        e, e2 = g.get("e") or g["e2"], g.get("e2") or g["e"]
        return relation(_names(g["a"]), e, _names(g["b"]), e2, "*", int(g["d"]), t)
    if kind == "same":
        return comparison(_names(g["a"]), _names(g["b"]), g["e"], 0, t)
    if kind == "exceeds":
        a, b, e2 = _names(g["a"]), _names(g["b"]), g.get("e2") or g["e"]
        return relation(a, g["e"], b, e2, "+", int(g["d"]), t)
    if kind == "compeq":
        if g["e"] != g["e2"]:
            raise TextError("a comparison of differences across two entities is not supported")
        a, b, c, d = (_names(g[k]) for k in "abcd")
        return CompEq.of(a, b, c, d, g["e"], t)
    if kind == "rate":
        return Rate(_names(g["a"]), g["e"], _plural_of(g["c"], entities), int(g["n"]))
    if kind not in ("get", "give", "give_more"):
        raise TextError(f"unknown statement kind {kind!r}")
    giver = _names(g["g"]) if g.get("g") else (NOBODY,)
    receiver = _names(g["r"]) if g.get("r") else (NOBODY,)
    if giver == receiver:
        raise TextError("a transfer from an agent to itself")
    return Transfer(giver, receiver, g["e"], int(g["d"]), t)


def split_sentences(text: str) -> list[str]:
    """Sentences of a text: split at line ends, and after '.', '?' or '!' and white space.

    Enumeration marks at the start of a line ("1.", "2)", "Step 3:", "-") are dropped.
    """
    out: list[str] = []
    for line in text.splitlines():
        line = _ENUM.sub("", line)
        out.extend(s for s in (p.strip() for p in _SPLIT.split(line.strip())) if s)
    return out


@dataclass(frozen=True, slots=True)
class ParsedProblem:
    """A problem read from text: its program, each axiom's sentence, and the question."""

    program: Program
    sentences: tuple[str, ...]
    question: str
    #: for "How many E does A have more (less) than B?": (A, B, +1) or (A, B, -1)
    ask: tuple[Agent, Agent, int] | None = None
    #: for a ground query ("Prove that Eddie has 26 parrots."): the statement to prove
    claim: Atom | None = None


_GROUND = _p(r"(?:Prove|Show) that (?P<s>.+)")
_COMP_QUESTION = _p(
    rf"How many (?P<e>{_ENT}) does (?P<a>{_NAME}) have (?P<dir>more|less|fewer) than"
    rf" (?P<b>{_NAME})(?: has (?P=e))?\?"
)


def _question(
    s: str, t: int, members: dict[str, list[str]], containers: set[tuple[str, str]]
) -> tuple[Query, tuple]:
    for rx in _QUESTIONS:
        m = rx.fullmatch(s)
        if m is None:
            continue
        who, e = _names(m["a"]), m["e"]
        parts: tuple[tuple[str, str], ...] = ()
        if len(who) > 1 and any(e not in members.get(n, ()) for n in who):
            chosen = []
            for n in who:
                # each member contributes the entity it was first said to have, leaving out
                # the containers of its rates (what it counts is what they hold)
                options = [x for x in members.get(n, []) if (n, x) not in containers]
                if not options:
                    raise TextError(f"the question names {n!r}, who has nothing")
                chosen.append((n, e if e in options else options[0]))
            parts = tuple(chosen)
        return Query(who, e, t), parts
    raise TextError("not a question this reader knows")


def _settle(built: list[tuple[str, Atom]], sides: dict[Transfer, str]) -> list[tuple[str, Atom]]:
    """Time-stamp each statement within the span of time it holds for.

    A statement made after k transfer sentences holds at time k, and at every time back to
    the last transfer that changes a count it talks about and on to the next one (an agent's
    count of its entity; a rate's entity moves with its container). Counts move through that
    span by the frame rule, comparisons do not, so the reader dates each statement at the
    start of its span, and a comparison of differences and the comparisons on its pairs at one
    time that all their spans share. "Zara has 7 pencils more than Elias." said after an
    unrelated transfer thus still meets the comparison of differences said before it, and
    "Malva has 55 more than Antoine." said after a transfer meets the comparison of
    differences that follows it, dated after that transfer because it names the giver.
    Transfers and rates keep their times.
    """
    rates = [x for _, x in built if isinstance(x, Rate)]
    moved_at: list[set[tuple[str, str]]] = []  # per transfer time: the (name, entity) moved
    for _, x in built:
        if not isinstance(x, Transfer):
            continue
        side = sides.get(x)
        names = x.giver if side == "giver" else x.receiver if side == "receiver" else ()
        if side is None:
            names = x.giver + x.receiver
        moved = {(n, x.entity) for n in names}
        moved |= {
            (n, r.entity) for r in rates if r.container == x.entity for n in r.agent if n in names
        }
        moved_at.append(moved)
    horizon = len(moved_at)
    span: dict[int, tuple[int, int]] = {}
    for i, (_, x) in enumerate(built):
        if isinstance(x, Transfer | Rate):
            continue
        talks = {(n, x.entity) for n in _names_of(x)}
        if isinstance(x, Rel):
            talks = {(n, x.a_entity) for n in x.a} | {(n, x.entity) for n in x.b}
        lo = hi = x.time
        while lo > 0 and not (moved_at[lo - 1] & talks):
            lo -= 1
        while hi < horizon and not (moved_at[hi] & talks):
            hi += 1
        span[i] = (lo, hi)
    when = {i: lo for i, (lo, _) in span.items()}
    done: set[int] = set()
    for i, (_, q) in enumerate(built):
        if not isinstance(q, CompEq):
            continue
        pairs = {tuple(sorted(p)) for p in q.pairs}
        group = [i] + [
            j
            for j, (_, k) in enumerate(built)
            if isinstance(k, Comp) and k.entity == q.entity and k.pair in pairs and j not in done
        ]
        t = max(span[j][0] for j in group)
        for j in group:
            if span[j][0] <= t <= span[j][1]:
                when[j] = t
                done.add(j)
    out: list[tuple[str, Atom]] = []
    for i, (raw, x) in enumerate(built):
        t = when.get(i)
        out.append((raw, x if t is None or t == x.time else replace(x, time=t)))
    return out


def _names_of(x: Atom) -> set[str]:
    fields = ("agent", "more", "less", "a", "b", "c", "d")
    return {n for f in fields if isinstance(getattr(x, f, None), tuple) for n in getattr(x, f)}


def parse_problem(text: str) -> ParsedProblem:
    """Read a problem (statements, then the question) into a logic program.

    Raises:
        TextError: naming the first sentence that matches no template, or a problem
            without a question.

    Example:
        >>> p = parse_problem("Ann owns 3 granola bars. Bo has 2 granola bars more than Ann. "
        ...                   "How many granola bars does Bo have?")
        >>> p.program.query
        Query(agent=('Bo',), entity='granola bars', time=0)
    """
    if not isinstance(text, str) or not text.strip():
        raise TextError("empty problem text")
    sentences = split_sentences(text)
    statements: list[tuple[str, _Statement]] = []
    question = None
    for i, raw in enumerate(sentences):
        s = " ".join(raw.replace("\u2019", "'").replace("\u2018", "'").split())
        ground = _GROUND.fullmatch(s.rstrip(".!").strip())
        if s.endswith("?") or ground is not None:
            if i != len(sentences) - 1:
                raise TextError(f"sentence {i + 1} is a question before the end: {_quote(raw)}")
            question = s
            break
        st = _match_statement(s.rstrip(".!").strip())
        if st is None:
            raise TextError(f"cannot read sentence {i + 1}: {_quote(raw)}")
        statements.append((raw, st))
    if question is None:
        raise TextError(
            "the text has no question (a last sentence ending in '?', or 'Prove that ...')"
        )
    entities = {st.match["e"] for _, st in statements}
    claim, asked = _ground_query(question, entities)
    built: list[tuple[str, Atom]] = []
    sides: list[tuple[Transfer, str]] = []
    t = 0
    for raw, st in statements:
        try:
            atom = _build(st, t, entities)
        except (ProgramError, ValueError) as exc:
            raise TextError(f"cannot use sentence {_quote(raw)}: {exc}") from None
        if isinstance(atom, Transfer):
            t += 1
            sides.append((atom, _side(st.kind)))
        built.append((raw, atom))
    axioms: list[Atom] = []
    kept: list[str] = []
    members: dict[str, list[str]] = {}
    for raw, atom in _settle(built, dict(sides)):
        for fld in ("agent", "more", "less", "giver", "receiver", "a", "b", "c", "d"):
            who = getattr(atom, fld, None)
            if isinstance(who, tuple) and len(who) == 1:
                lst = members.setdefault(who[0], [])
                ent = atom.a_entity if isinstance(atom, Rel) and fld == "a" else atom.entity
                if ent not in lst:
                    lst.append(ent)
        if atom not in axioms:
            axioms.append(atom)
            kept.append(raw)
    containers = {(n, x.container) for x in axioms if isinstance(x, Rate) for n in x.agent}
    ask = None
    m = _COMP_QUESTION.fullmatch(asked)
    if m is not None:
        a, b = _names(m["a"]), _names(m["b"])
        ask = (a, b, 1 if m["dir"] == "more" else -1)
        query, parts = Query(a, m["e"], t), ()
    else:
        query, parts = _question(asked, t, members, containers)
    program = Program(
        tuple(axioms),
        query,
        parts=parts,
        bidirectional=True,
        tree_rules=True,
        compare=(ask[:2],) if ask else (),
        one_sided=tuple(sides),
    )
    return ParsedProblem(program, tuple(kept), question, ask, claim)


def parse_own_problem(text: str) -> ParsedProblem | None:
    """Read a problem in this project's own templates (``gsm generate``'s ``problem_text``,
    :mod:`dagmath_viz.logic.verbalize`), or None when a sentence is not in them.

    Those templates say every time stamp ("After round 2, ...", "In round 3, ..."), so the
    program is the generator's own: no reading of time from the order of the sentences.
    """
    from dagmath_viz.logic.verbalize import parse_question, parse_sentence
    from dagmath_viz.logic.verbalize import split_sentences as own_sentences

    if not isinstance(text, str):
        return None
    sentences = own_sentences(" ".join(text.split()))
    if len(sentences) < 2:
        return None
    query = parse_question(sentences[-1])
    if query is None:
        return None
    axioms: list[Atom] = []
    kept: list[str] = []
    for raw in sentences[:-1]:
        atom = parse_sentence(raw)
        if atom is None:
            return None
        if atom not in axioms:
            axioms.append(atom)
            kept.append(raw)
    try:
        program = Program(tuple(axioms), query)
    except (ProgramError, ValueError):
        return None
    return ParsedProblem(program, tuple(kept), sentences[-1])


def _ground_query(question: str, entities: set[str]) -> tuple[Atom | None, str]:
    """A ground query ("Prove that Eddie has 26 parrots.", the authors' ``groundquery``):
    the statement claimed and the question it answers ("How many parrots does Eddie
    have?"); an ordinary question is returned as it is, with no claim.

    Raises:
        TextError: when the statement to prove is not a count or a comparison.
    """
    m = _GROUND.fullmatch(question.rstrip(".!").strip())
    if m is None:
        return None, question
    said = _read_one(normalize(m["s"]), _Ctx(frozenset(entities)))
    atom = said.atom if said is not None else None
    if isinstance(atom, Cont):
        does = "does" if len(atom.agent) == 1 else "do"
        return atom, f"How many {atom.entity} {does} {_list(atom.agent)} have?"
    if isinstance(atom, Comp) and atom.diff > 0:
        return atom, f"How many {atom.entity} does {_list(atom.more)} have more than" + (
            f" {_list(atom.less)}?"
        )
    raise TextError(f"cannot read the statement to prove: {_quote(question)}")


# --- proofs ------------------------------------------------------------------------------

_CONCL = (
    r"(?:(?:So|Therefore|Thus|Hence|Then|Now|Finally|As a result|In total|Altogether),? |"
    r"(?:This|That|Which)"
    r" means(?: that)? |It follows that |We (?:know|get|find) that )?"
)
_EQ = rf"(?:{_EXPR}= ?)?"
_PROOF_EXTRA: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "cont",
        _p(
            rf"{_CONCL}(?P<a>{_NAME}) (?:now )?(?:has|owns|possesses) {_EQ}(?P<q>{_NUM})"
            rf" (?P<e>{_ENT})(?: in total| in all| altogether| combined| now| left)?"
        ),
    ),
    (
        "more",
        _p(
            rf"{_CONCL}(?P<a>{_NAME}) has {_EQ}(?P<d>{_NUM}) (?P<e>{_ENT}) (?P<dir>more|less|fewer)"
            rf" than (?P<b>{_NAME})(?: has (?P<e2>{_ENT}))?"
        ),
    ),
    (
        "more",
        _p(
            rf"{_CONCL}(?P<a>{_NAME}) has {_EQ}(?P<d>{_NUM}) (?P<dir>more|less|fewer) (?P<e>{_ENT})"
            rf" than (?P<b>{_NAME})(?: has (?P<e2>{_ENT}))?"
        ),
    ),
    (
        "times",
        _p(
            rf"{_CONCL}(?P<a>{_NAME}) has {_EQ}(?P<d>{_NUM}) times as many (?P<e>{_ENT}) as"
            rf" (?P<b>{_NAME})(?: has (?P<e2>{_ENT}))?"
        ),
    ),
    (
        "frac",
        _p(
            rf"{_CONCL}(?P<b>{_NAME}) has (?:1/\({_EXPR}\) ?= ?)?1/(?P<d>{_NUM}) as many"
            rf" (?P<e2>{_ENT}) as (?P<a>{_NAME})(?: has (?P<e>{_ENT}))?"
        ),
    ),
    (
        "diff",
        _p(
            rf"{_CONCL}[Tt]he difference between the number of (?P<e>{_ENT}) (?P<a>{_NAME}) and"
            rf" (?P<b>{_NAME}) have is {_EQ}(?P<d>{_NUM})"
        ),
    ),
    (
        # "The difference between Dennie and Dianna is 19 - 4 = 15." (no entity named: the
        # goal's entity is meant, see parse_proof_text)
        "diff",
        _p(
            rf"{_CONCL}[Tt]he difference between (?P<a>{_NAME}) and (?P<b>{_NAME}) is {_EQ}"
            rf"(?P<d>{_NUM})(?: (?P<e>{_ENT}))?"
        ),
    ),
    (
        "group",
        _p(
            rf"{_CONCL}(?P<a>{_LIST}) (?:together )?have (?:a total of |in total )?{_EQ}"
            rf"(?P<q>{_NUM}) (?P<e>{_ENT})(?: in total| combined| altogether)?"
        ),
    ),
    (
        "group",
        _p(
            rf"{_CONCL}[Ii]f (?P<a>{_LIST}) sum up the (?P<e>{_ENT}) that they have, they have"
            rf" {_EQ}(?P<q>{_NUM})(?: (?P=e))? in total"
        ),
    ),
)


@dataclass(frozen=True, slots=True)
class ProofSentence:
    """One sentence of a proof and what it states.

    ``atom`` is the atom read (time 0: proofs do not say times), or None; ``unsigned`` is
    True for "the difference between ... is d", which does not say which side has more.
    """

    text: str
    atom: Atom | None
    unsigned: bool = False
    #: the part of the sentence that did not read (normalized), for a caller that matches
    #: it otherwise (``score-proofs`` matches the equation it states); "" when it read
    part: str = ""
    #: True for a part that did not read in a sentence whose other parts did
    extra: bool = False


@dataclass(frozen=True, slots=True)
class _Ctx:
    """What reading a proof sentence needs from its problem."""

    entities: frozenset[str]
    goal_entity: str | None = None


# A justification after a statement: "… (18 + 9 = 27)", "…, because 19 - 10 = 9", "… since …".
_WHY = re.compile(r"(?:,? (?:because|since) .*| ?\([^()]*\))$")
# Two statements joined in one sentence: "A, so B", "A; therefore B", "A, which means B".
_JOIN = re.compile(
    r"(?:,|;) (?:and )?(?:so|therefore|thus|hence|which means(?: that)?|meaning(?: that)?|"
    r"(?:this|that) means(?: that)?|which gives(?: us)?|giving(?: us)?|which makes) "
)
# Two statements joined by "and": "Dennie has 19 parrots and Dianna has 4 parrots."
_AND = re.compile(r",? and |, ")
_MAX_MERGED = 6
_SINCE = re.compile(r"(?:Since|Because|As|Given that) ", re.IGNORECASE)
_MAX_CLAUSES = 8


def _clauses(s: str, ctx: _Ctx) -> list[str]:
    """The statements a sentence joins: "A, so B" → [A, B]; "Since A, B" → [A, B].

    For "Since A, B" every comma is a candidate end of A (names are listed with commas); the
    first split whose two sides both read is taken. Bounded by ``_MAX_CLAUSES`` commas, so
    reading stays linear in the text.
    """
    parts = _JOIN.split(s, maxsplit=_MAX_CLAUSES)
    if len(parts) > 1:
        return [p for p in parts if p]
    m = _SINCE.match(s)
    if m is None:
        return []
    rest = s[m.end() :]
    commas = [i for i, ch in enumerate(rest) if ch == ","][:_MAX_CLAUSES]
    for i in commas:
        first, second = rest[:i], rest[i + 1 :].strip()
        if _read_one(first, ctx) is not None and _read_one(second, ctx) is not None:
            return [first, second]
    return []


def _read_one(s: str, ctx: _Ctx) -> ProofSentence | None:
    """One statement (normalized text), with a trailing justification dropped if need be."""
    got = _read_statement(s, s, ctx)
    if got.atom is None:
        bare = _WHY.sub("", s)
        if bare != s and bare:
            got = _read_statement(s, bare, ctx)
    return got if got.atom is not None else None


def _merged(s: str, ctx: _Ctx, depth: int = 0) -> list[ProofSentence]:
    """The statements a sentence lists with "and" or commas, when each of them reads.

    "Dennie has 19 parrots and Dianna has 4 parrots" → both counts. Every separator is a
    candidate end of the first statement (names are listed with "and" too: "A and B
    together have 9 E" reads whole before this is tried); the rest may list one more.
    Bounded by ``_MAX_MERGED`` separators and two levels, so reading stays linear.
    """
    for m in list(_AND.finditer(s))[:_MAX_MERGED]:
        first = _read_one(s[: m.start()], ctx)
        if first is None:
            continue
        rest = s[m.end() :]
        second = _read_one(rest, ctx)
        if second is not None:
            return [first, second]
        more = _merged(rest, ctx, depth + 1) if depth < 1 else []
        if more:
            return [first, *more]
    return []


def _read_proof_sentence(raw: str, ctx: _Ctx) -> list[ProofSentence]:
    """What one sentence states: one statement, or each of the statements it joins.

    A part that does not read is kept (``atom`` None, ``part`` its text) when the sentence
    says nothing else or when it carries an equation (which a caller may still match);
    other unread parts of a sentence whose other parts read are dropped.
    """
    s = normalize(raw)
    if len(s) > MAX_SENTENCE:
        return [ProofSentence(raw, None)]
    one = _read_one(s, ctx)
    if one is not None:
        return [replace(one, text=raw)]
    out: list[ProofSentence] = []
    unread: list[str] = []
    for c in _clauses(s, ctx) or [s]:
        got = _read_one(c, ctx)
        read = [got] if got is not None else _merged(c, ctx)
        if read:
            out.extend(replace(x, text=raw) for x in read)
        else:
            unread.append(c)
    if not out:
        return [ProofSentence(raw, None, part=s)]
    out.extend(ProofSentence(raw, None, part=c, extra=True) for c in unread if "=" in c)
    return out


def _read_statement(raw: str, s: str, ctx: _Ctx) -> ProofSentence:
    st = _match_statement(s)
    if st is not None:
        try:
            return ProofSentence(raw, _build(st, 0, ctx.entities))
        except (ProgramError, ValueError):
            pass
    for kind, rx in _PROOF_EXTRA:
        m = rx.fullmatch(s)
        if m is None:
            continue
        g = m.groupdict()
        try:
            if kind == "diff":
                a, b, e = _names(g["a"]), _names(g["b"]), g.get("e") or ctx.goal_entity
                if e is None:
                    continue
                return ProofSentence(raw, comparison(a, b, e, int(g["d"])), unsigned=True)
            atom = _build(_Statement(kind, m), 0, ctx.entities)
        except (ProgramError, ValueError):
            continue
        return ProofSentence(raw, atom)
    return ProofSentence(raw, None)


def parse_proof_text(
    text: str, entities: Iterable[str] = (), goal_entity: str | None = None
) -> list[ProofSentence]:
    """Read every sentence of a proof (see the module docstring for the forms).

    ``entities`` are the problem's (a rate's container is said in the singular);
    ``goal_entity`` is what a difference that names no entity ("The difference between
    Dennie and Dianna is 19 - 4 = 15.") is about: the goal's, as the paper reads it.
    Without it, such a sentence does not read.
    """
    if not isinstance(text, str):
        return []
    ctx = _Ctx(frozenset(entities), goal_entity)
    return [x for s in split_sentences(text) for x in _read_proof_sentence(s, ctx)]


def stated(atom: Atom) -> tuple:
    """What a sentence can say about an atom: the atom without its time stamp.

    Proofs in natural language do not say time stamps, and the frame rule copies a count
    from one time to the next, so two atoms that differ only in time state the same thing.
    """
    if isinstance(atom, Cont):
        return ("cont", atom.agent, atom.entity, atom.quantity)
    if isinstance(atom, Comp):
        return ("comp", atom.more, atom.less, atom.entity, atom.diff)
    if isinstance(atom, CompEq):
        return ("compeq", atom.a, atom.b, atom.c, atom.d, atom.entity)
    if isinstance(atom, Transfer):
        return ("transfer", atom.giver, atom.receiver, atom.entity, atom.amount)
    if isinstance(atom, Rel):
        return ("rel", atom.a, atom.a_entity, atom.b, atom.entity, atom.op, atom.n)
    return ("rate", atom.agent, atom.entity, atom.container, atom.rate)


# --- saying theorems in the authors' style --------------------------------------------------


def _list(a: Agent) -> str:
    return a[0] if len(a) == 1 else ", ".join(a[:-1]) + " and " + a[-1]


def say(atom: Atom, program: Program) -> str:
    """One sentence for a theorem, in the authors' templates (read back by this module).

    Example:
        >>> from dagmath_viz.logic.program import Query
        >>> say(Cont(("Ann",), "granola bars", 4), Program((), Query(("Ann",), "x")))
        'Ann has 4 granola bars.'
    """
    if isinstance(atom, Cont):
        q = program.query
        if len(atom.agent) > 1 and atom.agent == q.agent and atom.entity == q.entity:
            return (
                f"If {_list(atom.agent)} sum up the {atom.entity} that they have, they have"
                f" {atom.quantity} in total."
            )
        if len(atom.agent) > 1:
            return f"{_list(atom.agent)} together have {atom.quantity} {atom.entity}."
        return f"{atom.agent[0]} has {atom.quantity} {atom.entity}."
    if isinstance(atom, Comp):
        return f"{_list(atom.more)} has {atom.diff} {atom.entity} more than {_list(atom.less)}."
    if isinstance(atom, CompEq):
        a, b, c, d = (_list(x) for x in (atom.a, atom.b, atom.c, atom.d))
        return (
            f"The number of {atom.entity} that {a} has more than {b} is the same as the"
            f" difference between the number of {atom.entity} that {c} has compared to {d}."
        )
    if isinstance(atom, Rel):
        a, b = _list(atom.a), _list(atom.b)
        if atom.op == "*":
            return f"{a} has {atom.n} times as many {atom.a_entity} as {b} has {atom.entity}."
        return f"{a} has {atom.n} {atom.a_entity} more than {b} has {atom.entity}."
    if isinstance(atom, Transfer):
        side = dict(program.one_sided).get(atom, "receiver")
        g, r, e, d = _list(atom.giver), _list(atom.receiver), atom.entity, atom.amount
        if side == "receiver":
            return (
                f"{r} then gets {d} more {e}."
                if g == NOBODY
                else (f"{r} then gets {d} more {e} from {g}.")
            )
        return f"{g} then loses {d} {e}." if r == NOBODY else f"{g} then donates {d} {e} to {r}."
    c = atom.container
    one = (
        c[:-3] + "y"
        if c.endswith("ies")
        else c[:-2]
        if c.endswith(("xes", "ches", "shes"))
        else c[:-1]
    )
    return f"{_list(atom.agent)} possesses {atom.rate} {atom.entity} per {one}."
