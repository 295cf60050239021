"""Solve word problems from their text, and score proofs that a model wrote.

``solve_text_record`` reads ``{"id", "text"}`` and answers with the shortest proof;
``score_proof_record`` reads ``{"id", "text", "proof"}`` and scores the proof as
DEFINITIONS.md §6 defines it (the authors' precision and recall, on correct answers).

**Matching.** Each proof sentence is read (:func:`~dagmath_viz.logic.text.parse_proof_text`)
and matched to the theorems of the program's closure by what it states (the atom without its
time stamp, :func:`~dagmath_viz.logic.text.stated`). "The difference between ... is d", which
does not say which side has more, matches either sign; a sentence that states several
theorems counts as each. A sentence the templates do not read (or whose reading is no
theorem) matches the conclusions its correct equations give, when it names the
conclusion's agent and entity, as the authors' matcher does (``_equation_matches``). A
sentence that matches no theorem is *unmatched*: it counts in |P| but is no non-axiom
theorem; sentences without a digit ("Let's think step by step.") state nothing and are
ignored.

**The goal.** The question asks about the last time stamp; when the program gives no count
there (the authors' distractors can make a goal agent give away more than it has), the
latest earlier count of the query answers it.

**Search-order references (the paper's Figure 8).** The authors compare a proof's order with
three orders over the problem's generated trees: ``dfs``, the order in which the trees are
written (each conclusion right after its last premise); ``bfs``, breadth first over the
trees' hypergraph from the axioms in problem order; ``efficient``, the ``dfs`` order kept to
the shortest proof. The trees are not in the text, so they are rebuilt from the rules that
conclude a count (1a, 1b, 2a, 2b, 3, 4, 5a) and from rule 1c where the trees use it: for the
comparison that a compeq's elimination needs (the pair whose counts are known without the
compeq, see ``_tree_edges``) and for a comparison the question asks for. Other uses of 1c,
and 5b, are what our chaining adds beyond the trees; frame steps state nothing new.
Distances are normalised Levenshtein distances between non-axiom statements.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dagmath_viz.logic.efficiency import efficiency, normalized_levenshtein
from dagmath_viz.logic.program import (
    Atom,
    Comp,
    CompEq,
    Cont,
    Program,
    Rel,
    atom_to_dict,
    comparison,
)
from dagmath_viz.logic.proofs import Proof, shortest_proofs
from dagmath_viz.logic.rules import Closure, Hyperedge, closure
from dagmath_viz.logic.text import (
    MAX_SENTENCE,
    NOBODY,
    ParsedProblem,
    ProofSentence,
    TextError,
    normalize,
    parse_own_problem,
    parse_problem,
    parse_proof_text,
    say,
    stated,
)

__all__ = [
    "MAX_DIGITS",
    "TREE_RULES",
    "Solved",
    "equations",
    "reference_orders",
    "score_proof_record",
    "solve_text",
    "solve_text_record",
]

TREE_RULES = frozenset(("1a", "1b", "2a", "2b", "3", "4", "5a", "7a", "7b"))


@dataclass(frozen=True, slots=True)
class Solved:
    """A problem read and solved: program, closure, goal and shortest proof."""

    parsed: ParsedProblem
    closure: Closure
    goal: Atom | None
    proof: Proof | None

    @property
    def answer(self) -> int | None:
        """The goal's quantity (or asked difference), or None when there is no answer."""
        if isinstance(self.goal, Comp) and self.parsed.ask is not None:
            a, _, sign = self.parsed.ask
            return sign * self.goal.value(a)
        return self.goal.quantity if isinstance(self.goal, Cont) else None


def _goal(parsed: ParsedProblem, clos: Closure) -> Atom | None:
    q = parsed.program.query
    best = None
    if parsed.ask is not None:
        pair = tuple(sorted(parsed.ask[:2]))
        for x in clos.theorems:
            if isinstance(x, Comp) and x.pair == pair and x.entity == q.entity:
                if x.time == q.time:
                    return x
                if x.time < q.time and (best is None or x.time > best.time):
                    best = x
        return best
    for x in clos.theorems:
        if isinstance(x, Cont) and x.agent == q.agent and x.entity == q.entity:
            if x.time == q.time:
                return x
            if x.time < q.time and (best is None or x.time > best.time):
                best = x
    return best


