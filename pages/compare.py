"""Compare: paired outcomes of two models (or two samples of one model) per shared problem,
two trajectories of one problem with their steps aligned side by side (and their graphs in
one layout and scale), the per-problem scatter, paired differences and AUC curves. With one
model loaded (a Thought Anchors folder: a correct and an incorrect chain per problem), its
samples are the two sides."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dagmath_viz.analysis import metrics, paired, tables
from dagmath_viz.analysis.align import align_texts
from dagmath_viz.draw import figures
from dagmath_viz.draw.aligned import GRAPH_SCALE, render_aligned_html, shared_layout
from dagmath_viz.text import counted, escape_markdown, natural_key
from explorer import common, share
from explorer.graph_view import trajectory_view

corpus = common.corpus()
df = corpus.scored
st.title("Compare models")
all_models = sorted(df["model"].unique()) if not df.empty else []
if not all_models:
    st.info("Load trajectories to compare them.")
    st.stop()
#: One model loaded: its samples are compared with each other, two slots of one model.
ONE_MODEL = len(all_models) == 1

if ONE_MODEL:
    st.session_state["cmp_models"] = all_models * 2
elif "cmp_models" in st.session_state:
    # models of another data source: keep only those loaded here
    # (or one model twice, left by a one-model source)
    kept = [m for m in dict.fromkeys(st.session_state["cmp_models"]) if m in all_models]
    if kept != st.session_state["cmp_models"]:
        st.session_state["cmp_models"] = kept if len(kept) >= 2 else tables.default_comparison(df)
if "cmp_models" not in st.session_state:  # never with one model: set above
    asked = list(dict.fromkeys(st.query_params.get_all("models")))  # a model named twice: once
    unknown = [m for m in asked if m not in all_models]
    if unknown:
        st.session_state["cmp_unknown"] = unknown
    wanted = [m for m in asked if m in all_models]
    default = tables.default_comparison(df)
    st.session_state["cmp_models"] = wanted if len(wanted) >= 2 or unknown else default
if ONE_MODEL:
    stale = [m for m in st.query_params.get_all("models") if m not in all_models]
    if stale:
        names = ", ".join(f"“{m}”" for m in stale)
        st.error(
            escape_markdown(f"No model {names} in the loaded data: the link is stale or mistyped."),
            icon=":material/link_off:",
        )
        st.stop()
    models = st.session_state["cmp_models"]
    st.caption(
        escape_markdown(
            f"One model is loaded ({all_models[0]}): two of its samples side by side. "
            "Load a second model to compare models across problems."
        )
    )
else:
    models = st.multiselect(
        "Models (two or more)", all_models, key="cmp_models", format_func=common.shown_option
    )
if st.session_state.get("cmp_unknown"):
    if models == [m for m in dict.fromkeys(st.query_params.get_all("models")) if m in all_models]:
        names = ", ".join(f"“{m}”" for m in st.session_state["cmp_unknown"])
        st.error(
            escape_markdown(
                f"No model {names} in the loaded data: the link is stale or mistyped. "
                "Choose models above."
            ),
            icon=":material/link_off:",
        )
        st.stop()
    del st.session_state["cmp_unknown"]
if len(models) < 2:
    st.warning("Choose at least two models.")
    st.stop()
shared_ds = sorted(set.intersection(*(set(df.loc[df["model"] == m, "dataset"]) for m in models)))
dataset = common.select(
    "Dataset", shared_ds, "cmp_dataset", "dataset", where="among those these models share"
)
if dataset is None:
    st.info("These models share no dataset.")
    st.stop()

part = df[df["model"].isin(models) & (df["dataset"] == dataset)]
per_model = [set(part.loc[part["model"] == m, "problem_id"]) for m in models]
problems = sorted(set.intersection(*per_model), key=natural_key)
st.query_params.update(dataset=dataset)
if not ONE_MODEL:
    st.query_params["models"] = models

ALIGNED_HEIGHT = 760


def _sides() -> tuple[paired.Side, paired.Side]:
    """The two sides of the paired table: models A and B, or two samples of the one model."""
    pick = st.columns(2)
    if ONE_MODEL:
        ids = sorted(int(x) for x in part["sample_id"].unique())
        a = pick[0].selectbox("Sample as A", ids, index=0, key="cmp_side_a")
        rest = [x for x in ids if x != a] or ids
        b = pick[1].selectbox("Sample as B", rest, index=0, key="cmp_side_b")
        return paired.Side(models[0], a), paired.Side(models[0], b)
    a = pick[0].selectbox("Model A", models, index=0, key="cmp_a", format_func=common.shown_option)
    b = pick[1].selectbox(
        "Model B", [m for m in models if m != a], index=0, key="cmp_b",
        format_func=common.shown_option,
    )  # fmt: skip
    return paired.Side(a), paired.Side(b)


st.subheader("Paired outcomes")
side_a, side_b = _sides()
model_a, model_b = side_a.model, side_b.model
pairs = paired.paired_outcomes(part, side_a, side_b) if side_a != side_b else pd.DataFrame()
note = paired.design_note([dataset])
if note:
    st.info(escape_markdown(note), icon=":material/info:")
if pairs.empty:
    st.info("These two sides share no scored problem.")
else:
    summary = paired.summarise_pair(pairs, side_a, side_b, "majority")
    st.caption(
        escape_markdown(
            f"A = {side_a.label}, B = {side_b.label}: {summary.n_problems} shared problems. "
            "A side is right on a problem when more than half of its scored samples are; "
            "perfect = closed and right. Pick a cell to list its problems."
        )
    )
    counts = pd.DataFrame(summary.counts).T.rename(columns=paired.CELL_LABELS)
    counts.index = ["answer", "perfect reasoning"]
    st.dataframe(counts, width="content")
    # a by-design source: its answer difference is how it was built, not a finding
    tested = [("PRR", "prr")] if note else [("PASS@1", "pass_at_1"), ("PRR", "prr")]
    diffs = ", ".join(
        f"{name}(A) − {name}(B) = {tables.format_percent(d.estimate)} "
        f"[{tables.format_percent(d.low)}, {tables.format_percent(d.high)}]"
        for name, d in ((name, summary.differences[key]) for name, key in tested)
    )
    few = " (few problems: read with care)" if summary.n_problems < metrics.SMALL_SAMPLE else ""
    st.caption(f"Paired test over shared problems, 95 % intervals: {diffs}{few}")
    cell_cols = st.columns([1, 3])
    measure = cell_cols[0].radio(
        "On",
        ["answer", "perfect"],
        key="cmp_cell_measure",
        format_func=lambda m: "answer" if m == "answer" else "perfect reasoning",
    )
    # open on a cell with problems: on arrival, and when the sides or the measure change
    # while the cell shown has none (a pick with problems is kept)
    counts_now = summary.counts[measure]
    opened = (dataset, side_a, side_b, measure)
    if st.session_state.get("cmp_cell_for") != opened:
        st.session_state["cmp_cell_for"] = opened
        if not counts_now.get(st.session_state.get("cmp_cell", paired.CELLS[0]), 0):
            st.session_state["cmp_cell"] = next(
                (c for c in paired.CELLS if counts_now[c]), paired.CELLS[0]
            )
    cell = cell_cols[1].radio(
        "Cell",
        list(paired.CELLS),
        key="cmp_cell",
        horizontal=True,
        format_func=lambda c: f"{paired.CELL_LABELS[c]} ({summary.counts[measure][c]})",
    )
    in_cell = pairs[pairs[f"{measure}_cell"] == cell]
    shown = in_cell[["problem_id", "a_n", "a_pass_at_1", "a_prr", "b_n", "b_pass_at_1", "b_prr"]]
    event = st.dataframe(
        shown.assign(
            **{
                c: shown[c].map(tables.format_percent)
                for c in ("a_pass_at_1", "a_prr", "b_pass_at_1", "b_prr")
            }
        ),
        hide_index=True,
        width="stretch",
        on_select="rerun",
        selection_mode="single-row",
        key=f"cmp_cell_rows_{measure}_{cell}",
    )
    chosen = event.selection.rows if event is not None else []
    if chosen and st.session_state.get("cmp_cell_opened") != (measure, cell, chosen[0]):
        st.session_state["cmp_cell_opened"] = (measure, cell, chosen[0])
        common.set_choice("cmp_problem", str(in_cell.iloc[chosen[0]]["problem_id"]))
    st.caption("Select a row to open that problem side by side below.")
    if not in_cell.empty and st.button("List these problems' trajectories", key="cmp_cell_list"):
        common.open_table(models=[model_a, model_b], datasets=[dataset],
                          problems=in_cell["problem_id"].tolist())  # fmt: skip

GRAPH_HEIGHT = 460


def _draw_graph(traj, rec, layout: str) -> None:
    """The one place Compare draws a graph: every graph the same frame, settings, layout
    and scale."""
    trajectory_view(
        traj, rec, height=GRAPH_HEIGHT + 70, scale=GRAPH_SCALE, show_steps=False, layout=layout
    )


def _default_sample(rows: pd.DataFrame, i: int):
    """A sensible pair by default: the first model's first correct sample, the second's
    first incorrect one (then alternating); the first sample when there is none such."""
    want = i % 2 == 0
    hit = rows[rows["final_correct"] == want]
    return (hit if not hit.empty else rows)["sample_id"].min()


def _side(i: int, model: str):
    """One side's sample choice and summary; returns (trajectory, record) or None."""
    rows = part[(part["model"] == model) & (part["problem_id"] == problem)]
    rows = rows.sort_values("sample_id")
    samples = rows["sample_id"].astype(int).tolist()
    slot = [i] if ONE_MODEL else []  # one model twice: a key per side
    key = f"cmp_sample_{common.short_digest([model, dataset, problem, *slot])}"
    if key not in st.session_state and samples:
        st.session_state[key] = int(_default_sample(rows, i))
    head = st.columns([3, 2])
    head[0].text(f"{'AB'[i]}: {model}")  # plain text: a name is never markup nor a link
    with head[1]:
        sample = common.select("Sample", samples, key)
    if sample is None:
        st.info("No sample of this problem for this model.")
        return None
    row = corpus.row_of(model, dataset, problem, sample)
    rec = df.iloc[row]
    answer = {True: "correct", False: "wrong"}.get(rec["final_correct"], "unscored")
    st.caption(
        f"{rec['class']} · answer {answer} · closeness "
        f"{tables.format_percent(rec['closeness_rate'])}"
        f" · {counted(len(rec['dead_ends']), 'dead end')} · {rec['n_nodes']} steps"
    )
    traj, unreadable = common.trajectory_of(corpus, row)
    if traj is None:
        st.warning(escape_markdown(f"Steps not shown: {unreadable}."))
        return None
    return traj, rec


