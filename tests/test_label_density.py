"""Label density (dagmath_viz.analysis.label_density) and what it does to dead ends."""

from __future__ import annotations

import os

import pytest

from dagmath_viz.analysis.deadends import categorise_dead_ends
from dagmath_viz.analysis.label_density import label_density, label_density_table, opening_run
from dagmath_viz.schema import Step, Trajectory
from tests.test_step_tags import TA


def _require_ta() -> None:
    if not TA.exists():
        reason = f"{TA} not found"
        if os.environ.get("DAGMATH_REQUIRE_SHARED") == "1":
            pytest.fail(f"{reason} and DAGMATH_REQUIRE_SHARED=1", pytrace=False)
        pytest.skip(reason)


def _traj(*steps: Step) -> Trajectory:
    return Trajectory("m", "d", "1", 0, tuple(steps))


def test_a_chain_that_cites_the_step_before_is_dense():
    # 5 steps, each cites the one before: 4 edges, 0.8 a step, nothing unlinked, closed
    t = _traj(Step(1), *(Step(i, (i - 1,)) for i in range(2, 6)))
    d = label_density(t)
    assert (d.steps, d.edges, d.unlinked, d.dead_ends) == (5, 4, 0, 0)
    assert d.edges_per_step == pytest.approx(0.8) and not d.sparse


def test_a_sparsely_labelled_chain_is_flagged():
    # The case, in shape: 181 steps with 38 edges. Steps 1-2 state the problem;
    # steps 3..40 each cite the step before (38 edges); steps 41..181 cite nothing.
    steps = [Step(1), Step(2)] + [Step(i, (i - 1,)) for i in range(3, 41)]
    steps += [Step(i) for i in range(41, 182)]
    d = label_density(_traj(*steps))
    assert (d.steps, d.edges) == (181, 38)
    assert d.edges_per_step == pytest.approx(38 / 181)  # 0.21 < 0.5
    # unlinked: the 141 parentless steps after step 3 (the first to cite one)
    assert d.unlinked == 141 and d.unlinked_share == pytest.approx(141 / 181)
    # dead ends: steps 1 (2 is cited by 3), 40 and 41..180 (181 is the final step)
    assert d.dead_ends == 1 + 1 + 140
    assert d.sparse


def test_unlinked_counts_only_after_the_opening():
    t = _traj(Step(1), Step(2), Step(3, (1, 2)), Step(4), Step(5, (3, 4)))
    assert opening_run(t) == 2
    d = label_density(t)
    # step 4 has no parents and comes after step 3, the first that cites: 1 unlinked of 5
    assert d.unlinked == 1 and d.unlinked_share == pytest.approx(0.2)
    assert not d.sparse  # 4 edges / 5 = 0.8; 20 % is not more than 20 %


def test_empty_and_one_step():
    assert label_density(_traj()).steps == 0 and not label_density(_traj()).sparse
    one = label_density(_traj(Step(1, (), "x")))
    assert (one.steps, one.edges, one.dead_ends, one.sparse) == (1, 0, 0, False)


def test_table_skips_scored_records_without_steps():
    t = _traj(Step(1), Step(2, (1,)))
    table = label_density_table([None, t])
    assert len(table) == 1
    row = table.iloc[0]
    assert (row["steps"], row["edges"], row["edges_per_step"], row["sparse"]) == (2, 1, 0.5, False)


# -- "unused given" only for real givens ----------------------------------------------------


def test_tags_decide_what_a_given_is():
    # tagged steps: only problem_setup states the problem
    t = _traj(
        Step(1, (), "A mother has 9 plates.", tags=("problem_setup",)),
        Step(2, (), "Let me think step by step.", tags=("plan_generation",)),
        Step(3, (), "Wait, is t given?", tags=("uncertainty_management",)),
        Step(4, (), "She has 2 green ones.", tags=("problem_setup",)),
        Step(5, (4,), "So 2.", tags=("final_answer_emission",)),
    )
    assert dict(categorise_dead_ends(t)) == {0: "unused given", 1: "unlinked", 2: "unlinked"}
    # untagged (DAG-MATH): every parentless step is a given (DEFINITIONS.md §1)
    plain = _traj(*(Step(s.step_id, s.parents, s.text) for s in t.steps))
    assert set(dict(categorise_dead_ends(plain)).values()) == {"unused given"}


def test_real_thought_anchors_chain():
    """problem_2189 (incorrect, 60 chunks), read by hand from its chunks_labeled.json:
    parentless chunks 0, 1, 2, 3, 5, 29; the first chunk citing one is 4. Dead ends with no
    parents: 0 (problem_setup), 1 and 2 (plan_generation). 60 parent references."""
    _require_ta()
    from dagmath_viz.formats.discovery import load_paths

    (traj,) = load_paths([TA]).trajectories
    cats = dict(categorise_dead_ends(traj))
    assert [p for p, c in cats.items() if c == "unused given"] == [0]
    assert [p for p, c in cats.items() if c == "unlinked"] == [1, 2]
    d = label_density(traj)
    assert (d.steps, d.edges, d.unlinked) == (60, 60, 2)  # unlinked: chunks 5 and 29
    assert not d.sparse


def test_the_density_figure_escapes_names_and_draws_the_sparse_line():
    from dagmath_viz.draw.figures import label_density_figure

    sparse = [Step(1)] + [Step(i) for i in range(2, 11)]  # 10 steps, no edges: sparse
    dense = [Step(1)] + [Step(i, (i - 1,)) for i in range(2, 11)]  # 9 edges for 10 steps
    table = label_density_table(
        [
            Trajectory("<b>m</b>", "d", "1", 0, tuple(sparse)),
            Trajectory("n", "d", "2", 0, tuple(dense)),
        ]
    )
    assert table["sparse"].tolist() == [True, False]
    fig = label_density_figure(table)
    # two legend entries, whatever the number of models; the model is in the hover, escaped
    assert [t.name for t in fig.data] == ["dense enough", "sparse"]
    hover = [str(v) for t in fig.data for row in t.customdata for v in row]
    assert "&lt;b&gt;m&lt;/b&gt;" in hover and not any("<b>" in v for v in hover)
    assert fig.layout.shapes[0].x0 == 0.5  # the dashed line at MIN_EDGES_PER_STEP
    # the sparse chain: 0 edges a step, 9 dead ends (steps 1..9; 10 is the final step);
    # the dense one: 0.9 edges a step, 0 dead ends
    (sparse_trace,) = [t for t in fig.data if t.name == "sparse"]
    (dense_trace,) = [t for t in fig.data if t.name == "dense enough"]
    assert (list(sparse_trace.x), list(sparse_trace.y)) == ([0.0], [9])
    assert (list(dense_trace.x), list(dense_trace.y)) == ([0.9], [0])
    assert sparse_trace.marker.symbol == "x"
    # the legend sits below the plot (horizontal), so the markers keep the column's width
    assert fig.layout.legend.orientation == "h" and fig.layout.legend.y < 0


def test_dead_end_rows_sort_problem_ids_by_number():
    import pandas as pd

    from dagmath_viz.analysis.deadends import sorted_naturally

    table = pd.DataFrame(
        {"model": ["m"] * 4, "dataset": ["d"] * 4, "problem_id": ["10", "9", "100", "9"],
         "sample_id": [0, 1, 0, 0], "step_id": [3, 2, 1, 12]}
    )  # fmt: skip
    out = sorted_naturally(table)
    assert list(zip(out["problem_id"], out["sample_id"], strict=True)) == [
        ("9", 0), ("9", 1), ("10", 0), ("100", 0)
    ]  # fmt: skip
