"""Proofs as DAG-MATH trajectories (DEFINITIONS.md §7), and a drawable proof graph.

Export: one step per theorem of a proof record, **in the order the strategy proved them**
(axioms appear where the strategy used them; an axiom is a given, with no parents), its
premises as parents, the goal last. Theorems outside the shortest proof become dead ends or
steps that are not ancestors of the answer. Files follow the official layout
``<DIR>/<model>/<dataset>/problem_<id>_all_samples.json`` with model ``gsm-<strategy>``.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dagmath_viz.formats import official
from dagmath_viz.logic.program import (
    Atom,
    Comp,
    CompEq,
    Cont,
    ProgramError,
    Rel,
    atom_from_dict,
)
from dagmath_viz.logic.records import problem_from_record
from dagmath_viz.logic.rules import RULE_NAMES
from dagmath_viz.schema import UnsafePathError

__all__ = [
    "DATASET",
    "GraphNode",
    "ProofGraph",
    "explain",
    "export_model_proofs",
    "export_trajectories",
    "model_proof_sample",
    "proof_graph",
    "trajectory_sample",
]

DATASET = "gsm-logic"
#: The ``domain`` of an exported strategy's proof: the leaderboard shows such models apart,
#: as simulated strategies (``analysis.tables.LOGIC_STRATEGY_DOMAIN``, the same text).
STRATEGY_DOMAIN = "gsm-logic"
#: The ``domain`` of an exported model proof (``score-proofs --export``): a model's, shown
#: beside the other models.
MODEL_PROOF_DOMAIN = "gsm-logic-model-proof"
_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def _arith(rule: str, premises: list[Atom], head: Atom) -> str:
    conts = [p for p in premises if isinstance(p, Cont)]
    comp = next((p for p in premises if isinstance(p, Comp)), None)
    other = [p for p in premises if not isinstance(p, Cont | Comp | CompEq | Rel)]
    rel = next((p for p in premises if isinstance(p, Rel)), None)
    if rule in ("1a", "1b") and conts and comp and isinstance(head, Cont):
        op = "+" if rule == "1a" else "-"
        return f"{conts[0].quantity} {op} {comp.diff} = {head.quantity}"
    if rule in ("1a", "1b", "7a", "7b") and conts and rel and isinstance(head, Cont):
        op = {"1a": "+", "1b": "-", "7a": "×", "7b": "÷"}[rule]
        return f"{conts[0].quantity} {op} {rel.n} = {head.quantity}"
    if rule == "1c" and len(conts) == 2 and isinstance(head, Comp):
        hi, lo = sorted((c.quantity for c in conts), reverse=True)
        return f"{hi} - {lo} = {head.diff}"
    if rule in ("2a", "2b") and conts and other and isinstance(head, Cont):
        op = "-" if rule == "2a" else "+"
        return f"{conts[0].quantity} {op} {other[0].amount} = {head.quantity}"
    if rule == "3" and isinstance(head, Cont):
        return " + ".join(str(c.quantity) for c in conts) + f" = {head.quantity}"
    if rule == "4" and conts and other and isinstance(head, Cont):
        return f"{conts[0].quantity} × {other[0].rate} = {head.quantity}"
    if rule == "5a" and conts and comp and isinstance(head, Cont):
        return f"{conts[0].quantity} and a difference of {comp.diff} give {head.quantity}"
    if rule == "5b" and comp:
        return f"both differences are {comp.diff}"
    if rule == "6" and isinstance(head, Cont):
        return f"no transfer, still {head.quantity}"
    return ""


def explain(rule: str | None, premises: list[Atom], head: Atom, parents: list[int]) -> str:
    """The ``thinking`` text of a step: the rule, the parent steps and the arithmetic."""
    if rule is None:
        return "Given in the problem."
    name = RULE_NAMES.get(rule, "a rule")
    refs = ", ".join(str(p) for p in parents)
    arith = _arith(rule, premises, head)
    return f"By {name} (rule {rule}) from step(s) {refs}" + (f": {arith}." if arith else ".")


def _check_name(kind: str, name: str) -> str:
    if not _SAFE.fullmatch(name) or ".." in name:
        raise UnsafePathError(f"unsafe {kind} name {name!r}")
    return name


def _premises(row: Mapping[str, Any], i: int, pid: Any) -> list[int] | None:
    """The 0-based premise indices of theorem ``i``, checked to point at earlier theorems."""
    prem = row.get("premises")
    if prem is None:
        return None
    if not isinstance(prem, list) or not all(
        isinstance(j, int) and not isinstance(j, bool) and 0 <= j < i for j in prem
    ):
        raise ProgramError(f"proof of problem {pid}: theorem {i}: bad premises {prem!r}")
    return prem


def _rows(proof_record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    rows = proof_record.get("theorems")
    if not isinstance(rows, list) or not rows or not all(isinstance(r, Mapping) for r in rows):
        raise ProgramError(f"proof of problem {proof_record.get('problem_id')}: no theorems")
    return rows


def trajectory_sample(proof_record: Mapping[str, Any], sample_id: int = 0) -> dict[str, Any]:
    """One DAG-MATH sample (official model-output format) for a proof record."""
    rows, pid = _rows(proof_record), proof_record.get("problem_id")
    atoms = [atom_from_dict(r.get("theorem")) for r in rows]
    steps = []
    for i, (r, atom) in enumerate(zip(rows, atoms, strict=True), 1):
        prem = _premises(r, i - 1, pid)
        parents = None if prem is None else [j + 1 for j in prem]
        premises = [] if prem is None else [atoms[j] for j in prem]
        steps.append(
            {
                "step_id": i,
                "thinking": explain(r.get("rule"), premises, atom, parents or []),
                "direct_dependent_steps": parents,
                "text": str(r.get("text", "")),
            }
        )
    answer = proof_record.get("answer")
    if answer is not None:
        steps[-1]["text"] += f" The final answer is $\\boxed{{{answer}}}$."
    strategy = str(proof_record.get("strategy", "unknown"))
    ref = proof_record.get("reference_answer")
    return {
        "problem_id": proof_record.get("problem_id"),
        "sample_id": sample_id,
        "problem_text": proof_record.get("problem_text", ""),
        "steps": steps,
        "final_answer": steps[-1]["text"],
        "answer": None if ref is None else str(ref),
        # proof depth is no difficulty (DEFINITIONS §3's groups are of Omni-MATH's 1-10
        # scale): kept under its own name, which no DAG-MATH reader takes for one
        "proof_depth": proof_record.get("depth"),
        "domain": STRATEGY_DOMAIN,
        "metadata": {"model": f"gsm-{strategy}", "reasoning_content": ""},
    }


def export_trajectories(
    proof_records: Iterable[Mapping[str, Any]], out_dir: str | Path, dataset: str = DATASET
) -> list[Path]:
    """Write proof records as DAG-MATH model outputs, one model per strategy.

    Records of the same strategy and problem become samples 0, 1, ... in input order.

    Returns:
        The files written, sorted.
    """
    _check_name("dataset", dataset)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in proof_records:
        model = _check_name("model", f"gsm-{r.get('strategy', 'unknown')}")
        pid = _check_name("problem id", str(r.get("problem_id")))
        samples = groups[(model, pid)]
        samples.append(trajectory_sample(r, sample_id=len(samples)))
    written = []
    for (model, pid), samples in sorted(groups.items()):
        folder = Path(out_dir) / model / dataset
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / official.file_name(pid)
        path.write_text(json.dumps(samples, indent=2, ensure_ascii=False) + "\n", "utf-8")
        written.append(path)
    return sorted(written)


def model_proof_sample(scored: Mapping[str, Any], sample_id: int = 0) -> dict[str, Any]:
    """One DAG-MATH sample for a model proof scored by ``dagmath gsm score-proofs``.

    Each statement of the proof is a step, in the model's order; a matched theorem's parents
    are the earlier statements it follows from, an axiom is a given (no parents), and an
    unmatched statement has none. Statements off the shortest proof end up as dead ends.
    """
    rows = scored.get("steps")
    if not isinstance(rows, list) or not rows:
        raise ProgramError(f"scored proof {scored.get('id')}: no steps")
    steps = []
    for i, r in enumerate(rows, 1):
        prem = r.get("premises")
        parents = None if prem is None else [j + 1 for j in prem]
        if r.get("theorem") is None:
            thinking = "Matches no theorem of the problem's program."
            parents = []
        else:
            atom = atom_from_dict(r["theorem"])
            premises = [
                atom_from_dict(rows[j]["theorem"]) for j in prem or () if rows[j].get("theorem")
            ]
            thinking = explain(r.get("rule"), premises, atom, parents or [])
        steps.append(
            {
                "step_id": i,
                "thinking": thinking,
                "direct_dependent_steps": parents,
                "text": str(r.get("text", "")),
            }
        )
    answer = scored.get("answer")
    if answer is not None:
        steps[-1]["text"] += f" The final answer is $\\boxed{{{answer}}}$."
    ref = scored.get("reference_answer")
    return {
        "problem_id": scored.get("id"),
        "sample_id": sample_id,
        "problem_text": scored.get("problem_text", ""),
        "steps": steps,
        "final_answer": steps[-1]["text"],
        "answer": None if ref is None else str(ref),
        "difficulty": None,
        "domain": MODEL_PROOF_DOMAIN,
        "metadata": {"model": str(scored.get("model", "model")), "reasoning_content": ""},
    }


def export_model_proofs(
    scored: Iterable[Mapping[str, Any]], out_dir: str | Path, dataset: str = "gsm-model-proofs"
) -> list[Path]:
    """Write scored model proofs as DAG-MATH model outputs (records with an error skipped)."""
    _check_name("dataset", dataset)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in scored:
        if "error" in r:
            continue
        model = _check_name("model", re.sub(r"[^A-Za-z0-9_.-]+", "-", str(r.get("model", "model"))))
        pid = _check_name("problem id", re.sub(r"[^A-Za-z0-9_.-]+", "_", str(r.get("id"))))
        samples = groups[(model, pid)]
        samples.append(model_proof_sample(r, sample_id=len(samples)))
    written = []
    for (model, pid), samples in sorted(groups.items()):
        folder = Path(out_dir) / model / dataset
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / official.file_name(pid)
        path.write_text(json.dumps(samples, indent=2, ensure_ascii=False) + "\n", "utf-8")
        written.append(path)
    return sorted(written)


# --- proof graph -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GraphNode:
    """One theorem of a proof, with what a renderer needs to colour it.

    ``irrelevant``: the theorem is an irrelevant axiom (not in the shortest proof) or was
    derived from one. ``level``: longest path from a given (0 for givens).
    """

    node_id: int
    label: str
    atom: str
    rule: str | None
    is_axiom: bool
    is_goal: bool
    in_shortest_proof: bool
    irrelevant: bool
    level: int


@dataclass(frozen=True, slots=True)
class ProofGraph:
    """Nodes (ids 1..N, the proof's order, as in the export) and edges (parent, child)."""

    nodes: tuple[GraphNode, ...]
    edges: tuple[tuple[int, int], ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dicts."""
        return {"nodes": [asdict(n) for n in self.nodes], "edges": [list(e) for e in self.edges]}


def proof_graph(problem_record: Mapping[str, Any], proof_record: Mapping[str, Any]) -> ProofGraph:
    """The graph of one proof record, with flags from its problem record.

    Args:
        problem_record: the problem (for its axioms, query and shortest proof).
        proof_record: one strategy's proof of it.
    """
    prob = problem_from_record(problem_record)
    axioms = set(prob.program.axioms)
    shortest = set(prob.shortest.theorems) if prob.shortest else set()
    rows, pid = _rows(proof_record), proof_record.get("problem_id")
    nodes, edges, irrelevant, level = [], [], [], []
    for i, r in enumerate(rows):
        atom = atom_from_dict(r.get("theorem"))
        prem = _premises(r, i, pid) or []
        edges += [(j + 1, i + 1) for j in prem]
        irr = (atom in axioms and atom not in shortest) or any(irrelevant[j] for j in prem)
        irrelevant.append(irr)
        level.append(1 + max((level[j] for j in prem), default=-1))
        nodes.append(
            GraphNode(
                node_id=i + 1,
                label=str(r.get("text", "")),
                atom=str(atom),
                rule=r.get("rule"),
                is_axiom=atom in axioms,
                is_goal=prob.program.query.matches(atom),
                in_shortest_proof=atom in shortest,
                irrelevant=irr,
                level=level[-1],
            )
        )
    return ProofGraph(tuple(nodes), tuple(edges))
