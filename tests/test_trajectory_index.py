"""The Trajectory page's selector lists and walking order, built once (issue 17, item 5)."""

from __future__ import annotations

import pandas as pd

from dagmath_viz.analysis.trajectory_table import trajectory_index


def _frame() -> pd.DataFrame:
    rows = [  # model, dataset, problem_id, sample_id, class, n_nodes, dead_ends
        ("b", "d1", "10", 0, "perfect", 12, []),
        ("a", "d2", "2", 1, "imperfect", 20, [3]),
        ("a", "d1", "10", 0, "imperfect", 50, [4]),
        ("a", "d1", "2", 1, "perfect", 9, []),
        ("a", "d1", "2", 0, "imperfect", 30, [5]),
        ("a", "d1", "p1", 0, "incorrect", 15, []),
    ]
    cols = ["model", "dataset", "problem_id", "sample_id", "class", "n_nodes", "dead_ends"]
    return pd.DataFrame(rows, columns=cols)


def test_order_is_model_dataset_natural_problem_sample_with_corpus_rows():
    index = trajectory_index(_frame())
    assert index.models == ["a", "b"]
    assert index.datasets == {"a": ["d1", "d2"], "b": ["d1"]}
    assert index.classes == {"perfect", "imperfect", "incorrect"}
    everything = ["perfect", "imperfect", "incorrect"]
    # problem 2 before 10 (natural order), digits before letters, samples ascending
    assert index.order("a", "d1", everything) == (
        [("2", 0), ("2", 1), ("10", 0), ("p1", 0)],
        [4, 3, 2, 5],
    )
    assert index.order("a", "d1", ["perfect"]) == ([("2", 1)], [3])
    assert index.order("b", "d1", everything) == ([("10", 0)], [0])
    assert index.order("b", "d2", everything) == ([], [])


def test_landing_is_the_first_readable_imperfect_trajectory_in_that_order():
    # walking a/d1 first: row 4 (problem 2, sample 0) is imperfect, 30 steps, one dead end
    assert trajectory_index(_frame()).landing == ("a", "d1", "2", 0)
    # without dead ends nothing qualifies as imperfect-with-a-dead-end: the first of 8-40
    # steps in the order is then a/d1 problem 2 sample 0 again (30 steps), so make it 50
    frame = _frame().assign(dead_ends=[[]] * 6)
    frame.loc[4, "n_nodes"] = 50
    assert trajectory_index(frame).landing == ("a", "d1", "2", 1)  # row 3: 9 steps
