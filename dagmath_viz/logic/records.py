"""JSON records: generated problems, simulated reasoners' proofs, and reading them back.

A *problem record* (one line of ``dagmath gsm generate`` output) holds the problem text,
the question, the axioms (in problem order), the query, the answer and the shortest proof.
A *proof record* (``dagmath gsm solve``) holds what one strategy wrote for one problem, the
theorems parsed back from that text with their premises, and its efficiency.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from dagmath_viz import jsonio
from dagmath_viz.logic.chaining import forward_chain
from dagmath_viz.logic.efficiency import (
    STRATEGIES,
    efficiency,
    normalized_levenshtein,
    search_order_distance,
)
from dagmath_viz.logic.generator import Problem
from dagmath_viz.logic.program import (
    Atom,
    Program,
    ProgramError,
    atom_from_dict,
    atom_to_dict,
    query_from_dict,
    query_to_dict,
)
from dagmath_viz.logic.proofs import Proof, ProofStep, shortest_proof
from dagmath_viz.logic.rules import Hyperedge, check_consistency
from dagmath_viz.logic.verbalize import parse_proof, verbalize
from dagmath_viz.schema import InputError
from dagmath_viz.text import natural_key

__all__ = [
    "LoadedProblem",
    "ProblemChoice",
    "problem_choices",
    "problem_from_record",
    "proofs_of",
    "problem_to_record",
    "proof_steps_to_records",
    "read_jsonl",
    "solve_record",
    "write_jsonl",
]


def proof_steps_to_records(steps: Iterable[ProofStep]) -> list[dict[str, Any]]:
    """Steps as JSON: theorem, rule, premises as indices of earlier steps (None for axioms)."""
    out: list[dict[str, Any]] = []
    index: dict[Atom, int] = {}
    for s in steps:
        premises = None if s.rule is None else [index[p] for p in s.premises]
        out.append({"theorem": atom_to_dict(s.theorem), "rule": s.rule, "premises": premises})
        index[s.theorem] = len(out) - 1
    return out


def _steps_from_records(rows: Any, where: str) -> tuple[ProofStep, ...]:
    if not isinstance(rows, list):
        raise ProgramError(f"{where}: expected a list of steps")
    steps: list[ProofStep] = []
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise ProgramError(f"{where}[{i}]: expected an object")
        atom, prem = atom_from_dict(row.get("theorem")), row.get("premises")
        if prem is None:
            steps.append(ProofStep(atom))
            continue
        if not isinstance(prem, list) or not all(
            isinstance(j, int) and not isinstance(j, bool) and 0 <= j < i for j in prem
        ):
            raise ProgramError(f"{where}[{i}]: premises must be indices of earlier steps")
        steps.append(ProofStep(atom, str(row.get("rule")), tuple(steps[j].theorem for j in prem)))
    return tuple(steps)


def problem_to_record(problem: Problem) -> dict[str, Any]:
    """The JSON record of a generated problem."""
    return {
        "problem_id": problem.problem_id,
        "seed": problem.seed,
        "problem_text": problem.text,
        "question": problem.question,
        "sentences": list(problem.sentences),
        "axioms": [atom_to_dict(x) for x in problem.program.axioms],
        "relevant": list(problem.relevant),
        "query": query_to_dict(problem.program.query),
        "answer": problem.answer,
        "shortest_proof": proof_steps_to_records(problem.proof.steps),
        "shortest_size": problem.proof.size,
        "depth": problem.proof.depth,
        "n_axioms": len(problem.program.axioms),
        "irrelevant": problem.irrelevant,
        "overlap": problem.overlap,
        "control": problem.control,
    }


@dataclass(frozen=True, slots=True)
class LoadedProblem:
    """A problem record, validated: the program, the answer, the reference shortest proof."""

    problem_id: Any
    program: Program
    answer: int | None
    shortest: Proof | None
    record: Mapping[str, Any]


def problem_from_record(record: Mapping[str, Any]) -> LoadedProblem:
    """Validate a problem record; raise ProgramError naming the first fault."""
    if not isinstance(record, Mapping):
        raise ProgramError("a problem record must be a JSON object")
    pid = record.get("problem_id")
    if not isinstance(pid, int | str) or isinstance(pid, bool):
        raise ProgramError("problem record: problem_id must be an integer or a string")
    axioms = record.get("axioms")
    if not isinstance(axioms, list) or not axioms:
        raise ProgramError(f"problem {pid}: axioms must be a non-empty list")
    try:
        query = query_from_dict(record.get("query"))
        program = Program(tuple(atom_from_dict(a) for a in axioms), query)
        steps = record.get("shortest_proof")
        shortest = Proof(_steps_from_records(steps, "shortest_proof")) if steps else None
    except ProgramError as exc:
        raise ProgramError(f"problem {pid}: {exc}") from None
    answer = record.get("answer")
    if answer is not None and (not isinstance(answer, int) or isinstance(answer, bool)):
        raise ProgramError(f"problem {pid}: answer must be an integer")
    return LoadedProblem(pid, program, answer, shortest, record)


def _run(problem: LoadedProblem, strategy: str) -> tuple[list[Atom], dict[Atom, Hyperedge | None]]:
    """The theorems a strategy proves, in order, and the hyperedge of each."""
    if strategy == "shortest":
        proof = shortest_proof(problem.program)
        if proof is None:
            return [], {}
        edges = {
            s.theorem: Hyperedge(s.rule, s.premises, s.theorem) if s.rule else None
            for s in proof.steps
        }
        return list(proof.theorems), edges
    result = forward_chain(problem.program, strategy)
    return list(result.order), dict(zip(result.order, result.edges, strict=True))


def _theorem_rows(
    theorems: list[Atom], edges: Mapping[Atom, Hyperedge | None], sentences: Iterable[str]
) -> list[dict[str, Any]]:
    """Each theorem with its sentence, rule and premises (indices of earlier theorems)."""
    index = {x: i for i, x in enumerate(theorems)}
    rows = []
    for i, (x, text) in enumerate(zip(theorems, sentences, strict=True)):
        e = edges.get(x)
        ok = e is not None and all(index.get(p, i) < i for p in e.tail)
        premises = [index[p] for p in e.tail] if ok else None
        rule = e.rule if ok else None
        rows.append({"theorem": atom_to_dict(x), "text": text, "rule": rule, "premises": premises})
    return rows


# Solving one problem with every strategy checks its program once.
_consistency = lru_cache(maxsize=64)(check_consistency)


def solve_record(problem_record: Mapping[str, Any], strategy: str) -> dict[str, Any]:
    """Run one simulated reasoner on a problem record and score what it wrote.

    The strategy's theorems are verbalized (templates drawn from a generator seeded by the
    problem id and the strategy), the text is parsed back, and efficiency is computed on the
    parsed theorems against the record's shortest proof (recomputed when absent).

    Args:
        problem_record: a record from ``dagmath gsm generate``.
        strategy: ``shortest``, ``dfs``, ``bfs`` or ``overlap``.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")
    prob = problem_from_record(problem_record)
    violations = _consistency(prob.program)
    if violations:
        raise ProgramError(f"problem {prob.problem_id}: inconsistent program: {violations[0]}")
    order, edges = _run(prob, strategy)
    rng = random.Random(f"gsm-solve:{prob.problem_id}:{strategy}")
    proof_text = "\n".join(verbalize(x, rng) for x in order)
    parsed = parse_proof(proof_text)
    theorems = list(parsed.theorems)
    reference = prob.shortest or shortest_proof(prob.program)
    ref_theorems = reference.theorems if reference else ()
    eff = efficiency(theorems, ref_theorems, prob.program.axioms)
    answers = [x.quantity for x in theorems if prob.program.query.matches(x)]
    answer = answers[-1] if answers else None
    dist = search_order_distance(theorems, prob.program)
    # the paper's "efficient DFS" reference: the shortest proof in the order it is written
    axiom_set = set(prob.program.axioms)
    efficient_ref = [x for x in ref_theorems if x not in axiom_set]
    mine = [x for x in dict.fromkeys(theorems) if x not in axiom_set]
    rec = problem_record
    return {
        "problem_id": prob.problem_id,
        "strategy": strategy,
        "proof_text": proof_text,
        "theorems": _theorem_rows(theorems, edges, parsed.sentences),
        "answer": answer,
        "reference_answer": prob.answer,
        "correct": answer is not None and answer == prob.answer,
        "efficiency": eff.efficiency,
        "efficiency_non_axiom": eff.efficiency_non_axiom,
        "recall": eff.recall,
        "exact_match": eff.exact_match,
        "distance_dfs": dist["dfs"],
        "distance_bfs": dist["bfs"],
        "distance_efficient": normalized_levenshtein(mine, efficient_ref),
        "n_theorems": len(theorems),
        "shortest_size": len(ref_theorems),
        "unmatched": len(parsed.unmatched),
        "problem_text": rec.get("problem_text", ""),
        "depth": rec.get("depth", reference.depth if reference else 0),
        "irrelevant": rec.get("irrelevant", "unknown"),
        "overlap": rec.get("overlap", "unknown"),
        "control": bool(rec.get("control", False)),
    }