def solve_text(text: str) -> Solved:
    """Read a problem and find its answer and shortest proof.

    The text is read in the authors' templates (:func:`~dagmath_viz.logic.text.parse_problem`)
    or, failing that, in this project's own (``gsm generate``'s problems).

    Raises:
        TextError: when a sentence cannot be read (in the authors' templates).
    """
    try:
        parsed = parse_problem(text)
    except TextError:
        own = parse_own_problem(text)
        if own is None:
            raise
        parsed = own
    clos = closure(parsed.program)
    goal = _goal(parsed, clos)
    proofs = shortest_proofs(parsed.program, goal, clos, limit=1) if goal is not None else []
    return Solved(parsed, clos, goal, proofs[0] if proofs else None)


def _say(atom: Atom) -> str:
    return str(atom).replace(f"({NOBODY}", "(someone")


def _statements(proof: Proof) -> list[Atom]:
    """Proof theorems with frame copies dropped (they state what their premise states)."""
    seen, out = set(), []
    for s in proof.steps:
        key = stated(s.theorem)
        if key not in seen:
            seen.add(key)
            out.append(s.theorem)
    return out


def _in_tree_order(solved: Solved) -> list[Atom]:
    """The shortest proof's statements in the order the authors' trees are written (the
    "efficient" search order), so that it scores distance 0 to it; in the proof's own
    order when that order would put a conclusion before one of its premises."""
    atoms = _statements(solved.proof)
    at = {k: i for i, k in enumerate(reference_orders(solved)["efficient"])}
    if not all(stated(x) in at for x in atoms):
        return atoms
    ordered = sorted(atoms, key=lambda x: at[stated(x)])
    pos = {stated(x): i for i, x in enumerate(ordered)}
    for step in solved.proof.steps:
        if any(pos[stated(p)] > pos[stated(step.theorem)] for p in step.premises):
            return atoms
    return ordered


def _id(record: Mapping[str, Any]) -> Any:
    """The record's ``id`` (or a problem record's ``problem_id``)."""
    rid = record.get("id", record.get("problem_id"))
    return rid if isinstance(rid, str | int) and not isinstance(rid, bool) else None


def _text(record: Mapping[str, Any]) -> Any:
    """The problem text: ``text``, or a problem record's ``problem_text`` (``gsm generate``)."""
    text = record.get("text")
    return record.get("problem_text") if text is None else text


def _unsolved(solved: Solved) -> str | None:
    """Why a read problem has no answer, or None when it has one."""
    if solved.proof is None:
        return "the question has no answer from these statements"
    claim = solved.parsed.claim
    if claim is not None and _claimed(claim, solved) != solved.answer:
        return f"the statement to prove does not follow: these statements give {solved.answer}"
    return None


def _claimed(claim: Atom, solved: Solved) -> int | None:
    if isinstance(claim, Cont):
        return claim.quantity
    ask = solved.parsed.ask
    return ask[2] * claim.value(ask[0]) if isinstance(claim, Comp) and ask else None


def solve_text_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """``{"id", "text"}`` → ``{"id", "answer", "shortest_proof", "axioms", "irrelevant_axioms"}``.

    A problem record of ``gsm generate`` (``{"problem_id", "problem_text", ...}``) is read
    from its text alone, the same way. A ground query ("Prove that Eddie has 26 parrots.")
    is answered with the count it states, when that count follows.

    ``shortest_proof`` is said in the authors' templates (so it scores 1 with
    ``score-proofs``); ``shortest_proof_theorems`` lists the same theorems as atoms.

    A problem that cannot be read gives ``{"id", "error"}`` naming the sentence.
    """
    rid = _id(record)
    text = _text(record) if isinstance(record, Mapping) else None
    if not isinstance(text, str):
        return {"id": rid, "error": "the record has no 'text' (or 'problem_text') string"}
    try:
        solved = solve_text(text)
    except TextError as exc:
        return {"id": rid, "error": str(exc)}
    why = _unsolved(solved)
    if why is not None:
        return {"id": rid, "error": why}
    program = solved.parsed.program
    used = {stated(x) for x in solved.proof.theorems}
    irrelevant = [
        s
        for x, s in zip(program.axioms, solved.parsed.sentences, strict=True)
        if stated(x) not in used
    ]
    out: dict[str, Any] = {
        "id": rid,
        "answer": solved.answer,
        "shortest_proof": [say(x, program) for x in _in_tree_order(solved)],
        "shortest_proof_theorems": [_say(x) for x in _in_tree_order(solved)],
        "axioms": len(program.axioms),
        "irrelevant_axioms": irrelevant,
    }
    if solved.closure.violations:
        out["inconsistencies"] = len(solved.closure.violations)
    return out


