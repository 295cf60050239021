"""Figures for the paper's analyses: spread across models, difficulty (rates, and Figure 3's
graph statistics), closeness, Appendix F.

Built from :mod:`dagmath_viz.analysis.tables` output; no Streamlit. Model and dataset names come
from the data (untrusted): they are HTML-escaped before they reach a figure, since Plotly
renders markup in names and labels.
"""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dagmath_viz.analysis.metrics import GRAPH_STATS
from dagmath_viz.analysis.tables import CLOSENESS_BINS, closeness_bin
from dagmath_viz.draw.figures import legend_below, model_colours, text

__all__ = [
    "closeness_accuracy_figure",
    "difficulty_figure",
    "graph_stats_figure",
    "shift_figure",
    "spread_figure",
]

_LAYOUT = {
    "template": "plotly_white",
    "margin": {"l": 60, "r": 20, "t": 70, "b": 50},
    "legend": {"title": {"text": ""}},
}
_METRIC_LABELS = {"pass_at_1": "PASS@1", "r_hat": "R̂", "auc": "AUC", "gap": "Δ"}
_METRIC_COLOURS = {"pass_at_1": "#4e79a7", "r_hat": "#59a14f", "auc": "#b07aa1"}
_STAT_LABELS = {
    "n_nodes": "#nodes",
    "n_edges": "#edges",
    "density": "density",
    "max_in_degree": "max in-degree",
    "max_out_degree": "max out-degree",
}


def _safe(values: pd.Series) -> pd.Series:
    # the same escaping as figures.py, so that model_colours' keys match the escaped names
    return values.astype(str).map(text)


def spread_figure(board: pd.DataFrame) -> go.Figure:
    """PASS@1 and R̂ per model, one panel per dataset, with their 95% intervals.

    ``board`` is :func:`dagmath_viz.analysis.tables.leaderboard` by model and dataset. The paper's
    finding reads at a glance: PASS@1 bars vary across models, R̂ bars stay level.
    """
    datasets = sorted(board["dataset"].astype(str).unique())
    fig = make_subplots(
        rows=1,
        cols=max(1, len(datasets)),
        shared_yaxes=True,
        subplot_titles=[text(d) for d in datasets],
    )
    for col, dataset in enumerate(datasets, start=1):
        part = board[board["dataset"].astype(str) == dataset].sort_values("pass_at_1")
        for metric in ("pass_at_1", "r_hat"):
            error = None
            if f"{metric}_low" in part:
                error = {
                    "type": "data",
                    "symmetric": False,
                    "array": (part[f"{metric}_high"] - part[metric]).fillna(0).tolist(),
                    "arrayminus": (part[metric] - part[f"{metric}_low"]).fillna(0).tolist(),
                }
            fig.add_trace(
                go.Bar(
                    x=_safe(part["model"]),
                    y=part[metric],
                    name=_METRIC_LABELS[metric],
                    marker_color=_METRIC_COLOURS[metric],
                    error_y=error,
                    legendgroup=metric,
                    showlegend=col == 1,
                    hovertemplate="%{x}: %{y:.1%}<extra>" + _METRIC_LABELS[metric] + "</extra>",
                ),
                row=1,
                col=col,
            )
    fig.update_layout(
        **_LAYOUT, barmode="group", title="PASS@1 and R̂ per model (95% intervals over problems)"
    )
    fig.update_yaxes(tickformat=".0%", range=[0, 1.05])
    fig.update_yaxes(title_text="rate", row=1, col=1)
    return fig


def difficulty_figure(table: pd.DataFrame, colours: dict[str, str] | None = None) -> go.Figure:
    """PASS@1, R̂ and AUC against difficulty group, one line per model, a panel per metric.

    ``table`` is :func:`dagmath_viz.analysis.tables.by_difficulty` output. (The paper's
    Figure 3 is the graph statistics by difficulty: :func:`graph_stats_figure`.)
    """
    long = table.melt(
        id_vars=["model", "difficulty_group"],
        value_vars=["pass_at_1", "r_hat", "auc"],
        var_name="metric",
        value_name="rate",
    )
    palette = model_colours(long["model"].astype(str).unique(), colours)
    long["model"] = _safe(long["model"])
    long["metric"] = long["metric"].map(_METRIC_LABELS)
    fig = px.line(
        long, x="difficulty_group", y="rate", color="model", facet_col="metric", markers=True,
        color_discrete_map=palette,
        labels={"difficulty_group": "difficulty group k: (k − 1, k]", "rate": "rate"},
        title="PASS@1, R̂ and AUC by difficulty group",
    )  # fmt: skip
    fig.update_layout(**_LAYOUT)
    fig.update_yaxes(tickformat=".0%", range=[0, 1.02])
    fig.update_xaxes(dtick=1)
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    return fig


