"""The Efficiency page's "One problem" picker lists every problem record apart: the four
overlap variants ``dagmath gsm generate --paired`` writes under one problem id, and a
control, each with its own proofs (they once collapsed into the id's first record)."""

from __future__ import annotations

import json

import pytest

from dagmath_viz.logic import STRATEGIES, problem_choices, proofs_of
from dagmath_viz.logic.generator import generate_paired
from dagmath_viz.logic.records import problem_to_record, solve_record
from tests.app.helpers import choice, efficiency_with_uploads

OVERLAPS = ("none", "entity", "agent", "both")


@pytest.fixture(scope="module")
def paired() -> tuple[list[dict], list[dict]]:
    """Problem 1 in its four overlap conditions (one id), and problem 2's "none" and
    "both"; every strategy's proof of each, as `gsm generate --paired` and `gsm solve`."""
    problems = [problem_to_record(p) for p in generate_paired(7, 1, "tree").values()]
    problems += [
        problem_to_record(p)
        for o, p in generate_paired(7, 2, "tree").items()
        if o in ("none", "both")
    ]
    proofs = [solve_record(rec, s) for rec in problems for s in STRATEGIES]
    return problems, proofs


def test_every_variant_is_its_own_choice_with_its_own_proofs(paired):
    problems, proofs = paired
    assert [p["problem_id"] for p in problems] == [1, 1, 1, 1, 2, 2]
    choices = problem_choices(problems)
    assert [c.label for c in choices] == [
        *(f"1 · tree / {o}" for o in OVERLAPS),
        "2 · tree / none",
        "2 · tree / both",
    ]
    assert len({c.key for c in choices}) == 6
    for c in choices:
        mine = proofs_of(proofs, c.record)
        # one proof per strategy, each of this variant (gsm solve copied its overlap)
        assert [p["strategy"] for p in mine] == list(STRATEGIES)
        assert {p["overlap"] for p in mine} == {c.record["overlap"]}
        assert {p["problem_text"] for p in mine} == {c.record["problem_text"]}
    # the renamed distractors make the four texts differ
    assert len({p["problem_text"] for p in problems[:4]}) == 4


def test_a_unique_id_keeps_its_plain_key_and_duplicates_say_their_record():
    recs = [
        {"problem_id": 3, "irrelevant": "axiom", "overlap": "none"},
        {"problem_id": 10, "irrelevant": "axiom", "overlap": "none"},
        {"problem_id": 10, "irrelevant": "axiom", "overlap": "none", "control": True},
        {"problem_id": 10, "irrelevant": "axiom", "overlap": "none", "control": True},
    ]
    assert [(c.key, c.label) for c in problem_choices(recs)] == [
        ("3", "3 · axiom / none"),
        ("10/axiom/none", "10 · axiom / none"),
        ("10/axiom/none/control#3", "10 · axiom / none · control · record 3"),
        ("10/axiom/none/control#4", "10 · axiom / none · control · record 4"),
    ]
    # a proof that does not say its variant belongs to every record of its id
    assert len([c for c in problem_choices(recs) if proofs_of([{"problem_id": 10}], c.record)]) == 3


def _jsonl(records: list[dict]) -> bytes:
    return "\n".join(json.dumps(r) for r in records).encode()


def test_the_page_lists_each_variant_and_shows_the_one_picked(monkeypatch, paired):
    problems, proofs = paired
    at = efficiency_with_uploads(monkeypatch, _jsonl(problems), _jsonl(proofs))
    box = choice(at, "eff_problem")
    assert list(box.options) == [
        *(f"1 · tree / {o}" for o in OVERLAPS),
        "2 · tree / none",
        "2 · tree / both",
    ]
    strategy = choice(at, "eff_strategy")
    assert list(strategy.options) == list(STRATEGIES)  # each once, not once per variant
    # pick problem 1's "both" variant, then dfs: its own text and its own proof's figures
    box.set_value(problem_choices(problems)[3].key).run()
    choice(at, "eff_strategy").set_value("dfs").run()
    assert not at.exception, [e.value for e in at.exception]
    both, none = problems[3], problems[0]
    assert (both["overlap"], none["overlap"]) == ("both", "none")
    # a name only the "both" variant has (its distractors renamed), in the text shown
    (word, *_) = sorted(_words(both["problem_text"]) - _words(none["problem_text"]))
    shown_md = [m.value for m in at.markdown]
    assert word in shown_md[shown_md.index("**Problem**") + 1]
    dfs = {p["overlap"]: p for p in proofs if p["problem_id"] == 1 and p["strategy"] == "dfs"}
    (word, *_) = sorted(_words(dfs["both"]["proof_text"]) - _words(dfs["none"]["proof_text"]))
    proof_md = next(e for e in at.expander if e.label == "The proof as written").markdown[0].value
    assert word in proof_md
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Theorems"] == str(dfs["both"]["n_theorems"])


def _words(text: str) -> set[str]:
    return {w for w in text.replace(".", " ").replace(",", " ").split() if w.isalpha()}
