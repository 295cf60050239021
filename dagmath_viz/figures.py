"""Plotly figures built from the tidy tables (no Streamlit, no ``show()``).

Each function takes a DataFrame and returns a ``plotly.graph_objects.Figure`` with titled
axes and a legend; tests assert on the figure object.
"""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from dagmath_viz.metrics import GRAPH_STATS
from dagmath_viz.schema import CLASSES, COHORTS

__all__ = [
    "CLASS_COLOURS",
    "STAT_LABELS",
    "auc_figure",
    "class_counts_figure",
    "dead_end_counts_figure",
    "per_problem_scatter",
    "stat_distribution_figure",
]

CLASS_COLOURS = {
    "perfect": "#59a14f",
    "imperfect": "#f28e2b",
    "incorrect": "#e15759",
    "illegal": "#7f3c8d",
    "unscored": "#bab0ac",
}
STAT_LABELS = {
    "n_nodes": "#nodes",
    "n_edges": "#edges",
    "density": "density (%)",
    "max_in_degree": "max in-degree",
    "max_out_degree": "max out-degree",
}
_LAYOUT = {
    "template": "plotly_white",
    "margin": {"l": 60, "r": 20, "t": 60, "b": 50},
    "legend": {"title": {"text": ""}},
}


def auc_figure(
    curve: pd.DataFrame, title: str = "AUC curves: A(τ) against closeness τ"
) -> go.Figure:
    """A(τ) per model (one line each; one panel per dataset when there are several).

    ``curve`` is :func:`dagmath_viz.metrics.auc_curve` output. A(0) is PASS@1, A(1) is R̂.
    """
    datasets = curve["dataset"].nunique() if "dataset" in curve else 1
    fig = px.line(
        curve, x="tau", y="A", color="model" if "model" in curve else None,
        facet_col="dataset" if datasets > 1 else None, facet_col_wrap=3,
        labels={"tau": "closeness threshold τ", "A": "A(τ)", "model": "model"},
        title=title, range_y=[0, 1.02],
    )  # fmt: skip
    fig.update_layout(**_LAYOUT, hovermode="x unified")
    fig.update_yaxes(tickformat=".0%")
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    return fig


def stat_distribution_figure(
    df: pd.DataFrame, stat: str, x: str, color: str = "model", kind: str = "box"
) -> go.Figure:
    """Distribution of one graph statistic, stratified by ``x`` and coloured by ``color``.

    Density is shown in percent, as in the paper.
    """
    if stat not in GRAPH_STATS:
        raise ValueError(f"unknown statistic {stat!r}")
    data = df.copy()
    if stat == "density":
        data[stat] = 100.0 * data[stat].astype(float)
    data[x] = data[x].astype(str)
    order = sorted(data[x].unique(), key=_sort_key)
    if x == "cohort":
        order = [c for c in COHORTS if c in set(data[x])]
    plot = px.violin if kind == "violin" else px.box
    fig = plot(
        data, x=x, y=stat, color=color, category_orders={x: order},
        labels={stat: STAT_LABELS[stat], x: x.replace("_", " "), color: color},
        title=f"{STAT_LABELS[stat]} by {x.replace('_', ' ')}",
    )  # fmt: skip
    fig.update_layout(**_LAYOUT, boxmode="group")
    return fig


def _sort_key(value: str) -> tuple:
    try:
        return (0, float(value), "")
    except ValueError:
        return (1, 0.0, value)


def per_problem_scatter(pp: pd.DataFrame, model_a: str, model_b: str, metric: str) -> go.Figure:
    """Per-problem ``metric`` of model A (x) against model B (y), with the diagonal."""
    a = pp[pp["model"] == model_a].set_index(["dataset", "problem_id"])[metric]
    b = pp[pp["model"] == model_b].set_index(["dataset", "problem_id"])[metric]
    joined = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner").reset_index()
    label = {"prr": "PRR", "pass_at_1": "PASS@1", "auc": "AUC"}.get(metric, metric)
    fig = px.scatter(
        joined, x="a", y="b", color="dataset", hover_data=["problem_id"],
        labels={"a": f"{label}: {model_a}", "b": f"{label}: {model_b}"},
        title=f"Per-problem {label}: {model_a} against {model_b}", range_x=[-0.05, 1.05],
        range_y=[-0.05, 1.05],
    )  # fmt: skip
    fig.add_trace(
        go.Scatter(
            x=[0, 1], y=[0, 1], mode="lines", name="equal", line={"dash": "dot", "color": "#888"}
        )
    )
    fig.update_layout(**_LAYOUT)
    return fig


def class_counts_figure(counts: pd.DataFrame) -> go.Figure:
    """Stacked bars of trajectory classes per model × dataset (from class_counts_table)."""
    long = counts.melt(
        id_vars=["model", "dataset"],
        value_vars=list(CLASSES),
        var_name="class",
        value_name="trajectories",
    )
    long["group"] = long["model"] + " · " + long["dataset"]
    fig = px.bar(
        long,
        x="group",
        y="trajectories",
        color="class",
        color_discrete_map=CLASS_COLOURS,
        category_orders={"class": list(CLASSES)},
        labels={"group": "model · dataset"},
        title="Trajectories by class",
    )
    fig.update_layout(**_LAYOUT, barmode="stack")
    return fig


def dead_end_counts_figure(counts: pd.DataFrame) -> go.Figure:
    """Stacked bars of dead ends per model by category (from dead_end_counts)."""
    cats = [c for c in counts.columns if c not in {"model", "total"}]
    long = counts.melt(
        id_vars=["model"], value_vars=cats, var_name="category", value_name="dead ends"
    )
    fig = px.bar(
        long,
        x="model",
        y="dead ends",
        color="category",
        category_orders={"category": cats},
        title="Dead ends by category",
    )
    fig.update_layout(**_LAYOUT, barmode="stack")
    return fig


def efficiency_figure(table: pd.DataFrame, structure: str) -> go.Figure:
    """Mean efficiency per strategy × overlap for one irrelevant-axiom structure.

    ``table`` is :func:`dagmath_viz.logic.efficiency_table` output (control rows left out).
    """
    part = table[(table["irrelevant"] == structure) & ~table["control"].astype(bool)]
    order = [o for o in ("none", "entity", "agent", "both") if o in set(part["overlap"])]
    fig = px.bar(
        part, x="strategy", y="efficiency", color="overlap", barmode="group",
        category_orders={"overlap": order}, range_y=[0, 1.05], hover_data=["n", "accuracy"],
        labels={"efficiency": "mean efficiency", "overlap": "overlap with the goal"},
        title=f"Efficiency by strategy, irrelevant structure: {structure}",
    )  # fmt: skip
    fig.update_layout(**_LAYOUT)
    fig.update_yaxes(tickformat=".0%")
    return fig
