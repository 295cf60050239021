"""The trajectory table: columns from the scored frame, filters, search and sort."""

from __future__ import annotations

import pandas as pd
import pytest

from dagmath_viz.analysis.trajectory_table import (
    COLUMNS,
    TableFilter,
    filter_table,
    readable_default,
    search_text,
    sort_table,
    trajectory_table,
)
from dagmath_viz.schema import Step, Trajectory
from dagmath_viz.score.record import records_frame


def _rec(model, dataset, pid, sid, cls, n, dead, closeness, correct, difficulty=None, **kw):
    return {
        "model": model, "dataset": dataset, "problem_id": pid, "sample_id": sid, "class": cls,
        "n_nodes": n, "dead_ends": dead, "closeness_rate": closeness, "final_correct": correct,
        "difficulty": difficulty, **kw,
    }  # fmt: skip


@pytest.fixture
def scored() -> pd.DataFrame:
    return records_frame(
        [
            _rec("m1", "d", "2", 0, "perfect", 5, [], 1.0, True, 1.0),
            _rec("m1", "d", "10", 0, "incorrect", 9, [3, 4], 7 / 9, False, 3.0),
            _rec("m2", "d", "2", 1, "imperfect", 7, [2], 6 / 7, True),
            _rec("m2", "e", "p1", 0, "unscored", 4, [], 1.0, None, 2.0,
                 predicted_answer="42", source="x/y.json:item 1"),
        ]
    )  # fmt: skip


def test_columns_and_values(scored):
    t = trajectory_table(scored)
    assert list(t.columns) == COLUMNS
    assert list(t.index) == [0, 1, 2, 3]  # the corpus row of each
    assert list(t["dead ends"]) == [0, 2, 1, 0]
    assert list(t["correct"]) == ["correct", "wrong", "correct", "unscored"]
    assert list(t["steps"]) == [5, 9, 7, 4]
    assert t["difficulty"].isna().tolist() == [False, False, True, False]


def test_filters_combine(scored):
    t = trajectory_table(scored)
    assert list(filter_table(t, TableFilter(models=("m1",))).index) == [0, 1]
    assert list(filter_table(t, TableFilter(correct=("wrong", "unscored"))).index) == [1, 3]
    assert list(filter_table(t, TableFilter(classes=("imperfect",), datasets=("d",))).index) == [2]
    assert list(filter_table(t, TableFilter(min_steps=5, max_steps=7)).index) == [0, 2]
    assert list(filter_table(t, TableFilter(min_dead_ends=1)).index) == [1, 2]
    assert list(filter_table(t, TableFilter(problems=("2",))).index) == [0, 2]
    assert filter_table(t, TableFilter(models=("nobody",))).empty


def test_search_looks_in_steps_thinking_and_problem_of_loaded_trajectories(scored):
    traj = Trajectory(
        "m1", "d", "2", 0,
        steps=(Step(1, (), "Let x be Seven", "because APPLES"), Step(2, (1,), "so 7")),
        problem_text="How many pears?",
    )  # fmt: skip
    trajectories = [traj, None, None, None]
    text, what = search_text(trajectories, scored)
    t = trajectory_table(scored)
    for query in ("seven", "apples", "PEARS", "x be"):
        assert list(filter_table(t, TableFilter(query=query), text).index) == [0], query
    # the scored record (row 3) is searched in its answers and source only
    assert list(filter_table(t, TableFilter(query="42"), text).index) == [3]
    assert list(filter_table(t, TableFilter(query="y.json"), text).index) == [3]
    assert text[3] == "42\nx/y.json:item 1"  # what the record holds, one a line
    # a missing answer or source is not searched as text ("nan", "none")
    assert filter_table(t, TableFilter(query="nan"), text).empty
    assert filter_table(t, TableFilter(query="none"), text).empty
    assert "scored records" in what and "1 trajectories" in what
    # a regex character is matched literally
    assert filter_table(t, TableFilter(query="x.*"), text).empty


def test_search_says_what_is_searched():
    recs = records_frame([_rec("m", "d", "1", 0, "perfect", 1, [], 1.0, True)])
    assert "steps are not held in memory" in search_text([None], recs)[1]
    traj = Trajectory("m", "d", "1", 0, steps=(Step(1, (), "a"),))
    assert search_text([traj], recs)[1].startswith("Search looks in the problem text")


def test_sort_by_steps_and_natural_problem_order(scored):
    t = trajectory_table(scored)
    assert list(sort_table(t, "steps", descending=True).index) == [1, 2, 0, 3]
    # problems "2" < "10" < "p1" (numbers by value); ties by model then sample
    assert list(sort_table(t, "problem")["problem"]) == ["2", "2", "10", "p1"]
    # a missing difficulty goes last in either direction
    assert sort_table(t, "difficulty").index[-1] == 2
    assert sort_table(t, "difficulty", descending=True).index[-1] == 2
    with pytest.raises(ValueError, match="cannot sort by"):
        sort_table(t, "nope")


def test_hundred_thousand_rows_filter_vectorised():
    """Not a timing test: the filters work on a large frame and return the exact count."""
    n = 100_000
    recs = records_frame(
        [
            _rec(f"m{i % 3}", "d", str(i % 500), i, "perfect" if i % 4 else "incorrect",
                 3 + i % 300, [], 1.0, bool(i % 4))
            for i in range(n)
        ]
    )  # fmt: skip
    t = trajectory_table(recs)
    kept = filter_table(t, TableFilter(models=("m0",), classes=("incorrect",), min_steps=250))
    # i % 3 == 0 and i % 4 == 0 -> i % 12 == 0; 3 + i % 300 >= 250 -> i % 300 >= 247
    expected = sum(1 for i in range(0, n, 12) if i % 300 >= 247)
    assert len(kept) == expected


def test_readable_default_lands_on_a_short_imperfect_trajectory():
    sizes = [(128, 5, "imperfect"), (9, 0, "perfect"), (30, 2, "imperfect"), (12, 1, "incorrect")]
    assert readable_default(sizes) == 2
    assert readable_default([(128, 5, "imperfect"), (9, 0, "perfect")]) == 1
    assert readable_default([(128, 5, "imperfect"), (300, 0, "perfect")]) == 0
    assert readable_default([]) is None
