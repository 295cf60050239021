"""Plotly figures: the data they carry and their labels, asserted on the figure object."""

from __future__ import annotations

import pandas as pd
import pytest

from dagmath_viz import figures


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