# --- search-order references --------------------------------------------------------------


def reference_orders(solved: Solved) -> dict[str, list[tuple]]:
    """The Figure 8 reference orders (statements, axioms included): dfs, bfs, efficient."""
    program = solved.parsed.program
    axioms = list(program.axioms)
    edges = _tree_edges(solved.closure, program)
    by_premise: dict[Atom, list[int]] = defaultdict(list)
    for i, e in enumerate(edges):
        for p in set(e.tail):
            by_premise[p].append(i)

    def walk(bfs: bool) -> list[Atom]:
        """Axioms in problem order; each conclusion once its last premise is visited."""
        need = [len(set(e.tail)) for e in edges]
        done: set[Atom] = set()
        order: list[Atom] = []
        agenda: deque[Atom] = deque(axioms if bfs else ())
        for a in [None] if bfs else axioms:
            if not bfs:
                agenda.append(a)
            while agenda:
                y = agenda.popleft() if bfs else agenda.pop()
                if y in done:
                    continue
                done.add(y)
                order.append(y)
                ready = []
                for i in by_premise.get(y, ()):
                    need[i] -= 1
                    if need[i] == 0:
                        ready.append(edges[i].head)
                agenda.extend(ready if bfs else reversed(ready))
        return order

    def dedup(atoms: list[Atom]) -> list[tuple]:
        return list(dict.fromkeys(stated(x) for x in atoms))

    dfs = dedup(walk(False))
    shortest = {stated(x) for x in solved.proof.theorems} if solved.proof else set()
    return {
        "dfs": dfs,
        "bfs": dedup(walk(True)),
        "efficient": [x for x in dfs if x in shortest],
    }


def _tree_edges(clos: Closure, program: Program) -> list[Hyperedge]:
    """The hyperedges of the authors' trees: the rules that conclude a count, frame steps,
    and rule 1c where a tree uses it.

    A tree concludes by 1c the comparison that a compeq's elimination (5a) needs: the
    pair whose two counts are known without that compeq ("So the difference between the
    number of parrots Dennie and Dianna have is 19 - 4 = 15."), never the other pair (its
    count is what the compeq concludes). So each compeq gets the 1c steps of the first of
    its pairs whose counts the trees reach, as the trees grow, and none when a comparison of
    one of its pairs is stated or concluded otherwise ("Davida has 5 candy bars more than
    Chloette." as an axiom); a pair that the question asks to compare always gets them (the
    goal is that comparison).
    """
    axioms = set(program.axioms)
    kept = [
        e
        for e in clos.hyperedges
        if (e.rule in TREE_RULES or e.rule == "6") and e.head not in axioms
    ]
    intro = [e for e in clos.hyperedges if e.rule == "1c" and e.head not in axioms]
    asked = {frozenset(p) for p in program.compare}
    kept += [e for e in intro if isinstance(e.head, Comp) and frozenset(e.head.pair) in asked]
    open_pairs = [
        ({frozenset(p) for p in x.pairs}, x.entity) for x in program.axioms if isinstance(x, CompEq)
    ]
    while open_pairs:
        reached = _reach(axioms, kept)
        compared = {(frozenset(x.pair), x.entity) for x in reached if isinstance(x, Comp)}
        ready = [e for e in intro if isinstance(e.head, Comp) and all(p in reached for p in e.tail)]
        progress = False
        for pairs, entity in list(open_pairs):
            if any((p, entity) in compared for p in pairs):  # stated, or concluded otherwise
                open_pairs.remove((pairs, entity))
                progress = True
                continue
            new = [e for e in ready if frozenset(e.head.pair) in pairs and e.head.entity == entity]
            if new:
                kept += new
                open_pairs.remove((pairs, entity))
                progress = True
        if not progress:
            break
    return kept