# --- picking one problem ----------------------------------------------------------------

#: What tells apart records of one problem id: ``gsm generate --paired`` writes one problem
#: in its four overlap conditions under one id, and a file may hold a control variant too.
_VARIANT = ("irrelevant", "overlap", "control")


@dataclass(frozen=True, slots=True)
class ProblemChoice:
    """One problem record as a choice: ``key`` (unique among the choices; the problem id
    alone when no other record has it, so a ``problem=`` link keeps working), ``label``
    (what a picker shows: the id, its irrelevant structure / overlap, ``control`` for a
    control variant, and the record number when all that is still shared) and the record."""

    key: str
    label: str
    record: Mapping[str, Any]


def _variant(record: Mapping[str, Any]) -> tuple[str, str, bool]:
    return (
        str(record.get("irrelevant", "unknown")),
        str(record.get("overlap", "unknown")),
        bool(record.get("control", False)),
    )


def problem_choices(problems: Iterable[Mapping[str, Any]]) -> list[ProblemChoice]:
    """Every problem record as its own choice, in natural order of the id (``2`` before
    ``10``), then the file's order: records sharing a problem id (paired overlap variants, a
    control) are never merged into one.

    Example:
        >>> recs = [{"problem_id": 7, "irrelevant": "tree", "overlap": o} for o in ("none", "both")]
        >>> for c in problem_choices(recs + [{"problem_id": 2}]):
        ...     print(c.key, "|", c.label)
        2 | 2 · unknown / unknown
        7/tree/none | 7 · tree / none
        7/tree/both | 7 · tree / both
    """
    records = list(problems)
    ids = [str(r.get("problem_id")) for r in records]
    per_id: dict[str, int] = {}
    per_variant: dict[tuple[str, tuple[str, str, bool]], int] = {}
    for pid, rec in zip(ids, records, strict=True):
        per_id[pid] = per_id.get(pid, 0) + 1
        per_variant[(pid, _variant(rec))] = per_variant.get((pid, _variant(rec)), 0) + 1
    out = []
    for n, (pid, rec) in enumerate(zip(ids, records, strict=True), 1):
        irrelevant, overlap, control = _variant(rec)
        label = f"{pid} · {irrelevant} / {overlap}" + (" · control" if control else "")
        key = pid
        if per_id[pid] > 1:
            key = f"{pid}/{irrelevant}/{overlap}" + ("/control" if control else "")
            if per_variant[(pid, (irrelevant, overlap, control))] > 1:
                key, label = f"{key}#{n}", f"{label} · record {n}"
        out.append(ProblemChoice(key, label, rec))
    order = sorted(range(len(out)), key=lambda i: (natural_key(ids[i]), i))
    return [out[i] for i in order]


