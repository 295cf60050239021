"""Efficiency of a proof against the shortest proof, search-order distance, report tables.

DEFINITIONS.md §6, following the authors' published code (precision and recall): with S the
theorems of the shortest proof and P the theorems a proof states (repeats once, statements
matching no theorem included), efficiency = |S ∩ P| / |P|, recall = |S ∩ P| / |S|, exact
match P = S; the non-axiom variant of efficiency counts only theorems that are not axioms.
(Their notebook divides by the number of a proof's steps, so a repeat counts again, and
compares the step list with the shortest proof's for an exact match; DEFINITIONS.md §6 counts
a theorem once and compares sets. docs/logic.md lists these differences.)
The search-order distance compares the order in which a proof states its non-axiom theorems
with the order in which DFS and BFS prove them (normalised Levenshtein distance).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dagmath_viz.logic.chaining import forward_chain
from dagmath_viz.logic.program import Atom, Program, ProgramError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "STRATEGIES",
    "Efficiency",
    "efficiency",
    "efficiency_table",
    "model_proof_summary",
    "overlap_bars_note",
    "format_table",
    "levenshtein",
    "normalized_levenshtein",
    "search_order_distance",
]

STRATEGIES = ("shortest", "dfs", "bfs", "overlap")
_ORDERS = {
    "strategy": STRATEGIES,
    "irrelevant": ("none", "axiom", "tree", "trees"),
    "overlap": ("none", "entity", "agent", "both"),
}


@dataclass(frozen=True, slots=True)
class Efficiency:
    """Precision (efficiency), its non-axiom variant, recall and exact match of one proof."""

    efficiency: float
    efficiency_non_axiom: float
    recall: float = 0.0
    exact_match: bool = False


def _ratio(num: int, den: int, empty: float) -> float:
    return num / den if den else empty


def efficiency(
    proof: Iterable[Hashable],
    shortest: Iterable[Hashable],
    axioms: Iterable[Hashable],
    unmatched: Iterable[Hashable] = (),
) -> Efficiency:
    """|S ∩ P| / |P| over all theorems and over non-axiom theorems; recall; exact match.

    ``proof`` is P: the theorems a proof states, in any order, repeats counting once; an
    item that is no theorem (an unmatched statement) counts in |P| and never in S ∩ P.
    The items of P listed in ``unmatched`` are such statements: they count in |P| but not
    among P's non-axiom theorems, which they are not (a sentence that matches nothing is
    neither an axiom nor a conclusion). An empty P has efficiency 0. When P has no
    non-axiom theorem, the non-axiom efficiency is 1 if S has none either, else 0.

    Example:
        >>> efficiency("abcd", "abc", "ab")
        Efficiency(efficiency=0.75, efficiency_non_axiom=0.5, recall=1.0, exact_match=False)
        >>> efficiency("abcd", "abc", "ab", unmatched="d").efficiency_non_axiom
        1.0
    """
    p, s, a = set(proof), set(shortest), set(axioms)
    both = p & s
    conclusions = p - a - set(unmatched)
    return Efficiency(
        _ratio(len(both), len(p), 0.0),
        _ratio(len(both - a), len(conclusions), 1.0 if not s - a else 0.0),
        _ratio(len(both), len(s), 1.0),
        p == s,
    )


def levenshtein(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Edit distance (insertions, deletions, substitutions) between two sequences."""
    ids: dict[Hashable, int] = {}
    a = [ids.setdefault(x, len(ids)) for x in a]  # compare small ints, not atoms
    b = [ids.setdefault(x, len(ids)) for x in b]
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def normalized_levenshtein(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Edit distance divided by the longer length (0 for two empty sequences)."""
    n = max(len(a), len(b))
    return levenshtein(a, b) / n if n else 0.0


def search_order_distance(proof: Sequence[Atom], program: Program) -> dict[str, float]:
    """Normalised Levenshtein distance of a proof's non-axiom order to DFS's and BFS's.

    Returns:
        ``{"dfs": d1, "bfs": d2}``, each in [0, 1]; 0 means the same order.
    """
    axioms = set(program.axioms)
    mine = [x for x in dict.fromkeys(proof) if x not in axioms]
    out = {}
    for policy in ("dfs", "bfs"):
        ref = [x for x in forward_chain(program, policy).order if x not in axioms]
        out[policy] = normalized_levenshtein(mine, ref)
    return out


# --- tables ----------------------------------------------------------------------------

_KEYS = ("strategy", "irrelevant", "overlap", "control")
_RATES = ("efficiency", "efficiency_non_axiom", "recall", "exact_match")


def _row(r: Mapping[str, Any], i: int) -> dict[str, Any]:
    missing = [k for k in ("strategy", "correct", "efficiency") if k not in r]
    if missing:
        raise ProgramError(f"proof record {i}: missing field(s) {', '.join(missing)}")
    return {
        "strategy": str(r["strategy"]),
        "irrelevant": str(r.get("irrelevant", "unknown")),
        "overlap": str(r.get("overlap", "unknown")),
        "control": bool(r.get("control", False)),
        "correct": float(bool(r["correct"])),
        "efficiency": _num(r["efficiency"]),
        "efficiency_non_axiom": _num(r.get("efficiency_non_axiom")),
        "recall": _num(r.get("recall")),
        "exact_match": _num(r.get("exact_match")),
    }


def _num(v: Any) -> float:
    """A rate from a record: NaN when absent or None (e.g. not scored: a wrong answer)."""
    return math.nan if v is None or isinstance(v, str) else float(v)


def _rank(column: str, value: Any) -> tuple[int, str]:
    order = _ORDERS.get(column, ())
    return (order.index(value) if value in order else len(order), str(value))


def efficiency_table(proof_records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Accuracy and mean efficiencies by strategy × irrelevant × overlap × control.

    Columns: strategy, irrelevant, overlap, control, n, accuracy, efficiency,
    efficiency_non_axiom, recall, exact_match (rates as fractions in [0, 1]; the last four
    are means over the proofs that carry them, DEFINITIONS.md §6 scores correct answers).
    Rows follow the paper's order (strategies shortest, dfs, bfs, overlap; structures none,
    axiom, tree, trees; overlaps none, entity, agent, both), control rows after the others.
    """
    import pandas as pd  # here: `dagmath score` builds this CLI at start-up

    rows = [_row(r, i) for i, r in enumerate(proof_records)]
    cols = [*_KEYS, "n", "accuracy", *_RATES]
    if not rows:
        return pd.DataFrame(columns=cols)
    df = pd.DataFrame(rows)
    for c in _RATES:  # DEFINITIONS.md §6: scored on correct answers only
        df.loc[df["correct"] == 0.0, c] = math.nan
    out = (
        df.groupby(list(_KEYS), sort=False)
        .agg(
            n=("correct", "size"),
            accuracy=("correct", "mean"),
            efficiency=("efficiency", "mean"),
            efficiency_non_axiom=("efficiency_non_axiom", "mean"),
            recall=("recall", "mean"),
            exact_match=("exact_match", "mean"),
        )
        .reset_index()
    )
    key = out.apply(
        lambda r: (r["control"], *(_rank(c, r[c]) for c in ("strategy", "irrelevant", "overlap"))),
        axis=1,
    )
    out = out.iloc[sorted(range(len(out)), key=lambda i: key.iloc[i])].reset_index(drop=True)
    return out[cols]


def overlap_bars_note(proof_records: Iterable[Mapping[str, Any]], structure: str) -> str:
    """What each bar of the by-overlap chart (:func:`efficiency_table` for one irrelevant
    structure, control problems left out) rests on: how many problems, and whether the
    overlaps are one problem renamed (``gsm generate --paired``) or different problems.

    >>> recs = [{"strategy": "dfs", "irrelevant": "tree", "overlap": o, "problem_id": i}
    ...         for i, o in enumerate(["none", "none", "agent", "agent"])]
    >>> overlap_bars_note(recs, "tree")[:70]
    'Each bar is the mean over 2 problems, and each overlap has problems of'
    """
    ids: dict[tuple[str, str], set[str]] = {}
    for r in proof_records:
        if str(r.get("irrelevant")) != structure or bool(r.get("control", False)):
            continue
        key = (str(r.get("strategy")), str(r.get("overlap")))
        ids.setdefault(key, set()).add(str(r.get("problem_id")))
    if not ids:
        return "No problem with this structure."
    counts = sorted(len(v) for v in ids.values())
    lo, hi = counts[0], counts[-1]
    many = f"{lo}" if lo == hi else f"{lo} to {hi}"
    note = f"Each bar is the mean over {many} problem{'s' * (hi != 1)}"
    by_strategy: dict[str, list[set[str]]] = {}
    for (strategy, _overlap), problems in ids.items():
        by_strategy.setdefault(strategy, []).append(problems)
    paired = all(all(p == sets[0] for p in sets) for sets in by_strategy.values())
    if paired and any(len(sets) > 1 for sets in by_strategy.values()):
        note += ", the same problems in every overlap (renamed only: paired)"
    elif not paired:
        note += (
            ", and each overlap has problems of its own (not one problem renamed, as "
            "gsm generate --paired makes them)"
        )
    if hi < 10:
        note += ": with so few, a difference between bars says little"
    return note + "."


def format_table(table: pd.DataFrame) -> str:
    """A plain-text rendering with rates in percent (one decimal), as in the paper."""
    import pandas as pd

    if table.empty:
        return "(no proof records)"
    shown = table.copy()
    for c in ("accuracy", *_RATES):
        shown[c] = shown[c].map(lambda v: "—" if pd.isna(v) else f"{100 * v:.1f}")
    shown["control"] = shown["control"].map(lambda v: "yes" if v else "no")
    return shown.to_string(index=False)


def model_proof_summary(
    proof_records: Iterable[Mapping[str, Any]], scored: Iterable[Mapping[str, Any]]
) -> pd.DataFrame:
    """Simulated strategies and scored model proofs side by side, one row per reasoner.

    ``proof_records`` come from ``dagmath gsm solve`` (one row per strategy), ``scored``
    from ``dagmath gsm score-proofs`` (one row per ``model``; records with an error are
    left out). Columns: reasoner, kind ("strategy" or "model"), n, accuracy, efficiency,
    efficiency_non_axiom, recall, exact_match; the rates are means over correct answers
    (a wrong answer is not scored), NaN when there is none.
    """
    import pandas as pd

    rows = []
    for r in proof_records:
        row = {"reasoner": str(r.get("strategy", "unknown")), "kind": "strategy"}
        rows.append({**row, **_rates(r)})
    for r in scored:
        if "error" in r:
            continue
        rows.append({"reasoner": str(r.get("model", "model")), "kind": "model", **_rates(r)})
    cols = ["reasoner", "kind", "n", "accuracy", *_RATES]
    if not rows:
        return pd.DataFrame(columns=cols)
    df = pd.DataFrame(rows)
    for c in _RATES:  # DEFINITIONS.md §6: scored on correct answers only
        df.loc[df["correct"] == 0.0, c] = math.nan
    out = (
        df.groupby(["kind", "reasoner"], sort=False)
        .agg(
            n=("correct", "size"), accuracy=("correct", "mean"), **{c: (c, "mean") for c in _RATES}
        )
        .reset_index()
    )
    order = {s: i for i, s in enumerate(STRATEGIES)}
    keys = [
        (k != "strategy", order.get(r, len(order)), r)
        for k, r in zip(out["kind"], out["reasoner"], strict=True)
    ]
    out = out.iloc[sorted(range(len(out)), key=keys.__getitem__)].reset_index(drop=True)
    return out[cols]


def _rates(r: Mapping[str, Any]) -> dict[str, float]:
    return {"correct": float(bool(r.get("correct"))), **{c: _num(r.get(c)) for c in _RATES}}