def _reach(axioms: set[Atom], edges: list[Hyperedge]) -> set[Atom]:
    """Every atom the edges conclude from the axioms (forward, each edge once)."""
    need = [len(set(e.tail)) for e in edges]
    by_premise: dict[Atom, list[int]] = defaultdict(list)
    for i, e in enumerate(edges):
        for p in set(e.tail):
            by_premise[p].append(i)
    done, agenda = set(axioms), list(axioms)
    while agenda:
        y = agenda.pop()
        for i in by_premise.get(y, ()):
            need[i] -= 1
            if need[i] == 0 and edges[i].head not in done:
                done.add(edges[i].head)
                agenda.append(edges[i].head)
    return done


# --- scoring --------------------------------------------------------------------------------


def _match(sentence: ProofSentence, theorems: set[tuple]) -> tuple | None:
    atom = sentence.atom
    if atom is None:
        return None
    key = stated(atom)
    if key in theorems:
        return key
    if sentence.unsigned and isinstance(atom, Comp):
        flipped = stated(comparison(atom.less, atom.more, atom.entity, atom.diff))
        if flipped in theorems:
            return flipped
    return None


# "the answer is 26": a bounded gap after "answer", so a sentence of repeated "answer" costs
# linear time, not quadratic (issue 33); the number is read only up to MAX_DIGITS digits.
_ANSWER = re.compile(
    r"\banswer\b[^0-9]{0,80}?(?:is|:|=)\s{0,8}[$\\(]{0,4}(?:\\boxed\{)?\s{0,8}(?P<n>\d+)",
    re.IGNORECASE,
)
#: numbers longer than this are not read as answers or equation terms (no count has them)
MAX_DIGITS = 60

# --- free-form equations, matched as the authors' matcher does -------------------------------
#
# parse_reasoning_models.py (rycolab/reasoning-efficiency) matches a model's step to a
# conclusion of the trees when the step has an equation "lhs = rhs" whose right side is the
# conclusion's value and whose left side, evaluated left to right, gives it, and the step
# names one of the conclusion's agents and its entity. That reads steps the templates do not
# ("Edgar now has 15 + 14 = 29 parrots in his aviary", "..., which gives 15 + 14 = 29").

_RHS = re.compile(r"=\s*(\d+)")
_LHS_CHARS = frozenset("0123456789 +-*/×·()")
_TOKEN = re.compile(r"\d+|[-+*/×·]")
_MAX_LHS = 200


def equations(text: str) -> list[int]:
    """The right sides of the correct equations in a text ("20 - 6 = 14" → [14]).

    Each "=" is looked at once, with at most ``_MAX_LHS`` characters before it, so this
    is linear in the text. The left side is evaluated left to right (as the authors do,
    "/" as whole division); an equation that does not hold is left out.

    Example:
        >>> equations("So Edgar has (14 + 15) = 29 parrots, not 3 * 4 = 13.")
        [29]
    """
    out = []
    for m in _RHS.finditer(text):
        i = m.start()
        j = i
        while j > 0 and i - j < _MAX_LHS and text[j - 1] in _LHS_CHARS:
            j -= 1
        tokens = _TOKEN.findall(text[j:i].replace("(", " ").replace(")", " "))
        rhs = m[1]
        if len(rhs) > MAX_DIGITS or len(tokens) < 3 or any(len(t) > MAX_DIGITS for t in tokens):
            continue
        value = _evaluate(tokens)
        if value is not None and value == int(rhs):
            out.append(value)
    return out


def _evaluate(tokens: list[str]) -> int | None:
    if len(tokens) % 2 == 0 or not all(t.isdigit() for t in tokens[::2]):
        return None
    value = int(tokens[0])
    for op, t in zip(tokens[1::2], tokens[2::2], strict=True):
        n = int(t)
        if op == "+":
            value += n
        elif op == "-":
            value -= n
        elif op in "*×·":
            value *= n
        elif op == "/" and n:
            value //= n
        else:
            return None
        if abs(value) > 10**MAX_DIGITS:
            return None
    return value


def _value(atom: Atom) -> int | None:
    if isinstance(atom, Cont):
        return atom.quantity
    if isinstance(atom, Comp):
        return atom.diff
    return atom.n if isinstance(atom, Rel) else None


