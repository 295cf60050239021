"""Problems given as text, with proofs, scored for the Efficiency page.

Three record shapes come from the efficiency paper's own material and our commands:

- **text problems** ``{"id", "text"[, "answer"]}`` (``../shared/data/mathgap-sample``, the
  generator of rycolab/reasoning-efficiency), whose proofs are the lines ``dagmath gsm solve
  --text`` writes: ``{"id", "shortest_proof": [sentence, ...], "answer", ...}``;
- **text problems with a proof** ``{"id", "text", "proof"[, "answer"]}`` (the paper's
  Appendix D examples, ``dagmath gsm score-proofs`` input);
- **scored proofs** (``dagmath gsm score-proofs`` output: ``matched``, ``unmatched``, ...).

:func:`scored_text_proofs` turns any of them into scored proofs, each with every statement
matched to a theorem of the problem's program or to none, exactly as ``score-proofs`` does
(:func:`dagmath_viz.logic.modelproofs.score_proof_record`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dagmath_viz.logic.modelproofs import score_proof_record
from dagmath_viz.schema import LoadIssue

__all__ = ["STATUSES", "is_text_record", "proof_lines", "scored_text_proofs"]


def is_text_record(record: Mapping[str, Any]) -> bool:
    """A record of the text shapes above (not a ``gsm generate`` problem or proof)."""
    return isinstance(record, Mapping) and "id" in record and "problem_id" not in record


def _is_scored(record: Mapping[str, Any]) -> bool:
    return "matched" in record or ("error" in record and "text" not in record)


def _proof_of(solver: Mapping[str, Any]) -> str | None:
    """A ``gsm solve --text`` line's shortest proof as numbered lines ending in the answer."""
    lines = solver.get("shortest_proof")
    if not isinstance(lines, list) or not all(isinstance(s, str) for s in lines):
        return None
    body = "\n".join(f"{i}. {s}" for i, s in enumerate(lines, 1))
    return body + f"\nTherefore, the answer is {solver.get('answer')}."


def scored_text_proofs(
    problems: Sequence[Mapping[str, Any]],
    proofs: Sequence[Mapping[str, Any]] = (),
    *,
    problems_name: str = "problems",
    proofs_name: str = "proofs",
) -> tuple[list[dict[str, Any]], list[LoadIssue]]:
    """Scored proofs of text problems, one per problem that has a proof, in problem order.

    A problem's proof is its own ``proof`` field, else the ``proofs`` record of the same
    ``id`` (a ``gsm solve --text`` line, or a ``proof`` string); records already scored pass
    through. Every record left out is named once, with its file and line: a problem with no
    proof, or one that cannot be read (its scoring error).
    """
    by_id: dict[str, Mapping[str, Any]] = {}
    for rec in proofs:
        if isinstance(rec, Mapping) and "id" in rec:
            by_id.setdefault(str(rec["id"]), rec)
    out: list[dict[str, Any]] = []
    issues: list[LoadIssue] = []
    for n, rec in enumerate(problems, 1):
        if not isinstance(rec, Mapping) or "id" not in rec:
            issues.append(LoadIssue(problems_name, f"record {n}", "no 'id': not a problem"))
            continue
        if _is_scored(rec):
            out.append(dict(rec))
            continue
        proof = rec.get("proof")
        other = by_id.get(str(rec["id"]))
        if not isinstance(proof, str) and other is not None:
            proof = other.get("proof") if isinstance(other.get("proof"), str) else _proof_of(other)
        if not isinstance(proof, str):
            where = f"{proofs_name} has no proof of it" if proofs else "it holds no 'proof'"
            issues.append(LoadIssue(problems_name, f"record {n}", f"id {rec['id']!r}: {where}"))
            continue
        scored = score_proof_record({**rec, "proof": proof})
        if "error" in scored:
            issues.append(LoadIssue(problems_name, f"record {n}", str(scored["error"])))
            continue
        scored.setdefault("text", rec.get("text"))
        scored["proof"] = proof
        out.append(scored)
    return out, issues


#: What a statement of a scored proof is, in :func:`proof_lines`.
STATUSES = (
    "axiom of the shortest proof",
    "theorem of the shortest proof",
    "matched, not in the shortest proof",
    "unmatched (counts in |P|)",
    "not counted (the answer line)",
)


def _theorem_text(theorem: Mapping[str, Any]) -> str:
    pred = theorem.get("pred", "?")
    args = ", ".join(
        f"{k}={'+'.join(map(str, v)) if isinstance(v, list) else v}"
        for k, v in theorem.items()
        if k != "pred"
    )
    return f"{pred}({args})"


def proof_lines(scored: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The statements of a scored proof in order, each with its ``status`` (one of
    :data:`STATUSES`) and the ``theorem`` it matched ("" for none). A sentence that states
    two theorems appears once for each; an unmatched sentence counts in |P|; a line matched
    to nothing and not listed as unmatched (the closing answer) is not counted."""
    unmatched = {str(u) for u in scored.get("unmatched") or ()}
    rows = []
    for m in scored.get("matched") or ():
        if not isinstance(m, Mapping):
            continue
        text, theorem = str(m.get("text", "")), m.get("theorem")
        if isinstance(theorem, Mapping):
            if m.get("in_shortest"):
                status = STATUSES[0] if m.get("axiom") else STATUSES[1]
            else:
                status = STATUSES[2]
            rows.append({"statement": text, "status": status, "theorem": _theorem_text(theorem)})
        else:
            status = STATUSES[3] if text in unmatched else STATUSES[4]
            rows.append({"statement": text, "status": status, "theorem": ""})
    said = {r["statement"] for r in rows}
    rows += [
        {"statement": u, "status": STATUSES[3], "theorem": ""} for u in unmatched if u not in said
    ]
    return rows
