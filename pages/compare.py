"""Compare: two or more models on the same problems — DAGs side by side, per-problem
scatter, paired bootstrap differences, and overlaid AUC curves."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dagmath_viz import figures, metrics, tables
from dagmath_viz.corpus import natural_key
from dagmath_viz.render import render_dag_html
from dagmath_viz.text import escape_markdown
from pages import common

corpus = common.corpus()
df = corpus.scored
st.title("Compare models")
all_models = sorted(df["model"].unique()) if not df.empty else []
if len(all_models) < 2:
    st.info("Load at least two models to compare them.")
    st.stop()

if "cmp_models" not in st.session_state:
    wanted = [m for m in st.query_params.get_all("models") if m in all_models]
    st.session_state["cmp_models"] = wanted if len(wanted) >= 2 else all_models[:2]
models = st.multiselect("Models (two or more)", all_models, key="cmp_models")
if len(models) < 2:
    st.warning("Choose at least two models.")
    st.stop()
shared_ds = sorted(set.intersection(*(set(df.loc[df["model"] == m, "dataset"]) for m in models)))
dataset = common.select("Dataset", shared_ds, "cmp_dataset", "dataset")
if dataset is None:
    st.info("These models share no dataset.")
    st.stop()

part = df[df["model"].isin(models) & (df["dataset"] == dataset)]
per_model = [set(part.loc[part["model"] == m, "problem_id"]) for m in models]
problems = sorted(set.intersection(*per_model), key=natural_key)
st.query_params.update(dataset=dataset)
st.query_params["models"] = models

st.subheader("Side by side")
pick = st.columns(2)
with pick[0]:
    problem = common.select("Problem", problems, "cmp_problem", "problem")
with pick[1]:
    samples = sorted(part.loc[part["problem_id"] == problem, "sample_id"].unique())
    sample = common.select("Sample index", samples, "cmp_sample", "sample")
if problem is not None:
    st.query_params.update(problem=str(problem), sample=str(sample))
    columns = st.columns(min(len(models), 3))
    for i, model in enumerate(models):
        with columns[i % len(columns)]:
            row = corpus.row_of(model, dataset, problem, sample)
            st.markdown(f"**{escape_markdown(model)}**")
            if row is None:
                st.info("No such sample for this model.")
                continue
            rec = df.iloc[row]
            st.caption(
                f"{rec['class']} · closeness {tables.format_percent(rec['closeness_rate'])}"
                f" · {len(rec['dead_ends'])} dead ends · {rec['n_nodes']} steps"
            )
            traj = corpus.trajectory(row)
            if traj is not None:
                html = render_dag_html(
                    traj,
                    dead_ends=rec["dead_ends"],
                    final_correct=rec["final_correct"],
                    height_px=460,
                )
                st.iframe(html, height=530)

st.subheader("Across problems")
pp = common.derived("per_problem", lambda: metrics.per_problem(df))
pp = pp[pp["dataset"] == dataset]
pair = st.columns(2)
model_a = pair[0].selectbox("Model A", models, index=0, key="cmp_a")
model_b = pair[1].selectbox("Model B", [m for m in models if m != model_a], index=0, key="cmp_b")
scatter = st.columns(2)
scatter[0].plotly_chart(figures.per_problem_scatter(pp, model_a, model_b, "prr"), width="stretch")
scatter[1].plotly_chart(
    figures.per_problem_scatter(pp, model_a, model_b, "pass_at_1"), width="stretch"
)

rows = []
scope = df[df["dataset"] == dataset]
for metric, label in (("prr", "R̂"), ("pass_at_1", "PASS@1"), ("auc", "AUC")):
    d = metrics.paired_difference(scope, model_a, model_b, metric=metric, n_boot=2000)
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
    f"**Paired bootstrap over shared problems** — A = {escape_markdown(model_a)}, "
    f"B = {escape_markdown(model_b)}"
)
diff_table = pd.DataFrame(rows)
st.dataframe(diff_table, hide_index=True, width="stretch")
common.download(diff_table, "paired_differences.csv", "Download the differences (CSV)")

curve = metrics.auc_curve(df[df["model"].isin(models) & (df["dataset"] == dataset)])
if not curve.empty:
    st.plotly_chart(figures.auc_figure(curve, title=f"AUC curves on {dataset}"), width="stretch")
