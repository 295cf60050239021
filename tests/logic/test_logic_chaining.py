"""Forward chaining: the order each agenda policy proves theorems in, and completeness."""

from __future__ import annotations

import pytest

from dagmath_viz.logic import POLICIES, Cont, Program, Query, comparison, forward_chain
from dagmath_viz.logic.chaining import overlap_score

RYAN, ELI, SAM = ("Ryan",), ("Eli",), ("Sam",)
R5 = Cont(RYAN, "cats", 5)
K = comparison(ELI, RYAN, "cats", 3)
S4 = Cont(SAM, "cats", 4)
E8 = Cont(ELI, "cats", 8)


# Worked by hand on [Ryan 5, Eli = Ryan + 3, Sam 4], query Eli:
# - bfs pops the three axioms first; Ryan then the comparison give Eli 8 (queued first),
#   Sam with Ryan gives comp(Ryan, Sam, 1) (queued second); Eli 8 pops next: the goal.
# - dfs pops Ryan (the first sentence), then the comparison, whose conclusion Eli 8 is on
#   top of the stack: it never touches Sam.
# - overlap scores Ryan 1 (cats), the comparison 2 (Eli, cats), Sam 1: the comparison pops
#   first (nothing to derive), then Ryan (pushed before Sam), which yields Eli 8 (score 2).
@pytest.mark.parametrize(
    ("policy", "order"),
    [
        ("bfs", [R5, K, S4, E8]),
        ("dfs", [R5, K, E8]),
        ("overlap", [K, R5, E8]),
    ],
)
def test_proof_order_by_policy(eli_program, policy, order):
    result = forward_chain(eli_program, policy)
    assert list(result.order) == order
    assert result.goal == E8
    assert result.edges[-1].rule == "1a"
    assert all(e is None for x, e in zip(result.order, result.edges, strict=True) if x != E8)


def test_overlap_score_counts_names_and_entity():
    q = Query(ELI, "cats")
    assert overlap_score(K, q) == 2
    assert overlap_score(R5, q) == 1
    assert overlap_score(Cont(SAM, "dogs", 1), q) == 0


def test_unknown_policy_is_refused(eli_program):
    with pytest.raises(ValueError, match="unknown policy"):
        forward_chain(eli_program, "random")


def test_unprovable_goal_ends_with_an_empty_agenda():
    result = forward_chain(Program((R5,), Query(ELI, "cats")), "bfs")
    assert result.goal is None
    assert result.order == (R5,)


@pytest.mark.parametrize("policy", POLICIES)
def test_every_policy_proves_every_generated_goal(mixed_problems, policy):
    for p in mixed_problems:
        result = forward_chain(p.program, policy)
        assert result.goal == p.proof.goal, (p.problem_id, p.irrelevant, p.overlap)
        assert result.goal.quantity == p.answer
        # premises are always proved before their conclusion
        index = {x: i for i, x in enumerate(result.order)}
        for i, e in enumerate(result.edges):
            assert e is None or all(index[t] < i for t in e.tail)
