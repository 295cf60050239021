"""Plotly figures built from the tidy tables (no Streamlit, no ``show()``).

Each function takes a DataFrame and returns a ``plotly.graph_objects.Figure`` with titled
axes and a legend; tests assert on the figure object.

Two rules hold for every figure:

- **Model-derived strings are text, never markup.** Plotly renders a subset of HTML in
  trace names, tick labels, legends, titles and hover labels (``<span style=…>`` included,
  so a CSS ``url(…)`` in a model name would be fetched). Every model, dataset, problem or
  other data-derived string is passed through :func:`text` (``html.escape``) first; plotly
  turns the entities back into the same characters on screen. Bidi controls and invisible
  characters become visible tags there too (:func:`dagmath_viz.text.reveal_bidi`), so two
  names that differ only by a zero-width space never show as one.
- **One colour per model, from its name** (:func:`model_colour`, a stable hash into
  :data:`MODEL_PALETTE`; :func:`assign_model_colours` moves a model whose colour another
  model of the same source already holds, or one much like it, to the next distinct one),
  the same on every page. Classes,
  dead-end categories and overlap types have their own palettes, never the model one.
"""

from __future__ import annotations

import hashlib
import html
import math
from collections.abc import Iterable

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
from plotly.colors import qualitative

from dagmath_viz.analysis.label_density import MIN_EDGES_PER_STEP
from dagmath_viz.analysis.metrics import GRAPH_STATS
from dagmath_viz.schema import CLASSES, COHORTS
from dagmath_viz.text import reveal_bidi

__all__ = [
    "CLASS_COLOURS",
    "DEAD_END_COLOURS",
    "MODEL_PALETTE",
    "OVERLAP_COLOURS",
    "STAT_LABELS",
    "assign_model_colours",
    "auc_figure",
    "class_counts_figure",
    "dead_end_counts_figure",
    "label_density_figure",
    "legend_below",
    "model_colour",
    "model_colours",
    "per_problem_points",
    "per_problem_scatter",
    "stat_distribution_figure",
    "text",
]

#: Model colours (Plotly's Dark24): a model's colour is MODEL_PALETTE[hash(name) % 24].
MODEL_PALETTE: tuple[str, ...] = tuple(qualitative.Dark24)

CLASS_COLOURS = {
    "perfect": "#59a14f",
    "imperfect": "#f28e2b",
    "incorrect": "#e15759",
    "illegal": "#7f3c8d",
    "unscored": "#bab0ac",
}
#: Dead-end categories (ColorBrewer Set2; "unknown": the steps could not be read).
DEAD_END_COLOURS = {
    "unused given": "#66c2a5",
    "unlinked": "#e78ac3",
    "restatement": "#8da0cb",
    "abandoned branch": "#fc8d62",
    "commentary": "#e5c494",
    "unknown": "#d9d9d9",
}
#: Overlap of irrelevant axioms with the goal (ColorBrewer Pastel1, darkened for bars).
OVERLAP_COLOURS = {"none": "#b3cde3", "entity": "#ccebc5", "agent": "#decbe4", "both": "#fed9a6"}
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


def text(value: object) -> str:
    """A data-derived string made safe for plotly: markup shown as the characters typed,
    bidi controls and invisible characters as tags."""
    return html.escape(reveal_bidi(str(value)), quote=False)


def legend_below(fig: go.Figure, y: float, title: str = "") -> go.Figure:
    """Put ``fig``'s legend in rows under the plot, starting at ``y`` (paper units, below 0:
    under the x-axis title), so that a figure in a narrow column keeps its width for the
    data rather than for a legend of long names at its side."""
    fig.update_layout(
        legend={"title": {"text": title}, "orientation": "h", "yanchor": "top", "y": y,
                "xanchor": "left", "x": 0},
        margin={"l": 60, "r": 20, "t": 60, "b": 90},
    )  # fmt: skip
    return fig


def _texts(df: pd.DataFrame, columns: Iterable[str]) -> pd.DataFrame:
    """A copy of ``df`` whose given (present) columns hold escaped text."""
    out = df.copy()
    for col in columns:
        if col in out.columns:
            out[col] = out[col].map(text)
    return out


def model_colour(model: str) -> str:
    """The colour of a model: a stable hash of its name into :data:`MODEL_PALETTE`.

    Stable across runs, processes and pages (``hashlib``, not Python's salted ``hash``),
    and independent of which other models are loaded.
    """
    digest = hashlib.blake2b(str(model).encode("utf-8"), digest_size=8).digest()
    return MODEL_PALETTE[int.from_bytes(digest, "big") % len(MODEL_PALETTE)]


