"""Dead-end categories, on hand-built trajectories whose categories are worked out by hand."""

from __future__ import annotations

from dagmath_viz.analysis.deadends import (
    categorise_dead_ends,
    dead_end_category_counts,
    dead_end_table,
)
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
    counts = dead_end_category_counts(table).set_index("model")
    assert counts.loc["m", "total"] == 4
    assert counts.loc["n", "unused given"] == 1
    assert counts.loc["n", "commentary"] == 0


def test_restatement_by_numbers_of_the_cited_steps():
    # 1 given "Maya sells 30 muffins", 2 given "4 trays of 12", 3 <- 1 "So 30 muffins change
    # hands" (the numbers of its one cited step: a restatement), 4 <- 1,2 "30 and 4 and 12"
    # (exactly the numbers of both cited steps: a restatement), 5 <- 2 "48 muffins in total"
    # (a new number: derived, so commentary), 6 <- 2 "It might be simpler in trays" (no
    # number: commentary), 7 <- 1,2 final.
    traj = _traj(
        [[], [], [1], [1, 2], [2], [2], [1, 2]],
        {
            1: "Maya sells 30 muffins.",
            2: "There are 4 trays of 12.",
            3: "So 30 muffins change hands.",
            4: "We have 30 sold, 4 trays, 12 each.",
            5: "She bakes $4 \\times 12 = 48$ muffins.",
            6: "It might be simpler in trays.",
            7: "The answer is $\\boxed{18}$.",
        },
    )
    got = [(traj.steps[pos].step_id, cat) for pos, cat in categorise_dead_ends(traj)]
    assert got == [(3, "restatement"), (4, "restatement"), (5, "commentary"), (6, "commentary")]


def test_restatement_of_an_earlier_uncited_text():
    # 3 <- 1 says "x = 1" first; 4 <- 2 says it again in other spacing and math delimiters; 3
    # is cited by the final step, 4 is not: 4 is the restatement, whatever it cites.
    traj = _traj([[], [], [1], [2], [3]], {1: "a", 2: "b", 3: "x = 1", 4: "$x=1$."})
    assert categorise_dead_ends(traj) == [(3, "restatement")]


def test_abandoned_branch_through_a_long_side_chain():
    # 1 given; 2..5 a chain off 1 that nothing on the answer's path uses; 6 <- 1 final. Only
    # 5 is a dead end, and its chain (2, 3, 4) is off the path: an abandoned branch.
    traj = _traj([[], [1], [2], [3], [4], [1]])
    assert [(traj.steps[p].step_id, c) for p, c in categorise_dead_ends(traj)] == [
        (5, "abandoned branch")
    ]


def _star(n: int) -> Trajectory:
    """The red team's reproduction: one given, and n - 1 steps that all cite step 1."""
    steps = [Step(1, (), "The given.")]
    steps += [Step(i, (1,), f"Step {i} notes $y_{{{i}}}$.") for i in range(2, n + 1)]
    return Trajectory("m", "d", "1", 0, tuple(steps))


def test_memory_is_linear_in_the_steps():
    """12,000 steps all citing step 1 took 3.55 GB before; the peak must stay small and grow
    with the steps, not their square (4x the steps may cost at most ~4x, never 16x)."""
    import tracemalloc

    peaks = []
    for n in (3_000, 12_000):
        traj = _star(n)
        tracemalloc.start()
        got = categorise_dead_ends(traj)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert len(got) == n - 2  # every step but the given and the final one
        assert {c for _, c in got} == {"commentary"}
    assert peaks[1] < 40e6  # bytes; a quadratic pass needs gigabytes here
    assert peaks[1] < 6 * peaks[0]


def test_step_cap_leaves_long_trajectories_out_and_counts_them():
    table = dead_end_table([_star(50), EXAMPLE], max_steps=20)
    assert table.attrs["too_long"] == 1
    assert len(table) == 4  # EXAMPLE's four dead ends only