st.subheader("Side by side")
st.caption(
    "Each side's sample is chosen on its own: sample numbers of different models are "
    "unrelated runs, so they are never paired by number."
)
problem = common.select(
    "Problem", problems, "cmp_problem", "problem", where=f"shared by these models on {dataset}"
)
if problem is None:
    st.info(f"These models share no problem on {escape_markdown(dataset)}.")
else:
    st.query_params.update(problem=str(problem))
    shown_sides = []
    for i, (col, model) in enumerate(zip(st.columns(2), (model_a, model_b), strict=True)):
        with col:
            shown_sides.append(_side(i, model))
    if all(x is not None for x in shown_sides):
        (ta, ra), (tb, rb) = shown_sides
        alignment = align_texts([x.text for x in ta.steps], [x.text for x in tb.steps])
        gold = common.gold_trajectory_of(corpus, dataset, problem)
        if gold is not None and gold.steps:
            parts = [f"{n} {common.gold_summary(t, gold)}" for n, t in (("A", ta), ("B", tb))]
            st.caption(escape_markdown("Gold DAG loaded for this problem: " + "; ".join(parts)))
        st.caption(
            "Steps aligned by what they state (README, Definitions): = the same statement, "
            "≈ the same mathematical content; a row with one side empty is a step only that "
            "side has. Both sides scroll as one; dead ends are orange."
        )
        st.iframe(
            render_aligned_html(
                ta,
                tb,
                alignment,
                dead_a=ra["dead_ends"],
                dead_b=rb["dead_ends"],
                correct_a=ra["final_correct"],
                correct_b=rb["final_correct"],
                labels=(f"A: {model_a}", f"B: {model_b}"),
                height_px=ALIGNED_HEIGHT,
            ),  # fmt: skip
            height=ALIGNED_HEIGHT,
        )
        share.comparison_download((ta, ra), (tb, rb), (f"A: {model_a}", f"B: {model_b}"))
        layout = shared_layout(ta, tb)
        st.caption(f"Graphs: one layout ({layout}) and one scale (100 %) for both.")
        for col, (t, r) in zip(st.columns(2), shown_sides, strict=True):
            with col:
                _draw_graph(t, r, layout)

