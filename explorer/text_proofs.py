"""The Efficiency page's view of problems given as text with their proofs (the efficiency
paper's own problems and examples; :mod:`dagmath_viz.logic.textproofs`).

Not a page itself: ``pages/efficiency.py`` calls :func:`text_proofs_view` for such uploads.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dagmath_viz.analysis import tables
from dagmath_viz.logic.textproofs import proof_lines
from dagmath_viz.text import counted, escape_markdown, natural_key, plain
from explorer import common

_RATES = ("efficiency", "efficiency_non_axiom", "recall")


def _summary(scored: list[dict[str, Any]]) -> pd.DataFrame:
    rows = [
        {
            "id": plain(str(r.get("id")), 80),
            "correct": bool(r.get("correct")),
            **{k: r.get(k) for k in _RATES},
            "exact_match": r.get("exact_match"),
            "statements": r.get("n_statements"),
            "shortest": r.get("shortest_size"),
            "unmatched": len(r.get("unmatched") or ()),
        }
        for r in scored
    ]
    return pd.DataFrame(rows)


def text_proofs_view(scored: list[dict[str, Any]], name: str, n_problems: int) -> None:
    """Counts, a table of every scored proof, and one proof statement by statement."""
    correct = [r for r in scored if r.get("correct")]
    st.caption(
        escape_markdown(
            f"Records: {plain(name, 80)} · {counted(n_problems, 'problem')} · "
            f"{counted(len(scored), 'proof')} scored · {len(correct):,} reach the right answer"
        )
    )
    if not scored:
        st.info("No proof could be scored: the warnings above name each record left out.")
        return
    cells = st.columns(4)
    cells[0].metric("Accuracy", tables.format_percent(len(correct) / len(scored)))
    for cell, key, label in zip(
        cells[1:], _RATES, ("Efficiency", "Non-axiom", "Recall"), strict=True
    ):
        values = [r[key] for r in correct if isinstance(r.get(key), (int, float))]
        cell.metric(label, tables.format_percent(sum(values) / len(values)) if values else "—")
    st.caption(
        "Rates are means over the proofs that reach the right answer (as the paper). "
        "Efficiency = |S ∩ P| / |P| counts every statement, matched or not; non-axiom "
        "efficiency counts only the statements matched to a derived theorem (an unmatched "
        "statement is neither axiom nor theorem of the program, so it is left out there)."
    )
    table = _summary(scored)
    shown = table.copy()
    for col in _RATES:
        shown[col] = shown[col].map(tables.format_percent)
    st.dataframe(shown, hide_index=True, width="stretch")
    common.download(table, "text_proofs.csv", "Download the table (CSV, fractions)")

    st.subheader("One proof, statement by statement")
    by_id = {str(r.get("id")): r for r in scored}
    ids = sorted(by_id, key=natural_key)
    pid = common.select("Problem", ids, "eff_text_problem", "problem")
    rec = by_id[pid]
    left, right = st.columns([2, 3])
    with left:
        st.markdown("**Problem**")
        st.text(plain(str(rec.get("text") or rec.get("problem_text") or ""), 4000))
        st.text(
            f"Answer given: {plain(str(rec.get('answer')), 40)} · reference: "
            f"{plain(str(rec.get('reference_answer')), 40)} · "
            f"{'correct' if rec.get('correct') else 'wrong'}"
        )
    with right:
        lines = pd.DataFrame(proof_lines(rec))
        st.markdown(
            f"**{counted(int(rec.get('n_statements') or 0), 'statement')} counted (|P|), "
            f"{counted(int(rec.get('shortest_size') or 0), 'theorem')} in the shortest proof "
            f"(|S|)** · efficiency {tables.format_percent(rec.get('efficiency'))} · recall "
            f"{tables.format_percent(rec.get('recall'))}"
        )
        if len(lines):
            lines["statement"] = lines["statement"].map(lambda t: plain(t, 300))
            st.dataframe(lines, hide_index=True, width="stretch")