def _names_said(atom: Atom) -> list[str]:
    fields = ("agent", "more", "less", "a", "b")
    return [n for f in fields for n in getattr(atom, f, ()) if isinstance(n, str)]


def _equation_matches(text: str, conclusions: list[tuple[tuple, Atom]]) -> list[tuple]:
    """The conclusions a sentence states through an equation, as the authors match them."""
    values = set(equations(text))
    if not values:
        return []
    low = text.lower()
    return [
        key
        for key, atom in conclusions
        if _value(atom) in values
        and getattr(atom, "entity", "").lower() in low
        and any(n.lower() in low for n in _names_said(atom))
    ]


_DIGIT = re.compile(r"\d")


def _has_digit(s: str) -> bool:
    return _DIGIT.search(s) is not None


def _answer_said(text: str) -> int | str | None:
    """The number a "the answer is N" sentence gives; "too long" for an absurd number."""
    said = _ANSWER.search(text)
    if said is None:
        return None
    return _number(said["n"])


def _number(digits: str) -> int | str:
    """The integer a run of digits spells, or "too long" past ``MAX_DIGITS`` digits (Python
    refuses to convert more than 4,300 digits: a 5,000-digit answer was an internal error)."""
    return int(digits) if len(digits) <= MAX_DIGITS else "too long"


def score_proof_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """Score one model proof: ``{"id", "text", "proof"[, "answer"]}`` → a scored record.

    Output fields: ``answer`` (the model's: the last matched count of the query's agent and
    entity), ``reference_answer``, ``correct``, ``efficiency``, ``efficiency_non_axiom``,
    ``recall``, ``exact_match`` (these four None unless correct), ``n_statements`` (|P|),
    ``shortest_size`` (|S|), ``matched`` (per statement: the theorem, or None),
    ``unmatched`` (sentences), ``distance`` (to each Figure 8 reference), ``steps`` (for the
    DAG-MATH export). A problem that cannot be read gives ``{"id", "error"}``.

    A sentence stating several theorems counts as each ("Dennie has 19 parrots and Dianna
    has 4 parrots."); a sentence the templates do not read matches the conclusions its
    correct equations give, as the authors' matcher does (``_equation_matches``); an
    unmatched sentence counts in |P| but is no non-axiom theorem.
    """
    rid = _id(record)
    text, proof_text = _text(record), record.get("proof")
    if not isinstance(text, str) or not isinstance(proof_text, str):
        return {"id": rid, "error": "the record needs 'text' and 'proof' strings"}
    try:
        solved = solve_text(text)
    except TextError as exc:
        return {"id": rid, "error": str(exc)}
    why = _unsolved(solved)
    if why is not None:
        return {"id": rid, "error": why}
    program = solved.parsed.program
    by_key: dict[tuple, Atom] = {}
    for x in solved.closure.theorems:
        by_key.setdefault(stated(x), x)
    axioms = {stated(x) for x in program.axioms}
    conclusions = [(k, x) for k, x in by_key.items() if k not in axioms]
    shortest = [stated(x) for x in _statements(solved.proof)]
    entities = {getattr(x, "entity", "") for x in program.axioms}
    sentences = parse_proof_text(proof_text, entities, program.query.entity)

    stated_keys: list[Any] = []  # P in order: a theorem key, or ("unmatched", text)
    matched_rows, unmatched = [], []
    final_answer: int | str | None = None
    theorem_keys, in_shortest = set(by_key), set(shortest)
    said_atoms: list[Atom] = []  # what the proof states, in order (for its answer)
    for s in sentences:
        said = _answer_said(s.text) if s.atom is None else None
        if said is not None:
            final_answer = said
            matched_rows.append({"text": s.text, "theorem": None, "ignored": True})
            continue
        key = _match(s, theorem_keys)
        keys = [key] if key is not None else []
        if not keys and "=" in (s.part or s.text) and len(s.text) <= MAX_SENTENCE:
            keys = _equation_matches(s.part or normalize(s.text), conclusions)
        if not keys and s.atom is not None:
            said_atoms.append(s.atom)
        if not keys:
            if s.extra or not _has_digit(s.text):
                matched_rows.append({"text": s.text, "theorem": None, "ignored": True})
                continue
            unmatched.append(s.text)
            stated_keys.append(("unmatched", " ".join(s.text.split())))
            matched_rows.append({"text": s.text, "theorem": None})
            continue
        for k in keys:
            said_atoms.append(by_key[k])
            stated_keys.append(k)
            matched_rows.append(
                {
                    "text": s.text,
                    "theorem": atom_to_dict(by_key[k]),
                    "key": k,
                    "in_shortest": k in in_shortest,
                    "axiom": k in axioms,
                }
            )
    if final_answer == "too long":
        return {"id": rid, "error": f"the proof's answer has more than {MAX_DIGITS} digits"}

    q = program.query
    ask = solved.parsed.ask
    if ask is not None:
        said_goal = [
            ask[2] * x.value(ask[0])
            for x in said_atoms
            if isinstance(x, Comp) and x.pair == tuple(sorted(ask[:2])) and x.entity == q.entity
        ]
    else:
        said_goal = [
            x.quantity
            for x in said_atoms
            if isinstance(x, Cont) and x.agent == q.agent and x.entity == q.entity
        ]
    model_answer = record.get("answer")
    if isinstance(model_answer, str) and model_answer.strip().isdecimal():
        model_answer = _number(model_answer.strip())  # "26" as 26
        if model_answer == "too long":
            return {"id": rid, "error": f"the record's answer has more than {MAX_DIGITS} digits"}
    if not isinstance(model_answer, int) or isinstance(model_answer, bool):
        model_answer = final_answer
    elif abs(model_answer) >= 10**MAX_DIGITS:
        return {"id": rid, "error": f"the record's answer has more than {MAX_DIGITS} digits"}
    if model_answer is None and said_goal:
        model_answer = said_goal[-1]
    correct = model_answer is not None and model_answer == solved.answer

    steps = _steps(matched_rows, solved.closure, axioms)
    for r in matched_rows:
        r.pop("key", None)
    eff = efficiency(stated_keys, shortest, axioms, [k for k in stated_keys if k[0] == "unmatched"])
    orders = reference_orders(solved)
    mine = [k for k in dict.fromkeys(stated_keys) if k not in axioms and k[0] != "unmatched"]
    distance = {
        name: normalized_levenshtein(mine, [k for k in ref if k not in axioms])
        for name, ref in orders.items()
    }
    return {
        "id": rid,
        "answer": model_answer,
        "reference_answer": solved.answer,
        "correct": correct,
        "efficiency": eff.efficiency if correct else None,
        "efficiency_non_axiom": eff.efficiency_non_axiom if correct else None,
        "recall": eff.recall if correct else None,
        "exact_match": eff.exact_match if correct else None,
        "n_statements": len(set(stated_keys)),
        "shortest_size": len(shortest),
        "shortest_proof": [_say(by_key[k]) for k in shortest],
        "matched": matched_rows,
        "unmatched": unmatched,
        "distance": distance,
        "steps": steps,
        "problem_text": text,
        "model": str(record.get("model", "model")),
    }