def graph_stats_figure(table: pd.DataFrame, colours: dict[str, str] | None = None) -> go.Figure:
    """The paper's Figure 3: the five graph statistics against difficulty group, one panel
    per statistic, one line per model (means over trajectories; density in percent).

    ``table`` is :func:`dagmath_viz.analysis.tables.graph_stats_by_difficulty` output.
    """
    shown = table.copy()
    shown["density"] = 100.0 * shown["density"]
    long = shown.melt(
        id_vars=["model", "difficulty_group", "n"],
        value_vars=list(GRAPH_STATS),
        var_name="statistic",
        value_name="mean",
    )
    labels = {**_STAT_LABELS, "density": "density (%)"}
    long["statistic"] = pd.Categorical(
        long["statistic"].map(labels), categories=[labels[s] for s in GRAPH_STATS], ordered=True
    )
    palette = model_colours(long["model"].astype(str).unique(), colours)
    long["model"] = _safe(long["model"])
    fig = px.line(
        long.sort_values(["statistic", "model", "difficulty_group"]),
        x="difficulty_group", y="mean", color="model", facet_col="statistic",
        facet_col_wrap=3, markers=True, color_discrete_map=palette, hover_data={"n": True},
        category_orders={"statistic": [labels[s] for s in GRAPH_STATS]},
        labels={"difficulty_group": "difficulty group k: (k − 1, k]", "mean": "mean"},
        title="Graph statistics by difficulty group (the paper's Figure 3)",
        facet_row_spacing=0.16, facet_col_spacing=0.07,
    )  # fmt: skip
    fig.update_layout(**_LAYOUT, height=640)
    # the models' legend under the panels, so the three columns keep the width; each panel
    # its own x ticks (density, top right, has no panel below it to carry them)
    legend_below(fig, -0.14)
    fig.update_xaxes(dtick=1, showticklabels=True)
    fig.update_yaxes(matches=None, showticklabels=True)
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    return fig


#: Bins with fewer trajectories than this are marked (open markers) and the line does not
#: run through them: one trajectory makes a share of 0 % or 100 %, which says little.
MIN_BIN_N = 5


def closeness_accuracy_figure(
    table: pd.DataFrame, colours: dict[str, str] | None = None
) -> go.Figure:
    """Accuracy by closeness bin, one line per model (:func:`tables.closeness_accuracy`).

    Every marker is labelled with its bin's n; the line joins only bins of at least
    :data:`MIN_BIN_N` trajectories, and smaller bins are open markers standing alone.
    """
    palette = model_colours(table["model"].astype(str).unique(), colours)
    order = [closeness_bin(x) for x in (*CLOSENESS_BINS[:-1], 1.0)]  # every bin, in order
    fig = go.Figure()
    for model, rows in table.groupby("model", sort=True):
        name = text(model)
        colour = palette.get(name)
        big = rows["n"] >= MIN_BIN_N
        fig.add_trace(
            go.Scatter(
                x=rows["closeness_bin"], mode="lines",
                y=[float(a) if b else None for a, b in zip(rows["accuracy"], big, strict=True)],
                line={"color": colour}, name=name, legendgroup=name, connectgaps=False,
                hoverinfo="skip",
            )
        )  # fmt: skip
        fig.add_trace(
            go.Scatter(
                x=rows["closeness_bin"], y=rows["accuracy"], mode="markers+text",
                text=[f"n={int(n)}" for n in rows["n"]], textposition="top center",
                marker={"color": colour, "size": 9,
                        "symbol": ["circle" if b else "circle-open" for b in big]},
                name=name, legendgroup=name, showlegend=False,
                customdata=rows[["n", "n_correct"]].to_numpy(),
                hovertemplate=name + "<br>r in %{x}: %{y:.1%} correct (%{customdata[1]} of "
                "%{customdata[0]})<extra></extra>",
            )
        )  # fmt: skip
    fig.update_layout(
        **_LAYOUT,
        title="Accuracy by closeness (n per bin; open markers: fewer than "
        f"{MIN_BIN_N} trajectories, not joined)",
        xaxis_title="closeness rate r (bin)",
        yaxis_title="share correct",
    )
    fig.update_xaxes(categoryorder="array", categoryarray=order)
    fig.update_yaxes(tickformat=".0%", range=[0, 1.12])
    return fig


def shift_figure(shift: pd.DataFrame, colours: dict[str, str] | None = None) -> go.Figure:
    """Appendix F: Correct → Perfect shift of each statistic against the gap Δ.

    ``shift`` is :func:`dagmath_viz.analysis.tables.correct_to_perfect_shift` output; one point per
    model (and dataset), one panel per statistic. Density is shown in percentage points.
    """
    shown = shift.copy()
    shown["density"] = 100.0 * shown["density"]
    long = shown.melt(
        id_vars=[c for c in ("model", "dataset", "gap") if c in shown],
        value_vars=list(GRAPH_STATS),
        var_name="statistic",
        value_name="shift",
    ).dropna(subset=["shift"])
    long["statistic"] = long["statistic"].map(_STAT_LABELS)
    palette = model_colours(long["model"].astype(str).unique(), colours)
    long["model"] = _safe(long["model"])
    if "dataset" in long:
        long["dataset"] = _safe(long["dataset"])
    fig = px.scatter(
        long, x="gap", y="shift", color="model", facet_col="statistic", facet_col_wrap=3,
        color_discrete_map=palette,
        symbol="dataset" if "dataset" in long else None, facet_row_spacing=0.14,
        labels={"gap": "gap Δ", "shift": "shift"},
        title="Correct → Perfect shift (mean over Perfect − mean over Correct) against the gap "
        "Δ = PASS@1 − R̂ (Appendix F)",
    )  # fmt: skip
    fig.update_layout(**_LAYOUT, height=620)
    fig.update_xaxes(tickformat=".0%")
    fig.update_yaxes(matches=None, showticklabels=True)
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    return fig
