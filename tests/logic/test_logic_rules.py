"""The inference rules (1a)-(6) on hand-built programs, and numerical consistency."""

from __future__ import annotations

import pytest

from dagmath_viz.logic import (
    CompEq,
    Cont,
    Program,
    Query,
    Rate,
    Transfer,
    check_consistency,
    closure,
    comparison,
)

A, B, C, D = ("Ann",), ("Bob",), ("Cid",), ("Dee",)


def derived(axioms, query=None):
    """rule -> set of heads derived by it."""
    out: dict[str, set] = {}
    for e in closure(Program(tuple(axioms), query or Query(A, "cats"))).hyperedges:
        out.setdefault(e.rule, set()).add(e.head)
    return out


# --- comparison: elimination both ways, introduction --------------------------------------


def test_1a_more_side_from_less_side():
    got = derived([Cont(A, "cats", 5), comparison(B, A, "cats", 3)])
    assert Cont(B, "cats", 8) in got["1a"]  # 5 + 3


def test_1b_less_side_from_more_side():
    got = derived([Cont(B, "cats", 8), comparison(B, A, "cats", 3)])
    assert Cont(A, "cats", 5) in got["1b"]  # 8 - 3


def test_1c_introduces_the_difference():
    got = derived([Cont(A, "cats", 5), Cont(B, "cats", 8)])
    assert got["1c"] == {comparison(B, A, "cats", 3)}


def test_1c_needs_disjoint_agents_and_same_entity():
    got = derived([Cont(A, "cats", 5), Cont(("Ann", "Bob"), "cats", 8), Cont(B, "dogs", 1)])
    assert "1c" not in got


# --- transfer and frame -------------------------------------------------------------------


def test_transfer_giver_and_receiver_and_frame():
    axioms = [
        Cont(A, "cats", 10, 0),
        Cont(B, "cats", 2, 0),
        Cont(C, "cats", 4, 0),
        Transfer(A, B, "cats", 3, 0),
    ]
    got = derived(axioms)
    assert Cont(A, "cats", 7, 1) in got["2a"]  # 10 - 3
    assert Cont(B, "cats", 5, 1) in got["2b"]  # 2 + 3
    # Cid takes no part in the transfer, so the frame rule carries his 4 cats to time 1;
    # Ann and Bob do, so nothing carries theirs.
    assert got["6"] == {Cont(C, "cats", 4, 1)}


def test_frame_stops_at_the_horizon():
    got = derived([Cont(A, "cats", 1, 0)])  # horizon 0: no time step at all
    assert "6" not in got


# --- union, rate --------------------------------------------------------------------------


def test_union_builds_only_mentioned_groups():
    axioms = [Cont(A, "cats", 2), Cont(B, "cats", 3), Cont(C, "cats", 4)]
    got = derived(axioms, Query(("Ann", "Bob"), "cats"))
    assert got["3"] == {Cont(("Ann", "Bob"), "cats", 5)}  # not {Ann, Cid}, not all three


def test_union_of_three_parts():
    axioms = [Cont(A, "cats", 2), Cont(B, "cats", 3), Cont(C, "cats", 4)]
    got = derived(axioms, Query(("Ann", "Bob", "Cid"), "cats"))
    assert got["3"] == {Cont(("Ann", "Bob", "Cid"), "cats", 9)}


def test_rate_multiplies_containers():
    got = derived([Cont(A, "boxes", 3), Rate(A, "apples", "boxes", 4)])
    assert got["4"] == {Cont(A, "apples", 12)}


# --- comparison of differences ------------------------------------------------------------


def test_5a_both_directions():
    # Ann - Bob = Cid - Dee, and Cid has 2 more than Dee, so Ann - Bob = 2.
    eq = CompEq.of(A, B, C, D, "cats")
    k = comparison(C, D, "cats", 2)
    assert Cont(A, "cats", 7) in derived([eq, k, Cont(B, "cats", 5)])["5a"]  # 5 + 2
    assert Cont(B, "cats", 5) in derived([eq, k, Cont(A, "cats", 7)])["5a"]  # 7 - 2


def test_5b_introduces_compeq_from_equal_differences():
    got = derived([comparison(A, B, "cats", 3), comparison(C, D, "cats", 3)])
    assert got["5b"] == {CompEq.of(A, B, C, D, "cats")}


def test_every_hyperedge_is_found_once():
    axioms = [Cont(A, "cats", 5), Cont(B, "cats", 8), Cont(C, "cats", 11)]
    edges = closure(Program(tuple(axioms), Query(A, "cats"))).hyperedges
    assert len(edges) == len(set(edges))
    # 3 conts give 3 comparisons (1c): 8-5 = 3, 11-5 = 6, 11-8 = 3; the two 3s give one
    # compeq (5b): Bob - Ann = Cid - Bob
    assert sum(e.rule == "1c" for e in edges) == 3
    assert [e.head for e in edges if e.rule == "5b"] == [CompEq.of(B, A, C, B, "cats")]


# --- consistency --------------------------------------------------------------------------


def test_consistent_program_has_no_violation():
    assert check_consistency(Program((Cont(A, "cats", 5),), Query(A, "cats"))) == ()


@pytest.mark.parametrize(
    "axioms",
    [
        # Bob has 5 + 3 = 8 by the comparison, but 9 is given
        [Cont(A, "cats", 5), comparison(B, A, "cats", 3), Cont(B, "cats", 9)],
        # two differences for one pair
        [comparison(B, A, "cats", 3), comparison(A, B, "cats", 1)],
        # Ann cannot give away 5 of her 2 cats
        [Cont(A, "cats", 2), Transfer(A, B, "cats", 5, 0)],
        # a group that is not the sum of its parts
        [Cont(A, "cats", 2), Cont(B, "cats", 3), Cont(("Ann", "Bob"), "cats", 6)],
    ],
    ids=["cont-vs-comp", "two-diffs", "negative", "bad-union"],
)
def test_inconsistent_programs_are_reported(axioms):
    assert check_consistency(Program(tuple(axioms), Query(A, "cats")))


def test_generated_programs_are_consistent(mixed_problems):
    for p in mixed_problems:
        assert check_consistency(p.program) == (), p.problem_id