def _steps(rows: list[dict[str, Any]], clos: Closure, axioms: set[tuple]) -> list[dict[str, Any]]:
    """The proof's statements as DAG steps: each matched theorem's premises among earlier ones.

    For a theorem, the rule instance (frame copies looked through) whose premises were all
    stated earlier is chosen; failing that, the one with most premises stated. Axioms and
    unmatched statements have no premises.
    """
    incoming: dict[tuple, list[Hyperedge]] = defaultdict(list)
    for e in clos.hyperedges:
        if e.rule != "6":
            incoming[stated(e.head)].append(e)
    index: dict[tuple, int] = {}
    out: list[dict[str, Any]] = []
    for r in rows:
        if r.get("ignored"):
            continue
        theorem = r["theorem"]
        row: dict[str, Any] = {
            "text": r["text"],
            "theorem": theorem,
            "rule": None,
            "premises": None,
        }
        if theorem is not None:
            key = r["key"]
            if key not in axioms:
                best = max(
                    incoming.get(key, ()),
                    key=lambda e: sum(stated(p) in index for p in e.tail),
                    default=None,
                )
                if best is not None:
                    prem = sorted({index[stated(p)] for p in best.tail if stated(p) in index})
                    row["rule"], row["premises"] = best.rule, prem
            index.setdefault(key, len(out))
        out.append(row)
    return out
