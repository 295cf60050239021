"""Efficiency: logic-program word problems, each strategy's proof against the shortest one."""

from __future__ import annotations

import streamlit as st

from dagmath_viz.analysis import tables
from dagmath_viz.draw import figures
from dagmath_viz.draw.render import render_proof_html
from dagmath_viz.logic import (
    efficiency_table,
    model_proof_summary,
    overlap_bars_note,
    problem_choices,
    proof_graph,
    proofs_of,
    read_jsonl,
)
from dagmath_viz.logic.textproofs import is_text_record, scored_text_proofs
from dagmath_viz.schema import DagMathError, InputError
from dagmath_viz.store.uploads import check_efficiency_records
from dagmath_viz.text import counted, escape_markdown, math_markdown, plain
from explorer import common
from explorer.text_proofs import text_proofs_view

common.corpus()  # runs the frame first (data source, problems panel)
GSM = common.ROOT / "sample_data" / "gsm"

st.title("Efficiency of proofs")
st.caption(
    "Math word problems generated as logic programs with irrelevant axioms; each strategy "
    "acts as a reasoner. Efficiency = |S ∩ P| / |P|: the share of the theorems a proof states "
    "(P) that are in the shortest proof (S); recall = |S ∩ P| / |S|; exact match: P = S; all "
    "scored on correct answers. The non-axiom variant counts derived theorems only. Generate "
    "your own with `dagmath gsm generate` and `dagmath gsm solve`."
)

with st.expander("Use your own problems and proofs"):
    st.caption(
        "Generated problems (`dagmath gsm generate`) with their proofs (`dagmath gsm solve`); "
        'or problems as text, `{"id", "text", "answer"}` as the paper\'s generator writes '
        "them, with the proofs `dagmath gsm solve --text` writes; or problems that hold a "
        '`"proof"` of their own (the paper\'s Appendix D examples) alone.'
    )
    up_problems = st.file_uploader("problems.jsonl (dagmath gsm generate, or text)", type=["jsonl"])
    up_proofs = st.file_uploader("proofs.jsonl (dagmath gsm solve [--text])", type=["jsonl"])


@st.cache_resource(show_spinner=False, max_entries=4)
def _records(path: str) -> list[dict]:
    return read_jsonl(path)


def _read_uploads(files: list, slot: str) -> list[list[dict]]:
    """Uploads stored through the app's one upload path, each read as JSONL records."""
    upload = common.stored_upload(files, slot)
    records = []
    for name, path in zip((f.name for f in files), upload.paths, strict=True):
        if path is None:
            why = "; ".join(i.message for i in upload.issues) or "not stored"
            raise InputError(f"{name}: {why}")
        try:
            records.append(read_jsonl(path))
        except InputError as exc:  # name the upload, not the private folder it sits in
            raise InputError(str(exc).replace(str(path), name)) from None
    return records


def _uploaded(upload) -> list[dict]:
    """One uploaded JSONL file's records (the scored model proofs)."""
    return _read_uploads([upload], "gsm-scored")[0]


def _uploaded_pair(problems_file, proofs_file) -> tuple[list[dict], list[dict]]:
    """Problems and proofs uploaded together; records the page cannot show are named."""
    records = _read_uploads([problems_file, proofs_file], "gsm")
    problems, proofs, skipped = check_efficiency_records(
        records[0], records[1], problems_file.name, proofs_file.name
    )
    _warn_left_out(skipped)
    if not problems:
        raise InputError(f"{problems_file.name}: no usable problem record")
    return problems, proofs


def _warn_left_out(skipped: list) -> None:
    """The records left out, the first 20 by name, then how many more (records, not lines
    of warnings: each record is named once)."""
    for issue in skipped[:20]:
        st.warning(escape_markdown(plain(str(issue), 300)))
    if len(skipped) > 20:
        st.warning(f"… and {counted(len(skipped) - 20, 'more record')} left out")


def _text_records() -> tuple[list[dict], list[dict]] | None:
    """The uploaded records when they are text problems (the paper's own shapes), else None."""
    files = [f for f in (up_problems, up_proofs) if f]
    records = _read_uploads(files, "gsm-text")
    problems = records[0]
    if not problems or not all(is_text_record(r) for r in problems[:5]):
        return None
    return problems, records[1] if len(records) > 1 else []


try:
    text_upload = _text_records() if up_problems else None
except DagMathError as exc:
    st.error(escape_markdown(f"Could not read the records: {plain(str(exc), 500)}"))
    st.stop()
if text_upload is not None:
    # The efficiency paper's problems as text: each proof scored as `gsm score-proofs` does,
    # shown with every statement matched to a theorem of the problem's program, or to none.
    scored, left_out = scored_text_proofs(
        *text_upload,
        problems_name=up_problems.name,
        proofs_name=up_proofs.name if up_proofs else "proofs",
    )
    _warn_left_out(left_out)
    text_proofs_view(scored, up_problems.name, len(text_upload[0]))
    st.stop()

try:
    if up_problems and up_proofs:
        (problems, proofs), source = _uploaded_pair(up_problems, up_proofs), "uploaded"
    else:
        problems = _records(str(GSM / "problems.jsonl"))
        proofs = _records(str(GSM / "proofs.jsonl"))
        source = "bundled sample (seed 2025, 26 problems)"
    table = efficiency_table(proofs)