def assign_model_colours(models: Iterable[str]) -> dict[str, str]:
    """``{model: colour}`` for every model of a data source, no two alike (up to 24).

    Each model, in name order, takes :func:`model_colour` (its name's own slot) unless that
    colour is taken or looks like one taken (closer than :data:`MIN_COLOUR_DISTANCE` in
    CIELAB: Dark24 holds near-twins such as #FC0080 and #FB00D1); then it takes the next
    slot that is neither, or failing that the next free one. So a model's colour depends
    only on its name and on which names share its source, never on the page, the plot or
    the order the models appear in; and two models of one source only share a colour when
    there are more models than colours.
    """
    out: dict[str, str] = {}
    used: list[str] = []
    n = len(MODEL_PALETTE)
    for model in sorted({str(m) for m in models}):
        first = MODEL_PALETTE.index(model_colour(model))
        slots = [MODEL_PALETTE[(first + k) % n] for k in range(n)]
        free = [c for c in slots if c not in used]
        distinct = [c for c in free if all(_lab_distance(c, u) >= MIN_COLOUR_DISTANCE
                                            for u in used)]  # fmt: skip
        colour = (distinct or free or slots)[0]
        out[model] = colour
        used.append(colour)
    return out


#: Two model colours closer than this (CIELAB ΔE*76) are told apart only side by side.
MIN_COLOUR_DISTANCE = 45.0


def _lab_distance(a: str, b: str) -> float:
    """ΔE*76 between two ``#rrggbb`` colours (sRGB, D65)."""
    return math.dist(_lab(a), _lab(b))


def _lab(colour: str) -> tuple[float, float, float]:
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 216 / 24389 else t * 24389 / 3132 + 16 / 116

    r, g, b = (linear(int(colour[i : i + 2], 16) / 255) for i in (1, 3, 5))
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883
    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def model_colours(models: Iterable[str], colours: dict[str, str] | None = None) -> dict[str, str]:
    """``{escaped model name: colour}``, for ``color_discrete_map`` on escaped data.

    ``colours`` is the data source's :func:`assign_model_colours`; without it the models
    given are coloured among themselves.
    """
    models = [str(m) for m in models]
    chosen = colours or assign_model_colours(models)
    return {text(m): chosen.get(m) or model_colour(m) for m in models}


def auc_figure(
    curve: pd.DataFrame,
    title: str = "AUC curves: A(τ) against closeness τ",
    colours: dict[str, str] | None = None,
) -> go.Figure:
    """A(τ) per model (one line each; one panel per dataset when there are several).

    ``curve`` is :func:`dagmath_viz.analysis.metrics.auc_curve` output. A(0) is PASS@1, A(1) is R̂.
    """
    datasets = curve["dataset"].nunique() if "dataset" in curve else 1
    colours = model_colours(curve["model"].unique(), colours) if "model" in curve else None
    curve = _texts(curve, ("model", "dataset"))
    fig = px.line(
        curve, x="tau", y="A", color="model" if "model" in curve else None,
        color_discrete_map=colours,
        facet_col="dataset" if datasets > 1 else None, facet_col_wrap=3,
        labels={"tau": "closeness threshold τ", "A": "A(τ)", "model": "model"},
        title=text(title), range_y=[0, 1.02],
    )  # fmt: skip
    fig.update_layout(**_LAYOUT, hovermode="x unified")
    fig.update_yaxes(tickformat=".0%")
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    return fig