if ONE_MODEL:
    st.stop()  # across problems needs two models

st.subheader("Across problems")
pp = common.derived("per_problem", lambda: metrics.per_problem(df))
pp = pp[pp["dataset"] == dataset]
st.caption(
    "One marker per distinct pair of values; its size and number count the problems there. "
    "Click a marker to list those problems' trajectories."
)
scatter = st.columns(2)
for col, metric in zip(scatter, ("prr", "pass_at_1"), strict=True):
    points = figures.per_problem_points(pp, model_a, model_b, metric)
    nonce = st.session_state.get("cmp_scatter_n", 0)
    event = col.plotly_chart(
        figures.per_problem_scatter(pp, model_a, model_b, metric, points=points),
        width="stretch",
        on_select="rerun",
        selection_mode="points",
        key=f"cmp_scatter_{metric}_{nonce}",
    )
    picked = [
        p["point_index"]
        for p in (event.selection.points if event is not None else [])
        if p.get("curve_number") == 0
    ]
    if picked:
        chosen = sorted({pid for i in picked for pid in points.iloc[i]["problems"]})
        st.session_state["cmp_scatter_n"] = nonce + 1  # a fresh chart when coming back
        common.open_table(models=[model_a, model_b], datasets=[dataset], problems=chosen)

rows = []
scope = df[df["dataset"] == dataset]
for metric, label in (("prr", "R̂"), ("pass_at_1", "PASS@1"), ("auc", "AUC")):
    d = metrics.paired_difference(scope, model_a, model_b, metric=metric)
    rows.append(
        {
            "metric": f"{label}(A) − {label}(B)",
            "shared problems": d.n_problems,
            "difference": tables.format_percent(d.difference.estimate),
            "95% CI": f"[{tables.format_percent(d.difference.low)}, "
            f"{tables.format_percent(d.difference.high)}]",
        }
    )
st.markdown(
    f"**Paired differences over shared problems** (95 % intervals, Hall's skewness-corrected "
    f"t, as on the leaderboard) — A = {escape_markdown(model_a)}, B = {escape_markdown(model_b)}"
)
diff_table = pd.DataFrame(rows)
st.dataframe(common.visible(diff_table), hide_index=True, width="stretch")
common.download(diff_table, "paired_differences.csv", "Download the differences (CSV)")

curve = metrics.auc_curve(df[df["model"].isin(models) & (df["dataset"] == dataset)])
if not curve.empty:
    st.plotly_chart(
        figures.auc_figure(curve, title=f"AUC curves on {dataset}", colours=common.model_colours()),
        width="stretch",
    )
