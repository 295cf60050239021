"""Plotly figures: the data they carry and their labels, asserted on the figure object."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from dagmath_viz.draw import figures


def _values(trace_values) -> list:
    return list(trace_values) if trace_values is not None else []


@pytest.fixture
def scored() -> pd.DataFrame:
    return pd.DataFrame({
        "model": ["a", "a", "b", "b"],
        "dataset": ["d"] * 4,
        "problem_id": ["1", "2", "1", "2"],
        "n_nodes": [3, 5, 4, 6],
        "n_edges": [2, 4, 3, 5],
        "density": [2 * 2 / 6, 2 * 4 / 20, 2 * 3 / 12, 2 * 5 / 30],
        "max_in_degree": [1, 2, 1, 2],
        "max_out_degree": [1, 1, 2, 2],
        "difficulty_group": [1, 2, 1, 2],
    })  # fmt: skip


def test_auc_figure_one_line_per_model():
    curve = pd.DataFrame(
        {
            "model": ["a", "a", "b", "b"],
            "dataset": ["d"] * 4,
            "tau": [0.0, 1.0, 0.0, 1.0],
            "A": [0.8, 0.5, 0.6, 0.6],
        }
    )
    fig = figures.auc_figure(curve)
    assert sorted(t.name for t in fig.data) == ["a", "b"]
    a = next(t for t in fig.data if t.name == "a")
    assert _values(a.y) == [0.8, 0.5]
    assert fig.layout.xaxis.title.text == "closeness threshold τ"


def test_density_is_plotted_in_percent(scored):
    fig = figures.stat_distribution_figure(scored, "density", x="difficulty_group")
    ys = sorted(v for t in fig.data for v in _values(t.y))
    # 2E/(N(N-1)) in percent: 4/6, 8/20, 6/12, 10/30 -> 66.7, 40, 50, 33.3
    assert [round(v, 1) for v in ys] == [33.3, 40.0, 50.0, 66.7]
    assert fig.layout.yaxis.title.text == "density (%)"


def test_unknown_statistic_is_an_error(scored):
    with pytest.raises(ValueError, match="unknown statistic"):
        figures.stat_distribution_figure(scored, "n_words", x="dataset")


def test_per_problem_scatter_pairs_problems():
    pp = pd.DataFrame(
        {
            "model": ["a", "a", "b"],
            "dataset": ["d"] * 3,
            "problem_id": ["1", "2", "1"],
            "prr": [0.25, 1.0, 0.75],
        }
    )
    fig = figures.per_problem_scatter(pp, "a", "b", "prr")
    points = fig.data[0]
    assert (list(points.x), list(points.y)) == ([0.25], [0.75])  # only problem 1 is shared
    assert fig.data[-1].name == "equal"


def test_class_counts_figure_stacks_every_class():
    counts = pd.DataFrame(
        {
            "model": ["a"],
            "dataset": ["d"],
            "perfect": [2],
            "imperfect": [1],
            "incorrect": [0],
            "illegal": [1],
            "unscored": [0],
            "total": [4],
        }
    )
    fig = figures.class_counts_figure(counts)
    assert [t.name for t in fig.data] == list(figures.CLASS_COLOURS)
    assert {t.name: t.marker.color for t in fig.data} == figures.CLASS_COLOURS
    # one horizontal row per model · dataset, so long names stay readable
    assert {t.orientation for t in fig.data} == {"h"}
    assert list(fig.data[0].y) == ["a · d"]


def test_class_counts_rows_keep_the_table_order_and_grow_the_figure():
    rows = [("m2", "d"), ("m1", "d"), ("m1", "e")]
    counts = pd.DataFrame(
        [{"model": m, "dataset": d, **dict.fromkeys(figures.CLASS_COLOURS, 1), "total": 5}
         for m, d in rows]
    )  # fmt: skip
    fig = figures.class_counts_figure(counts)
    # a category axis draws its array bottom up: the table's first row is the top bar
    top_down = list(reversed(fig.layout.yaxis.categoryarray))
    assert top_down == ["m2 · d", "m1 · d", "m1 · e"]
    two = figures.class_counts_figure(counts.iloc[:2])
    assert fig.layout.height > two.layout.height


# --- colour per model, escaping, overlapping points ------------------------------------------

BEACON = 'm<span style="background:url(http://127.0.0.2:9/x.png)">x</span>'


def test_model_colour_is_stable_and_independent_of_other_models():
    curve = pd.DataFrame(
        {"model": ["a", "a", "b", "b"], "dataset": ["d"] * 4, "tau": [0.0, 1.0] * 2,
         "A": [0.5] * 4}
    )  # fmt: skip
    alone = curve[curve["model"] == "b"]
    both = {t.name: t.line.color for t in figures.auc_figure(curve).data}
    only = {t.name: t.line.color for t in figures.auc_figure(alone).data}
    assert both["b"] == only["b"] == figures.model_colour("b")
    assert both["a"] == figures.model_colour("a")
    # the same in a distribution figure
    df = pd.DataFrame({"model": ["b", "a"], "dataset": ["d", "d"], "n_nodes": [3, 4]})
    box = {
        t.name: t.marker.color
        for t in figures.stat_distribution_figure(df, "n_nodes", "dataset").data
    }
    assert box == {"a": figures.model_colour("a"), "b": figures.model_colour("b")}
    # a fixed name always maps to the same palette entry (blake2b, not Python's hash)
    import hashlib

    digest = hashlib.blake2b(b"sim-focus-1.0", digest_size=8).digest()
    assert (
        figures.model_colour("sim-focus-1.0")
        == figures.MODEL_PALETTE[int.from_bytes(digest, "big") % len(figures.MODEL_PALETTE)]
    )


def test_other_encodings_never_use_the_model_palette():
    model = {c.lower() for c in figures.MODEL_PALETTE}
    assert len(model) == 24
    for palette in (figures.CLASS_COLOURS, figures.DEAD_END_COLOURS, figures.OVERLAP_COLOURS):
        assert not model & {c.lower() for c in palette.values()}


def test_dead_end_categories_use_their_own_colours():
    counts = pd.DataFrame({"model": ["a"], "unused given": [1], "commentary": [2],
                           "unknown": [3], "total": [6]})  # fmt: skip
    colours = {t.name: t.marker.color for t in figures.dead_end_counts_figure(counts).data}
    assert colours == {k: figures.DEAD_END_COLOURS[k] for k in ("unused given", "commentary",
                                                               "unknown")}  # fmt: skip


def _strings(fig) -> str:
    # decoded: plotly's to_json writes "<" as "\\u003c", so raw markup would never match
    return json.dumps(json.loads(fig.to_json()))


def test_model_names_reach_plotly_escaped_everywhere():
    raw = '<span style=\\"background'
    curve = pd.DataFrame({"model": [BEACON] * 2, "dataset": [BEACON] * 2, "tau": [0.0, 1.0],
                          "A": [1.0, 0.5]})  # fmt: skip
    df = pd.DataFrame({"model": [BEACON, "b"], "dataset": [BEACON] * 2, "n_nodes": [3, 4],
                       "cohort": ["All", "All"]})  # fmt: skip
    pp = pd.DataFrame({"model": [BEACON, "b"], "dataset": ["d", "d"],
                       "problem_id": [BEACON, BEACON], "prr": [0.5, 1.0]})  # fmt: skip
    counts = pd.DataFrame({"model": [BEACON], "dataset": [BEACON], "perfect": [1],
                           "imperfect": [0], "incorrect": [0], "illegal": [0],
                           "unscored": [0]})  # fmt: skip
    de = pd.DataFrame({"model": [BEACON], "commentary": [1], "total": [1]})
    eff = pd.DataFrame({"strategy": [BEACON, "dfs"], "irrelevant": ["tree"] * 2,
                        "overlap": [BEACON, "none"], "control": [False] * 2, "n": [3, 4],
                        "accuracy": [1.0, 0.5], "efficiency": [0.5, 0.25]})  # fmt: skip
    figs = [
        figures.auc_figure(curve, title=f"AUC on {BEACON}"),
        figures.stat_distribution_figure(df, "n_nodes", x="dataset"),
        figures.stat_distribution_figure(df, "n_nodes", x="cohort"),
        figures.per_problem_scatter(pp, BEACON, "b", "prr"),
        figures.class_counts_figure(counts),
        figures.dead_end_counts_figure(de),
        figures.efficiency_figure(eff, "tree"),  # Efficiency: overlap and strategy (issue 33)
    ]
    for fig in figs:
        spec = _strings(fig)
        assert raw not in spec, spec[:400]
        assert "m&lt;span" in spec
    # the legend shows the name as typed: plotly turns the entities back into characters
    assert figs[0].data[0].name == figures.text(BEACON)
    assert figures.text("<b>&") == "&lt;b&gt;&amp;"


def test_overlapping_problems_become_one_sized_point():
    pp = pd.DataFrame(
        {
            "model": ["a"] * 4 + ["b"] * 4,
            "dataset": ["d"] * 8,
            "problem_id": ["1", "2", "10", "3"] * 2,
            "prr": [1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.5],
        }
    )
    points = figures.per_problem_points(pp, "a", "b", "prr")
    # problems 1, 2 and 10 sit at (1, 1); problem 3 at (0, 0.5)
    assert list(zip(points["a"], points["b"], points["n"], strict=True)) == [
        (0.0, 0.5, 1),
        (1.0, 1.0, 3),
    ]
    assert points["problems"].iloc[1] == ["1", "2", "10"]  # natural order
    fig = figures.per_problem_scatter(pp, "a", "b", "prr", points=points)
    sizes = list(fig.data[0].marker.size)
    assert sizes[1] > sizes[0]
    assert list(fig.data[0].text) == ["", "3"]


def test_models_of_one_source_never_share_a_colour():
    names = [f"model-{i}" for i in range(60)]
    # two names whose own slots collide
    by_colour: dict[str, list[str]] = {}
    for n in names:
        by_colour.setdefault(figures.model_colour(n), []).append(n)
    first, second = next(v for v in by_colour.values() if len(v) >= 2)[:2]
    lone = next(v[0] for v in by_colour.values() if len(v) == 1)
    chosen = [first, second, lone]
    colours = figures.assign_model_colours(chosen)
    assert len(set(colours.values())) == 3
    assert colours[min(first, second)] == figures.model_colour(first)  # the first keeps it
    assert colours[lone] == figures.model_colour(lone)  # uncontested: its own colour
    assert figures.assign_model_colours(reversed(chosen)) == colours  # order does not matter
    # 24 models: 24 different colours
    assert len(set(figures.assign_model_colours(names[:24]).values())) == 24
    # a figure given the source's colours uses them for a subset of its models
    curve = pd.DataFrame({"model": [second] * 2, "dataset": ["d"] * 2, "tau": [0.0, 1.0],
                          "A": [1.0, 0.5]})  # fmt: skip
    fig = figures.auc_figure(curve, colours=colours)
    assert fig.data[0].line.color == colours[second]


def test_scatter_without_shared_problems_is_empty_not_an_error():
    pp = pd.DataFrame({"model": ["a", "b"], "dataset": ["d", "d"], "problem_id": ["1", "2"],
                       "prr": [0.5, 1.0]})  # fmt: skip
    fig = figures.per_problem_scatter(pp, "a", "b", "prr")
    assert list(fig.data[0].x) == [] and fig.data[-1].name == "equal"


def test_paper_figures_use_the_model_colours_and_escape_names():
    from dagmath_viz.draw import paper_figures

    table = pd.DataFrame({"model": [BEACON, "b"], "difficulty_group": [1, 1],
                          "pass_at_1": [0.5, 0.6], "r_hat": [0.2, 0.3],
                          "auc": [0.4, 0.5]})  # fmt: skip
    colours = figures.assign_model_colours([BEACON, "b", "c"])
    fig = paper_figures.difficulty_figure(table, colours)
    by_name = {t.name: t.line.color for t in fig.data}
    assert by_name[figures.text(BEACON)] == colours[BEACON] and by_name["b"] == colours["b"]
    assert '<span style=\\"background' not in _strings(fig)


def test_figure_3_is_the_five_graph_statistics_by_difficulty():
    from dagmath_viz.draw import paper_figures

    table = pd.DataFrame({"model": [BEACON, BEACON, "b"], "difficulty_group": [1, 2, 1],
                          "n": [3, 4, 5], "n_nodes": [10.0, 12.0, 9.0],
                          "n_edges": [12.0, 15.0, 10.0], "density": [0.2, 0.15, 0.25],
                          "max_in_degree": [2.0, 2.5, 2.0],
                          "max_out_degree": [3.0, 4.5, 2.5]})  # fmt: skip
    fig = paper_figures.graph_stats_figure(table)
    assert fig.layout.title.text == "Graph statistics by difficulty group (the paper's Figure 3)"
    panels = sorted(a.text for a in fig.layout.annotations)
    assert panels == sorted(["#nodes", "#edges", "density (%)", "max in-degree",
                             "max out-degree"])  # fmt: skip
    # one trace per model and statistic; density shown in percent
    assert len(fig.data) == 2 * 5
    density = [t for t in fig.data if t.name == "b" and 25.0 in list(t.y)]
    assert len(density) == 1 and list(density[0].x) == [1]
    assert '<span style=\\"background' not in fig.to_json()
    # every panel has its own x ticks (density, top right, has no panel below it), and the
    # legend sits under the panels
    xaxes = [fig.layout[k] for k in fig.layout if k.startswith("xaxis")]
    assert len(xaxes) >= 5 and all(ax.showticklabels for ax in xaxes)  # 6 slots, 5 used
    assert fig.layout.legend.orientation == "h" and fig.layout.legend.y < 0


def test_the_rates_chart_does_not_claim_to_be_figure_3():
    from dagmath_viz.draw import paper_figures

    table = pd.DataFrame({"model": ["a"], "difficulty_group": [1], "pass_at_1": [0.5],
                          "r_hat": [0.2], "auc": [0.4]})  # fmt: skip
    title = paper_figures.difficulty_figure(table).layout.title.text
    assert title == "PASS@1, R̂ and AUC by difficulty group"


def test_lab_distance_of_known_colours():
    # white is L* = 100 and black L* = 0, both with a* = b* = 0: ΔE = 100
    assert abs(figures._lab_distance("#FFFFFF", "#000000") - 100.0) < 0.01
    assert figures._lab_distance("#2E91E5", "#2E91E5") == 0.0


def test_near_twin_colours_are_not_given_to_two_models():
    """Dark24's #FC0080 and #FB00D1 look alike in a legend; the bundled sample data once
    drew sim-focus-2.5-aversion-0.3 and -0.6 in them, side by side."""
    assert figures._lab_distance("#FC0080", "#FB00D1") < figures.MIN_COLOUR_DISTANCE
    names = [f"model-{i}" for i in range(400)]
    pink = next(n for n in names if figures.model_colour(n) == "#FC0080")
    magenta = next(n for n in names if figures.model_colour(n) == "#FB00D1")
    colours = figures.assign_model_colours([pink, magenta])
    first, second = sorted([pink, magenta])
    assert colours[first] == figures.model_colour(first)  # the first keeps its own
    assert figures._lab_distance(colours[first], colours[second]) >= 45.0
    # the bundled sample models: ten colours, no two closer than the limit
    aversions = [f"sim-focus-2.5-aversion-{b}" for b in ("0.3", "0.6", "0.9", "1.2")]
    bundled = ["gsm-bfs", "gsm-dfs", "gsm-overlap", "gsm-shortest", "sim-focus-2.4",
               "sim-focus-2.5", *aversions]  # fmt: skip
    chosen = list(figures.assign_model_colours(bundled).values())
    assert len(set(chosen)) == 10
    assert min(figures._lab_distance(a, b) for i, a in enumerate(chosen)
               for b in chosen[i + 1:]) >= 45.0  # fmt: skip


def test_accuracy_by_closeness_shows_n_and_does_not_join_tiny_bins():
    """Issue 34 item 10: the line ran through bins of n = 1, n shown only on hover."""
    from dagmath_viz.draw import paper_figures

    # one model; bins [0, .5) n=1 (0 of 1 correct), [.9, 1) n=10 (7), {1} n=20 (18)
    table = pd.DataFrame({"model": [BEACON] * 3, "closeness_bin": ["[0, 0.5)", "[0.9, 1)", "1"],
                          "n": [1, 10, 20], "n_correct": [0, 7, 18],
                          "accuracy": [0.0, 0.7, 0.9]})  # fmt: skip
    fig = paper_figures.closeness_accuracy_figure(table)
    line, marks = fig.data
    assert line.mode == "lines" and not line.connectgaps
    assert list(line.y[1:]) == [0.7, 0.9] and line.y[0] is None  # n = 1: not on the line
    assert list(marks.text) == ["n=1", "n=10", "n=20"]  # n written at every marker
    assert list(marks.marker.symbol) == ["circle-open", "circle", "circle"]
    assert line.name == figures.text(BEACON) and '<span style=\\"background' not in fig.to_json()