def proofs_of(
    proofs: Iterable[Mapping[str, Any]], problem: Mapping[str, Any]
) -> list[Mapping[str, Any]]:
    """The proof records of one problem record: the same problem id and, where both say
    it, the same irrelevant structure, overlap and control flag (``gsm solve`` copies
    them from the problem), so each paired variant gets its own proofs."""
    pid = str(problem.get("problem_id"))
    out = []
    for proof in proofs:
        if str(proof.get("problem_id")) != pid:
            continue
        same = True
        for key in _VARIANT:
            mine, theirs = problem.get(key), proof.get(key)
            if mine is None or theirs is None or "unknown" in (mine, theirs):
                continue
            same = same and (
                bool(mine) == bool(theirs) if key == "control" else str(mine) == str(theirs)
            )
        if same:
            out.append(proof)
    return out


# --- JSONL -------------------------------------------------------------------------------


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSON-lines file of objects; raise InputError naming the file and line."""
    p = Path(path)
    out = []
    for location, obj in jsonio.read_jsonl(p):  # BOM, nesting limit, located errors
        if isinstance(obj, InputError):
            raise InputError(f"{p}: {obj}")
        if not isinstance(obj, dict):
            raise InputError(f"{p}: {location}: expected a JSON object")
        out.append(obj)
    return out


def iter_jsonl_lines(records: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """One sorted-keys JSON line per record."""
    for r in records:
        yield json.dumps(r, sort_keys=True, ensure_ascii=False)


def write_jsonl(path: str | Path, records: Iterable[Mapping[str, Any]]) -> int:
    """Write records as JSON lines (keys sorted); return how many were written."""
    lines = list(iter_jsonl_lines(records))
    Path(path).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)
