"""Solve word problems from their text, and score proofs that a model wrote.

``solve_text_record`` reads ``{"id", "text"}`` and answers with the shortest proof;
``score_proof_record`` reads ``{"id", "text", "proof"}`` and scores the proof as
DEFINITIONS.md §6 defines it (the authors' precision and recall, on correct answers).

**Matching.** Each proof sentence is read (:func:`~dagmath_viz.logic.text.parse_proof_text`)
and matched to the theorems of the program's closure by what it states (the atom without its
time stamp, :func:`~dagmath_viz.logic.text.stated`). "The difference between ... is d", which
does not say which side has more, matches either sign. A sentence that matches no theorem is
*unmatched*; sentences without a digit ("Let's think step by step.") state nothing and are
ignored.

**The goal.** The question asks about the last time stamp; when the program gives no count
there (the authors' distractors can make a goal agent give away more than it has), the
latest earlier count of the query answers it.

**Search-order references (the paper's Figure 8).** The authors compare a proof's order with
three orders over the problem's generated trees: ``dfs``, the order in which the trees are
written (each conclusion right after its last premise); ``bfs``, breadth first over the
trees' hypergraph from the axioms in problem order; ``efficient``, the ``dfs`` order kept to
the shortest proof. The trees are not in the text, so they are rebuilt from the rules that
conclude a count (1a, 1b, 2a, 2b, 3, 4, 5a): the introduction rules 1c and 5b are what our
chaining adds beyond the trees, and frame steps state nothing new. Distances are normalised
Levenshtein distances between non-axiom statements.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dagmath_viz.logic.efficiency import efficiency, normalized_levenshtein
from dagmath_viz.logic.program import Atom, Comp, Cont, atom_to_dict, comparison
from dagmath_viz.logic.proofs import Proof, shortest_proofs
from dagmath_viz.logic.rules import Closure, Hyperedge, closure
from dagmath_viz.logic.text import (
    NOBODY,
    ParsedProblem,
    ProofSentence,
    TextError,
    parse_problem,
    parse_proof_text,
    say,
    stated,
)

__all__ = [
    "TREE_RULES",
    "Solved",
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

    Raises:
        TextError: when a sentence cannot be read.
    """
    parsed = parse_problem(text)
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


def _id(record: Mapping[str, Any]) -> Any:
    rid = record.get("id")
    return rid if isinstance(rid, str | int) and not isinstance(rid, bool) else None


def solve_text_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """``{"id", "text"}`` → ``{"id", "answer", "shortest_proof", "axioms", "irrelevant_axioms"}``.

    ``shortest_proof`` is said in the authors' templates (so it scores 1 with
    ``score-proofs``); ``shortest_proof_theorems`` lists the same theorems as atoms.

    A problem that cannot be read gives ``{"id", "error"}`` naming the sentence.
    """
    rid = _id(record)
    text = record.get("text") if isinstance(record, Mapping) else None
    if not isinstance(text, str):
        return {"id": rid, "error": "the record has no 'text' string"}
    try:
        solved = solve_text(text)
    except TextError as exc:
        return {"id": rid, "error": str(exc)}
    if solved.proof is None:
        return {"id": rid, "error": "the question has no answer from these statements"}
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
        "shortest_proof": [say(x, program) for x in _statements(solved.proof)],
        "shortest_proof_theorems": [_say(x) for x in _statements(solved.proof)],
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
    edges: list[Hyperedge] = [
        e
        for e in solved.closure.hyperedges
        if (e.rule in TREE_RULES or e.rule == "6") and e.head not in axioms
    ]
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


_ANSWER = re.compile(
    r"\banswer\b[^0-9]*?(?:is|:|=)\s*[$\\(]*(?:\\boxed\{)?\s*(?P<n>\d+)", re.IGNORECASE
)


def _has_digit(s: str) -> bool:
    return any(ch.isdigit() for ch in s)


def score_proof_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """Score one model proof: ``{"id", "text", "proof"[, "answer"]}`` → a scored record.

    Output fields: ``answer`` (the model's: the last matched count of the query's agent and
    entity), ``reference_answer``, ``correct``, ``efficiency``, ``efficiency_non_axiom``,
    ``recall``, ``exact_match`` (these four None unless correct), ``n_statements`` (|P|),
    ``shortest_size`` (|S|), ``matched`` (per sentence: the theorem, or None),
    ``unmatched`` (sentences), ``distance`` (to each Figure 8 reference), ``steps`` (for the
    DAG-MATH export). A problem that cannot be read gives ``{"id", "error"}``.
    """
    rid = _id(record)
    text, proof_text = record.get("text"), record.get("proof")
    if not isinstance(text, str) or not isinstance(proof_text, str):
        return {"id": rid, "error": "the record needs 'text' and 'proof' strings"}
    try:
        solved = solve_text(text)
    except TextError as exc:
        return {"id": rid, "error": str(exc)}
    if solved.proof is None:
        return {"id": rid, "error": "the question has no answer from these statements"}
    program = solved.parsed.program
    by_key: dict[tuple, Atom] = {}
    for x in solved.closure.theorems:
        by_key.setdefault(stated(x), x)
    axioms = {stated(x) for x in program.axioms}
    shortest = [stated(x) for x in _statements(solved.proof)]
    entities = {getattr(x, "entity", "") for x in program.axioms}
    sentences = parse_proof_text(proof_text, entities)

    stated_keys: list[Any] = []  # P in order: a theorem key, or ("unmatched", text)
    matched_rows, unmatched = [], []
    final_answer = None
    theorem_keys, in_shortest = set(by_key), set(shortest)
    for s in sentences:
        said = _ANSWER.search(s.text)
        if said is not None and s.atom is None:
            final_answer = int(said["n"])
            matched_rows.append({"text": s.text, "theorem": None, "ignored": True})
            continue
        key = _match(s, theorem_keys)
        if key is None:
            if not _has_digit(s.text):
                matched_rows.append({"text": s.text, "theorem": None, "ignored": True})
                continue
            unmatched.append(s.text)
            stated_keys.append(("unmatched", " ".join(s.text.split())))
            matched_rows.append({"text": s.text, "theorem": None})
            continue
        stated_keys.append(key)
        matched_rows.append(
            {
                "text": s.text,
                "theorem": atom_to_dict(by_key[key]),
                "key": key,
                "in_shortest": key in in_shortest,
                "axiom": key in axioms,
            }
        )

    q = program.query
    said_goal = [
        s.atom.quantity
        for s in sentences
        if isinstance(s.atom, Cont) and s.atom.agent == q.agent and s.atom.entity == q.entity
    ]
    ask = solved.parsed.ask
    if ask is not None:
        said_goal = [
            ask[2] * s.atom.value(ask[0])
            for s in sentences
            if isinstance(s.atom, Comp)
            and s.atom.pair == tuple(sorted(ask[:2]))
            and s.atom.entity == q.entity
        ]
    model_answer = record.get("answer")
    if not isinstance(model_answer, int) or isinstance(model_answer, bool):
        model_answer = final_answer if final_answer is not None else None
    if model_answer is None and said_goal:
        model_answer = said_goal[-1]
    correct = model_answer is not None and model_answer == solved.answer

    steps = _steps(matched_rows, solved.closure, axioms)
    for r in matched_rows:
        r.pop("key", None)
    eff = efficiency(stated_keys, shortest, axioms)
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