except DagMathError as exc:
    st.error(escape_markdown(f"Could not read the records: {plain(str(exc), 500)}"))
    st.stop()

st.caption(f"Records: {source} · {len(problems)} problems · {len(proofs)} proofs")
st.subheader("Accuracy and efficiency by strategy × structure × overlap")
shown = table.copy()
for col in ("accuracy", "efficiency", "efficiency_non_axiom", "recall", "exact_match"):
    shown[col] = shown[col].map(tables.format_percent)
st.dataframe(common.visible(shown), hide_index=True, width="stretch")
common.download(table, "efficiency.csv", "Download the table (CSV, fractions)")

structures = [s for s in ("trees", "tree", "axiom", "none") if s in set(table["irrelevant"])]
if structures:
    structure = st.radio("Irrelevant structure", structures, horizontal=True, key="eff_structure")
    st.plotly_chart(figures.efficiency_figure(table, structure), width="stretch")
    st.caption(overlap_bars_note(proofs, structure))

# --- model proofs beside the simulated strategies (dagmath gsm score-proofs) -------------
st.subheader("Model proofs beside the simulated strategies")
st.caption(
    "Proofs a model wrote in natural language, scored with `dagmath gsm score-proofs` (each "
    "sentence matched to a theorem of the problem's program, or to none), next to the "
    "strategies above. Rates are means over correct answers. A sentence that matches no "
    "theorem counts in efficiency's |P| (it states nothing of the shortest proof) but not in "
    "the non-axiom variant, which counts the derived theorems a proof states: the strategies' "
    "proofs have no such sentence."
)
up_scored = st.file_uploader("scored.jsonl (dagmath gsm score-proofs)", type=["jsonl"])
if up_scored:
    try:
        scored = _uploaded(up_scored)
        side = model_proof_summary(proofs, scored)
    except DagMathError as exc:
        st.error(escape_markdown(f"Could not read the scored proofs: {plain(str(exc), 500)}"))
    else:
        side["reasoner"] = side["reasoner"].map(lambda v: plain(str(v), 80))
        for col in ("accuracy", "efficiency", "efficiency_non_axiom", "recall", "exact_match"):
            side[col] = side[col].map(tables.format_percent)
        st.dataframe(common.visible(side), hide_index=True, width="stretch")
        errors = sum("error" in r for r in scored)
        if errors:
            st.caption(f"{errors} record(s) could not be read and are left out.")
else:
    st.info("Upload a scored.jsonl to compare a model's proofs with the strategies.")

st.subheader("One problem")
# every record its own choice: paired variants (one id, four overlaps) and controls apart
choices = {c.key: c for c in problem_choices(problems)}
pick = st.columns([2, 2])
with pick[0]:
    pid = common.select(
        "Problem", list(choices), "eff_problem", "problem",
        format_func=lambda key: choices[key].label,
        help="Problem id · irrelevant structure / overlap (· control): each variant of a "
        "problem is listed apart.",
    )  # fmt: skip
problem = choices[pid].record
mine = proofs_of(proofs, problem)
strategies = list(dict.fromkeys(p["strategy"] for p in mine))
with pick[1]:
    strategy = common.select("Strategy", strategies, "eff_strategy", "strategy")
proof = None
if strategy is not None:
    proof = next(p for p in mine if p["strategy"] == strategy)
    # the figures on a row of their own: in the proof's column, three to a row, "100.0%"
    # and "correct" were cut to "100…" and "corr…" at 1280 px
    cells = st.columns(4)
    cells[0].metric("Answer", "correct" if proof.get("correct") else "wrong")
    cells[1].metric("Efficiency", tables.format_percent(proof.get("efficiency")))
    cells[2].metric("Non-axiom", tables.format_percent(proof.get("efficiency_non_axiom")))
    cells[3].metric("Theorems", str(proof.get("n_theorems")))
left, right = st.columns([3, 2])
with left:
    st.markdown("**Problem**")
    st.markdown(math_markdown(str(problem.get("problem_text", ""))))
    st.markdown(f"**Question:** {math_markdown(str(problem.get('question', '')))}")
    st.text(
        f"Answer: {problem.get('answer')} · shortest proof: {problem.get('shortest_size')} theorems"
    )
if proof is None:
    st.info("No proof of this problem in the records.")
    st.stop()
with right:
    st.caption(
        f"Search-order distance to DFS {proof.get('distance_dfs', float('nan')):.2f}, "
        f"to BFS {proof.get('distance_bfs', float('nan')):.2f}"
    )
    with st.expander("The proof as written"):
        st.markdown(math_markdown(str(proof.get("proof_text", ""))))
try:
    graph = proof_graph(problem, proof)
except DagMathError as exc:
    st.error(escape_markdown(f"Cannot draw this proof: {plain(str(exc), 300)}"))
else:
    st.markdown(
        f"**{escape_markdown(str(strategy))} proof as a graph** (hover a node for its theorem)"
    )
    st.iframe(render_proof_html(graph, height_px=560), height=620)
