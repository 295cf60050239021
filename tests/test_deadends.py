"""Dead-end categories, on hand-built trajectories whose categories are worked out by hand."""

from __future__ import annotations

from dagmath_viz.deadends import categorise_dead_ends, dead_end_counts, dead_end_table
from dagmath_viz.schema import Step, Trajectory


def _traj(parents: list[list[int]], texts: dict[int, str] | None = None, model="m") -> Trajectory:
    texts = texts or {}
    steps = tuple(
        Step(i + 1, tuple(p), texts.get(i + 1, f"statement {i + 1}")) for i, p in enumerate(parents)
    )
    return Trajectory(model, "d", "1", 0, steps)


# Steps: 1 given (unused), 2 given, 3 <- 2, 4 <- 2 restating 3, 5 <- 2, 6 <- 5 (side chain
# 5 -> 6 off the answer's path), 7 <- 3 (a derived leaf on the main path), 8 <- 3 final.
EXAMPLE = _traj(
    [[], [], [2], [2], [2], [5], [3], [3]],
    {3: "x = 1", 4: "$x=1$."},
)


def test_each_category_once():
    got = [(EXAMPLE.steps[pos].step_id, cat) for pos, cat in categorise_dead_ends(EXAMPLE)]
    assert got == [
        (1, "unused given"),
        (4, "restatement"),
        (6, "abandoned branch"),
        (7, "commentary"),
    ]


def test_closed_trajectory_has_no_dead_ends():
    assert categorise_dead_ends(_traj([[], [1], [2]])) == []


def test_empty_trajectory():
    assert categorise_dead_ends(_traj([])) == []


def test_table_and_counts():
    table = dead_end_table([EXAMPLE, _traj([[], [], [1]], model="n"), None])
    assert len(table) == 5  # 4 in EXAMPLE, step 2 of the second one (an unused given)
    counts = dead_end_counts(table).set_index("model")
    assert counts.loc["m", "total"] == 4
    assert counts.loc["n", "unused given"] == 1
    assert counts.loc["n", "commentary"] == 0