def stat_distribution_figure(
    df: pd.DataFrame,
    stat: str,
    x: str,
    color: str = "model",
    kind: str = "box",
    custom_data: list[str] | None = None,
    colours: dict[str, str] | None = None,
) -> go.Figure:
    """Distribution of one graph statistic, stratified by ``x`` and coloured by ``color``.

    Density is shown in percent, as in the paper. Outliers are drawn as points; with
    ``custom_data`` (column names) each point carries those values, so a selected outlier
    can name the trajectory behind it.
    """
    if stat not in GRAPH_STATS:
        raise ValueError(f"unknown statistic {stat!r}")
    colours = model_colours(df[color].unique(), colours) if color == "model" else None
    data = _texts(df, {"model", "dataset", color, x})
    if stat == "density":
        data[stat] = 100.0 * data[stat].astype(float)
    data[x] = data[x].astype(str)
    order = sorted(data[x].unique(), key=_sort_key)
    if x == "cohort":
        order = [c for c in COHORTS if c in set(data[x])]
    plot = px.violin if kind == "violin" else px.box
    fig = plot(
        data, x=x, y=stat, color=color, category_orders={x: order},
        color_discrete_map=colours, custom_data=custom_data, points="outliers",
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


def per_problem_points(pp: pd.DataFrame, model_a: str, model_b: str, metric: str) -> pd.DataFrame:
    """Shared problems of A and B as points: one row per distinct (a, b) value pair.

    Columns: ``dataset``, ``a``, ``b`` (the metric of A and of B), ``n`` (problems at
    that point) and ``problems`` (their ids, in natural order). Per-problem rates take few
    distinct values (k/n for n samples), so many problems share a point: drawing one
    marker per problem would hide all but one of them.
    """
    a = pp[pp["model"] == model_a].set_index(["dataset", "problem_id"])[metric]
    b = pp[pp["model"] == model_b].set_index(["dataset", "problem_id"])[metric]
    joined = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner").reset_index()
    joined = joined.dropna(subset=["a", "b"])
    if joined.empty:
        return pd.DataFrame(columns=["dataset", "a", "b", "n", "problems"])
    from dagmath_viz.text import natural_key

    points = (
        joined.groupby(["dataset", "a", "b"], sort=True)["problem_id"]
        .agg(lambda ids: sorted(map(str, ids), key=natural_key))
        .reset_index(name="problems")
    )
    points["n"] = points["problems"].map(len)
    return points[["dataset", "a", "b", "n", "problems"]]


def per_problem_scatter(
    pp: pd.DataFrame, model_a: str, model_b: str, metric: str, points: pd.DataFrame | None = None
) -> go.Figure:
    """Per-problem ``metric`` of model A (x) against model B (y), with the diagonal.

    One marker per distinct (A, B) pair (:func:`per_problem_points`), its area growing
    with the number of problems there and its hover naming them; a selected marker's
    ``point_index`` is its row in ``points``.
    """
    if points is None:
        points = per_problem_points(pp, model_a, model_b, metric)
    label = {"prr": "PRR", "pass_at_1": "PASS@1", "auc": "AUC"}.get(metric, metric)
    shown = points["problems"].map(
        lambda ids: ", ".join(text(i) for i in ids[:12]) + (" …" if len(ids) > 12 else "")
    )
    most = int(points["n"].max()) if len(points) else 1  # no shared problem: no marker
    size = 8 + 22 * (points["n"].astype(float) / max(1, most)) ** 0.5
    fig = go.Figure(
        go.Scatter(
            x=points["a"],
            y=points["b"],
            mode="markers+text",
            text=[str(n) if n > 1 else "" for n in points["n"]],
            textposition="middle center",
            textfont={"size": 10, "color": "#ffffff"},
            marker={"size": size, "color": "#4c4c4c", "opacity": 0.75, "line": {"width": 0}},
            customdata=list(zip(points["n"], shown, points["dataset"].map(text), strict=True)),
            hovertemplate=(
                "A %{x:.2f} · B %{y:.2f}<br>%{customdata[0]} problem(s) in %{customdata[2]}:"
                " %{customdata[1]}<extra></extra>"
            ),
            name="problems",
            showlegend=False,
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[0, 1], y=[0, 1], mode="lines", name="equal", line={"dash": "dot", "color": "#888"},
            hoverinfo="skip",
        )
    )  # fmt: skip
    fig.update_layout(
        **_LAYOUT,
        title=f"Per-problem {label}: A against B",
        xaxis={"title": f"{label} of A: {text(model_a)}", "range": [-0.05, 1.05]},
        yaxis={"title": f"{label} of B: {text(model_b)}", "range": [-0.05, 1.05]},
    )
    return fig


def class_counts_figure(counts: pd.DataFrame) -> go.Figure:
    """Stacked horizontal bars of trajectory classes per model × dataset (from
    class_counts_table), one row per group in the table's order, top to bottom: long
    ``model · dataset`` names stay readable as row labels, where slanted column labels
    overlap once there are more than a few groups."""
    long = counts.melt(
        id_vars=["model", "dataset"],
        value_vars=list(CLASSES),
        var_name="class",
        value_name="trajectories",
    )
    long["group"] = long["model"].map(text) + " · " + long["dataset"].map(text)
    groups = list(dict.fromkeys(long["group"]))
    fig = px.bar(
        long,
        x="trajectories",
        y="group",
        color="class",
        orientation="h",
        color_discrete_map=CLASS_COLOURS,
        category_orders={"class": list(CLASSES), "group": groups},
        labels={"group": "model · dataset"},
        title="Trajectories by class",
    )
    fig.update_layout(**_LAYOUT, barmode="stack", height=160 + 26 * len(groups))
    return fig


def dead_end_counts_figure(counts: pd.DataFrame) -> go.Figure:
    """Stacked bars of dead ends per model by category (from dead_end_counts)."""
    cats = [c for c in counts.columns if c not in {"model", "total"}]
    long = counts.melt(
        id_vars=["model"], value_vars=cats, var_name="category", value_name="dead ends"
    )
    long = _texts(long, ("model",))
    fig = px.bar(
        long,
        x="model",
        y="dead ends",
        color="category",
        color_discrete_map=DEAD_END_COLOURS,
        category_orders={"category": cats},
        title="Dead ends by category",
    )
    fig.update_layout(**_LAYOUT, barmode="stack")
    return fig


def label_density_figure(table: pd.DataFrame) -> go.Figure:
    """Dead ends against edges per step, one marker per trajectory (from
    :func:`dagmath_viz.analysis.label_density.label_density_table`), with the sparse line.

    Trajectories left of the dashed line (fewer than ``MIN_EDGES_PER_STEP`` edges a step)
    or with too many unlinked steps have sparse labels (red x): their dead ends say more
    about the labelling than about the reasoning. The model, data set and problem are in
    the hover: a legend of every model (and of each model twice, sparse and dense) filled
    the half-width column it is drawn in.
    """
    data = _texts(table, ("model", "dataset", "problem_id"))
    data = data.assign(labels=data["sparse"].map({True: "sparse", False: "dense enough"}))
    fig = px.scatter(
        data,
        x="edges_per_step",
        y="dead_ends",
        color="labels",
        symbol="labels",
        color_discrete_map={"sparse": "#e15759", "dense enough": "#4e79a7"},
        symbol_map={"sparse": "x", "dense enough": "circle"},
        category_orders={"labels": ["dense enough", "sparse"]},
        hover_data={
            "labels": False,
            "model": True,
            "dataset": True,
            "problem_id": True,
            "sample_id": True,
            "steps": True,
            "unlinked": True,
        },
        labels={"edges_per_step": "edges per step", "dead_ends": "dead ends"},
        title="Label density (one marker a trajectory)",
    )
    fig.update_traces(marker={"opacity": 0.75})
    fig.add_vline(x=MIN_EDGES_PER_STEP, line_dash="dash", line_color="#e15759")
    fig.update_layout(**_LAYOUT)
    # two entries, in one row below the axis title, so the markers keep the column's width
    legend_below(fig, -0.28, "labels")
    # from 0, so a sparse chain's distance from the line is seen as it is
    top = max(float(table["edges_per_step"].max()) if len(table) else 0.0, 1.0)
    fig.update_xaxes(range=[0, top * 1.08])
    return fig


def dead_end_tags_figure(counts: pd.DataFrame, colours: dict[str, str] | None = None) -> go.Figure:
    """Dead ends per step tag, one bar per model (from step_tags.dead_end_tag_counts).

    Tags run along x, most dead ends first; the hover gives the steps carrying the tag and
    the share of them that are dead ends.
    """
    data = counts.copy()
    order = data.groupby("tag")["dead_ends"].sum().sort_values(ascending=False).index
    data = _texts(data, ("model", "tag"))
    data["share"] = data["dead_end_share"].map(lambda v: f"{v:.0%}")
    fig = px.bar(
        data,
        x="tag",
        y="dead_ends",
        color="model",
        barmode="group",
        color_discrete_map=model_colours(counts["model"].unique(), colours),
        category_orders={"tag": [text(t) for t in order]},
        hover_data={"steps": True, "share": True},
        labels={"dead_ends": "dead ends", "tag": "step tag", "share": "of its steps"},
        title="Dead ends by step tag",
    )
    fig.update_layout(**_LAYOUT)
    return fig


def efficiency_figure(table: pd.DataFrame, structure: str) -> go.Figure:
    """Mean efficiency per strategy × overlap for one irrelevant-axiom structure.

    ``table`` is :func:`dagmath_viz.logic.efficiency_table` output (control rows left out).
    """
    part = table[(table["irrelevant"] == structure) & ~table["control"].astype(bool)]
    # every string column the figure shows comes from someone's records: the overlap (the
    # legend) as much as the strategy (the axis); the known words read the same escaped
    part = _texts(part, ("strategy", "overlap", "irrelevant"))
    order = [o for o in ("none", "entity", "agent", "both") if o in set(part["overlap"])]
    fig = px.bar(
        part, x="strategy", y="efficiency", color="overlap", barmode="group",
        category_orders={"overlap": order}, range_y=[0, 1.12], hover_data=["n", "accuracy"],
        color_discrete_map=OVERLAP_COLOURS, text="n",
        labels={"efficiency": "mean efficiency", "overlap": "overlap with the goal"},
        title=f"Efficiency by strategy, irrelevant structure: {text(structure)} "
        "(n: problems per bar)",
    )  # fmt: skip
    # each bar says how many problems it is the mean of: few problems, little to compare
    fig.update_traces(texttemplate="n=%{text}", textposition="outside", cliponaxis=False)
    fig.update_layout(**_LAYOUT)
    fig.update_yaxes(tickformat=".0%")
    return fig
