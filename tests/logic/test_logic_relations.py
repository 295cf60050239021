"""Comparisons across two entities and "N times as many" (MathGAP v1's comp templates).

The sentences are the authors' templates (rycolab/reasoning-efficiency,
mathgap/data/templates/v1/comp.json, and the cross-entity statements of
experiments/proof_search/data/templates/extended/comp.json) with names, entities and numbers
filled in here; every answer is worked out by hand in a comment.
"""

from __future__ import annotations

import pytest

from dagmath_viz.logic.modelproofs import score_proof_record, solve_text, solve_text_record
from dagmath_viz.logic.program import (
    Comp,
    Rel,
    atom_from_dict,
    atom_to_dict,
    relation,
)
from dagmath_viz.logic.rules import closure
from dagmath_viz.logic.text import parse_problem

CASES = [
    # times, is_about_subj, not same_eau: 4 × 3 = 12
    ("Bo has 4 pears. Ann has 3 times as many apples as Bo has pears.", "apples", "Ann", 12),
    # times, same_eau: 4 × 3 = 12
    ("Bo has 4 pears. Ann has 3 times as many pears as Bo.", "pears", "Ann", 12),
    # times, not about subj: "[obj] has 1/[q] as many": 12 / 3 = 4
    ("Ann has 12 apples. Bo has 1/3 as many pears as Ann has apples.", "pears", "Bo", 4),
    # "... divided by [q] equals ...": 12 / 4 = 3
    (
        "Ann has 12 apples. The number of apples Ann has divided by 4 equals the number of"
        " pears Bo has.",
        "pears",
        "Bo",
        3,
    ),
    # "If we divide ... by [q], then ... the same number ...": Ann = 2 × 5 = 10
    (
        "Bo has 5 pears. If we divide the number of apples Ann has by 2, then Ann has the same"
        " number of apples as Bo has pears.",
        "apples",
        "Ann",
        10,
    ),
    # extended comp.json across entities: 5 + 3 = 8
    ("Bo has 5 pears. Ann has 3 apples more than Bo has pears.", "apples", "Ann", 8),
    # v1 comp.json across entities: 5 + 3 = 8
    ("Bo has 5 pears. Ann has 3 more apples than Bo has pears.", "apples", "Ann", 8),
    # "[subj] has [q] {subj_ent} less than [obj] has {obj_ent}": 9 - 2 = 7
    ("Ann has 9 apples. Bo has 2 pears less than Ann has apples.", "pears", "Bo", 7),
    # "The number of ... exceeds the number of ... by [q]": 5 + 6 = 11
    (
        "Bo has 5 pears. The number of apples Ann has exceeds the number of pears Bo has by 6.",
        "apples",
        "Ann",
        11,
    ),
    # "If we take away [q] ... then ... as many ... as [obj] has {obj_ent}": 5 + 6 = 11
    (
        "Bo has 5 pears. If we take away 6 apples from Ann, then Ann has as many apples as Bo"
        " has pears.",
        "apples",
        "Ann",
        11,
    ),
    # a chain: 10 / 5 = 2 pears, 2 / 2 = 1 plum
    (
        "Ann has 10 apples. Bo has 1/5 as many pears as Ann has apples. Cy has 1/2 as many"
        " plums as Bo has pears.",
        "plums",
        "Cy",
        1,
    ),
]


@pytest.mark.parametrize(("statements", "entity", "who", "answer"), CASES)
def test_relations_solve(statements, entity, who, answer):
    text = f"{statements} How many {entity} does {who} have?"
    assert solve_text(text).answer == answer


def test_relation_atoms_are_canonical_and_round_trip():
    # "Ann has 2 apples fewer than Bo has pears" is "Bo has 2 pears more than Ann has apples"
    r = relation(("Ann",), "apples", ("Bo",), "pears", "+", -2)
    assert r == Rel(("Bo",), "pears", ("Ann",), "apples", "+", 2)
    # the same entity is a plain comparison
    assert relation(("Ann",), "pears", ("Bo",), "pears", "+", 3) == Comp(
        ("Ann",), ("Bo",), "pears", 3
    )
    t = relation(("Ann",), "apples", ("Bo",), "pears", "*", 3, 2)
    assert atom_from_dict(atom_to_dict(t)) == t
    with pytest.raises(ValueError):
        Rel(("Ann",), "apples", ("Bo",), "pears", "*", 0)


def test_a_fraction_that_is_not_whole_is_a_violation_not_a_crash():
    # 10 apples, "1/3 as many": 10 / 3 is not a whole number of pears
    text = (
        "Ann has 10 apples. Bo has 1/3 as many pears as Ann has apples. "
        "How many pears does Bo have?"
    )
    assert closure(parse_problem(text).program).violations
    out = solve_text_record({"id": "x", "text": text})
    assert out == {"id": "x", "error": "the question has no answer from these statements"}


def test_score_a_proof_with_times_as_many():
    text = (
        "Bo has 4 pears. Cy has 7 plums. Ann has 3 times as many apples as Bo has pears. "
        "How many apples does Ann have?"
    )
    # the shortest proof: Bo's 4 pears, the relation, Ann's 4 × 3 = 12 apples (3 statements)
    proof = (
        "Bo has 4 pears. Ann has 3 times as many apples as Bo has pears. "
        "So Ann has 4 × 3 = 12 apples."
    )
    out = score_proof_record({"id": "t", "text": text, "proof": proof})
    assert out["correct"] and out["efficiency"] == 1.0 and out["exact_match"] is True
    # with the irrelevant plums stated first: 3 of the 4 matched statements are needed
    out = score_proof_record({"id": "t", "text": text, "proof": "Cy has 7 plums. " + proof})
    assert out["efficiency"] == pytest.approx(3 / 4) and out["recall"] == 1.0
