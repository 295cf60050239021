"""Terms, atoms and their canonical forms; serialisation; program properties."""

from __future__ import annotations

import pytest

from dagmath_viz.logic import (
    Comp,
    CompEq,
    Cont,
    Program,
    ProgramError,
    Query,
    Rate,
    Transfer,
    agent,
    atom_from_dict,
    atom_to_dict,
    comparison,
)
from dagmath_viz.logic.program import atom_key, entities_of, names_of, shift_time

A, B, C, D = ("Ann",), ("Bob",), ("Cid",), ("Dee",)


def test_agent_is_a_sorted_set_of_names():
    assert agent("Sam", "Ryan", "Sam") == ("Ryan", "Sam")
    with pytest.raises(ProgramError):
        agent()
    with pytest.raises(ProgramError):
        agent("")


@pytest.mark.parametrize(
    ("b", "a", "d", "expected"),
    [
        # b has d more than a  ->  (more, less, diff)
        (B, A, 3, (B, A, 3)),
        (B, A, -3, (A, B, 3)),  # "b has 3 fewer" is "a has 3 more"
        (B, A, 0, (A, B, 0)),  # "as many as": names sorted
        (A, B, 0, (A, B, 0)),
    ],
)
def test_comparison_is_canonical(b, a, d, expected):
    k = comparison(b, a, "cats", d)
    assert (k.more, k.less, k.diff) == expected
    assert k.value(b) == d and k.value(a) == -d


def test_non_canonical_comp_is_refused():
    with pytest.raises(ValueError):
        Comp(A, B, "cats", -1)
    with pytest.raises(ValueError):
        Comp(B, A, "cats", 0)


def test_compeq_spellings_are_one_atom():
    # A - B = C - D  <=>  C - D = A - B  <=>  B - A = D - C  <=>  D - C = B - A
    spellings = [(A, B, C, D), (C, D, A, B), (B, A, D, C), (D, C, B, A)]
    atoms = {CompEq.of(*s, "cats") for s in spellings}
    assert len(atoms) == 1
    # a different equation is a different atom
    assert CompEq.of(A, B, D, C, "cats") not in atoms


ATOMS = [
    Cont(("Ann", "Bob"), "cats", 7, 2),
    comparison(A, B, "cats", 4, 1),
    Transfer(A, B, "cats", 2, 0),
    Rate(A, "apples", "boxes", 6),
    CompEq.of(A, B, C, D, "cats", 3),
]


@pytest.mark.parametrize("atom", ATOMS, ids=lambda x: x.pred)
def test_atom_dict_round_trip(atom):
    assert atom_from_dict(atom_to_dict(atom)) == atom


@pytest.mark.parametrize(
    "bad",
    [
        {"pred": "owns", "agent": ["Ann"]},
        {"pred": "cont", "agent": [], "entity": "cats", "quantity": 1, "time": 0},
        {"pred": "cont", "agent": ["Ann"], "entity": "cats", "quantity": -1, "time": 0},
        {"pred": "cont", "agent": ["Ann"], "entity": "cats", "quantity": True, "time": 0},
        {"pred": "cont", "agent": ["Ann"], "entity": "", "quantity": 1, "time": 0},
        {"pred": "rate", "agent": ["Ann"], "entity": "apples", "container": "boxes"},
        "cont(Ann, cats, 1)",
    ],
)
def test_malformed_atoms_raise(bad):
    with pytest.raises(ProgramError):
        atom_from_dict(bad)


def test_names_and_entities():
    assert names_of(CompEq.of(A, B, C, D, "cats")) == {"Ann", "Bob", "Cid", "Dee"}
    assert names_of(Transfer(A, B, "cats", 1)) == {"Ann", "Bob"}
    assert entities_of(Rate(A, "apples", "boxes", 2)) == {"apples", "boxes"}


def test_shift_time_leaves_rates_alone():
    assert shift_time(Cont(A, "cats", 1, 0), 2) == Cont(A, "cats", 1, 2)
    assert shift_time(Rate(A, "apples", "boxes", 2), 2) == Rate(A, "apples", "boxes", 2)


def test_program_horizon_and_groups():
    p = Program(
        (Cont(A, "cats", 5, 0), Transfer(A, B, "cats", 1, 1), Cont(("Ann", "Bob"), "cats", 9, 0)),
        Query(("Bob", "Cid"), "cats", 0),
    )
    assert p.horizon == 2  # the transfer at time 1 takes effect at time 2
    assert p.groups == {("Ann", "Bob"), ("Bob", "Cid")}


def test_atom_key_orders_predicates_then_fields():
    ordered = sorted(ATOMS[::-1], key=atom_key)
    assert [x.pred for x in ordered] == ["cont", "comp", "transfer", "rate", "compeq"]
