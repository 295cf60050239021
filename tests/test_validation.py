"""validation.py: every structural fault of DEFINITIONS §1, and the graph of well-formed edges."""

from __future__ import annotations

import pytest

from dagmath_viz.schema import Step, Trajectory
from dagmath_viz.score.validation import Fault, is_step_id, validate, validate_steps

ANSWER = r"The final answer is $\boxed{1}$."


def steps(*spec: tuple) -> tuple[Step, ...]:
    """Steps from (step_id, parents) pairs; the last one carries the answer text."""
    out = [Step(step_id=sid, parents=tuple(parents), text=f"claim {sid}") for sid, parents in spec]
    if out:
        out[-1] = Step(step_id=out[-1].step_id, parents=out[-1].parents, text=ANSWER)
    return tuple(out)


def trajectory(step_tuple: tuple[Step, ...], load_errors: tuple[Fault, ...] = ()) -> Trajectory:
    return Trajectory(
        model="m",
        dataset="d",
        problem_id="7",
        sample_id=3,
        steps=step_tuple,
        source="run/m/d/problem_7_all_samples.json:item 4",
        load_errors=load_errors,
    )


# --------------------------------------------------------------------------- step ids

STEP_ID_CASES = [
    pytest.param(1, True, id="int"),
    pytest.param(0, True, id="zero"),
    pytest.param(True, False, id="bool"),
    pytest.param(3.0, False, id="float"),
    pytest.param("1", False, id="string"),
    pytest.param(None, False, id="none"),
]


@pytest.mark.parametrize(("value", "expected"), STEP_ID_CASES)
def test_is_step_id(value, expected: bool) -> None:
    assert is_step_id(value) is expected


# --------------------------------------------------------------------------- well-formed

LEGAL_CASES = [
    pytest.param(steps((1, ())), id="single-step"),
    pytest.param(steps((1, ()), (2, ()), (3, (1, 2))), id="two-givens"),
    # ids need not start at 1 nor be consecutive, only unique, integer and cited backwards
    pytest.param(steps((10, ()), (20, (10,)), (35, (10, 20))), id="sparse-ids"),
]


@pytest.mark.parametrize("step_tuple", LEGAL_CASES)
def test_legal_trajectory_has_no_faults(step_tuple: tuple[Step, ...]) -> None:
    result = validate(trajectory(step_tuple))
    assert result.faults == ()
    assert result.legal


def test_graph_keeps_positions_and_distinct_parents() -> None:
    # step 30 cites step 10 twice: one edge, addressed by position
    result = validate_steps(steps((10, ()), (20, (10,)), (30, (10, 10, 20))))
    assert result.graph.ids == (10, 20, 30)
    assert result.graph.parents == ((), (0,), (0, 1))
    assert result.graph.n_edges == 3


# --------------------------------------------------------------------------- faults

# Each case: steps, a fragment every fault message must contain (naming the step), the
# number of well-formed edges left (the faulty ones dropped).
FAULT_CASES = [
    # ids
    pytest.param(
        steps((1, ()), (1, ()), (2, (1,))), ["step 1: duplicate step_id"], 1, id="duplicate-id"
    ),
    pytest.param(
        steps((1, ()), ("b", (1,)), (3, (1,))), ["step_id 'b' is not an integer"], 2, id="string-id"
    ),
    pytest.param(
        steps((1, ()), (2.0, (1,)), (3, (1,))), ["step_id 2.0 is not an integer"], 2, id="float-id"
    ),
    # references
    pytest.param(
        steps((1, ()), (2, (9,))), ["step 2: parent 9 does not exist"], 0, id="unknown-parent"
    ),
    pytest.param(
        steps((1, ()), (2, (1, "1"))),
        ["step 2: parent '1' is not an integer"],
        1,
        id="string-parent",
    ),
    pytest.param(steps((1, ()), (2, (2,))), ["step 2: cites itself"], 0, id="self-reference"),
    # step 2 uses step 3, which comes later (no cycle: 3 does not use 2)
    pytest.param(
        steps((1, ()), (2, (3,)), (3, (1,))),
        ["step 2: parent 3 is not an earlier step"],
        1,
        id="forward-reference",
    ),
    # 2 uses 3 and 3 uses 2
    pytest.param(
        steps((1, ()), (2, (1, 3)), (3, (2,))),
        ["step 2: parent 3 is not an earlier step", "cycle: "],
        2,
        id="cycle",
    ),
]


@pytest.mark.parametrize(("step_tuple", "fragments", "n_edges"), FAULT_CASES)
def test_structural_fault(step_tuple: tuple[Step, ...], fragments: list[str], n_edges: int) -> None:
    result = validate(trajectory(step_tuple))
    assert not result.legal
    for fragment in fragments:
        assert any(fragment in str(f) for f in result.faults), (fragment, result.faults)
    assert result.graph.n_edges == n_edges


def test_cycle_names_its_steps() -> None:
    result = validate_steps(steps((1, ()), (2, (1, 3)), (3, (2,))))
    (cycle,) = [f for f in result.faults if f.kind == "cycle"]
    assert str(cycle) == "cycle: 2 -> 3 -> 2"
    assert sorted(cycle.positions) == [1, 2]  # steps 2 and 3, at positions 1 and 2


def test_no_steps() -> None:
    result = validate(trajectory(()))
    assert result.faults == (Fault(None, "no_steps", "no steps"),)
    assert result.graph.n_nodes == 0


@pytest.mark.parametrize("text", ["", "   \n"], ids=["empty", "blank"])
def test_no_final_answer(text: str) -> None:
    step_tuple = (Step(1, (), "a = 1"), Step(2, (1,), text))
    result = validate(trajectory(step_tuple))
    assert result.faults == (Fault(2, "no_answer", "step 2: final step has no answer text", (1,)),)
    # the edge itself is fine and kept
    assert result.graph.n_edges == 1


def test_load_errors_make_a_trajectory_illegal() -> None:
    fault = Fault(1, "record", "step 1: field 'text' is int", (0,))
    result = validate(trajectory(steps((1, ())), load_errors=(fault,)))
    assert result.faults == (fault,)
    assert not result.legal


def test_every_fault_is_reported_not_just_the_first() -> None:
    # a duplicate id and an unknown parent in one trajectory
    result = validate(trajectory(steps((1, ()), (1, ()), (2, (5,)))))
    assert [(f.step_id, f.kind, f.positions) for f in result.faults] == [
        (1, "duplicate_id", (0, 1)),  # both steps named 1
        (2, "missing_parent", (2,)),
    ]


def test_forward_reference_alone_is_not_a_cycle() -> None:
    result = validate_steps(steps((1, ()), (2, (3,)), (3, (1,))))
    assert [f.kind for f in result.faults] == ["forward_reference"]
