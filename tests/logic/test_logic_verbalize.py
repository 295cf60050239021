"""Templates, and parsing a natural-language proof back into theorems."""

from __future__ import annotations

import pytest

from dagmath_viz.logic import (
    CompEq,
    Cont,
    Query,
    Rate,
    Transfer,
    closure,
    comparison,
    parse_proof,
    parse_question,
    parse_sentence,
    verbalize,
    verbalize_question,
)
from dagmath_viz.logic.verbalize import MAX_SENTENCE, N_TEMPLATES

RYAN, ELE, SAM = ("Ryan",), ("Eleanor",), ("Sam",)
GROUP = ("Ryan", "Sam")


def test_the_issue_example_reads_as_a_word_problem():
    text = " ".join(
        [
            verbalize(Cont(RYAN, "cats", 5)),
            verbalize(comparison(ELE, RYAN, "cats", 3)),
            verbalize_question(Query(ELE, "cats")),
        ]
    )
    assert text == (
        "Ryan has 5 cats. Eleanor has 3 more cats than Ryan. How many cats does Eleanor have?"
    )


@pytest.mark.parametrize(
    ("atom", "variant", "sentence"),
    [
        (Cont(RYAN, "cats", 5), 1, "The number of cats Ryan has is 5."),
        (Cont(GROUP, "cats", 9, 2), 0, "After round 2, Ryan and Sam together have 9 cats."),
        (comparison(ELE, RYAN, "cats", 3), 1, "Ryan has 3 fewer cats than Eleanor."),
        (comparison(ELE, RYAN, "cats", 0), 0, "Eleanor has as many cats as Ryan."),
        (Transfer(RYAN, SAM, "cats", 2, 0), 0, "In round 1, Ryan gives 2 cats to Sam."),
        (Transfer(RYAN, SAM, "cats", 2, 1), 1, "In round 2, Sam receives 2 cats from Ryan."),
        (Rate(RYAN, "apples", "boxes", 4), 0, "Each of Ryan's boxes holds 4 apples."),
        (
            CompEq.of(ELE, RYAN, SAM, ("Zoe",), "cats"),
            1,
            "Eleanor's cats minus Ryan's cats equals Sam's cats minus Zoe's cats.",
        ),
    ],
)
def test_templates(atom, variant, sentence):
    assert verbalize(atom, variant) == sentence
    assert parse_sentence(sentence) == atom


def test_every_sentence_ends_with_a_period(mixed_problems):
    for p in mixed_problems:
        assert all(s.endswith(".") for s in p.sentences)
        assert p.question.endswith("?")


def test_every_theorem_round_trips_through_every_template(mixed_problems):
    n = 0
    for p in mixed_problems:
        for x in closure(p.program).theorems:
            for v in range(N_TEMPLATES):
                assert parse_sentence(verbalize(x, v)) == x, (str(x), verbalize(x, v))
                n += 1
    assert n > 1000


def test_questions_round_trip(mixed_problems):
    for p in mixed_problems:
        assert parse_question(p.question) == p.program.query
    assert parse_question("How many cats do Ryan and Sam together have after round 3?") == Query(
        GROUP, "cats", 3
    )
    assert parse_question("What?") is None


def test_parse_ignores_duplicates_and_counts_unmatched():
    text = (
        "Ryan has 5 cats. Eleanor has 3 more cats than Ryan.\n"
        "So Eleanor has 8 cats. Ryan has 5 cats. Eleanor has 8 cats.  The final answer is 8."
    )
    result = parse_proof(text)
    assert result.theorems == (
        Cont(RYAN, "cats", 5),
        comparison(ELE, RYAN, "cats", 3),
        Cont(ELE, "cats", 8),
    )
    assert result.sentences[2] == "Eleanor has 8 cats."
    assert result.unmatched == ("So Eleanor has 8 cats.", "The final answer is 8.")
    assert result.duplicates == 1


def test_parse_empty_and_garbage():
    assert parse_proof("").theorems == ()
    assert parse_proof("   ").unmatched == ()
    assert parse_sentence("In round 0, Ryan gives 2 cats to Sam.") is None
    assert parse_sentence("Ryan " + "and Ryan " * MAX_SENTENCE + "has 5 cats.") is None


def test_variant_must_exist():
    with pytest.raises(ValueError):
        verbalize(Cont(RYAN, "cats", 5), N_TEMPLATES)
