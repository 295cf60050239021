"""The problem generator: determinism, structure, overlap, controls, fresh terms."""

from __future__ import annotations

from collections import Counter

import pytest

from dagmath_viz.logic import (
    Cont,
    GeneratorConfig,
    Rate,
    generate_problem,
    generate_problems,
    problem_to_record,
)
from dagmath_viz.logic.program import entities_of, names_of


def _irrelevant_axioms(p):
    return [x for x, r in zip(p.program.axioms, p.relevant, strict=True) if not r]


def test_same_seed_same_problems_different_seed_different():
    one = [problem_to_record(p) for p in generate_problems(4, 7, "tree", "agent")]
    two = [problem_to_record(p) for p in generate_problems(4, 7, "tree", "agent")]
    other = [problem_to_record(p) for p in generate_problems(4, 8, "tree", "agent")]
    assert one == two
    assert one != other


def test_a_problem_depends_only_on_seed_and_id():
    batch = generate_problems(3, 7, first_id=10)
    assert [p.problem_id for p in batch] == [10, 11, 12]
    assert problem_to_record(batch[1]) == problem_to_record(generate_problem(7, 11))


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_proof_has_the_requested_depth(depth):
    for i in range(5):
        p = generate_problem(3, i, config=GeneratorConfig(depth=depth))
        assert p.proof.depth == depth
        assert p.answer == p.proof.goal.quantity
        assert p.program.query.matches(p.proof.goal)


def test_structures_add_the_right_amount_of_irrelevance():
    cfg = GeneratorConfig(depth=2, n_trees=3)
    for i in range(5):
        assert all(generate_problem(1, i, "none", config=cfg).relevant)
        assert len(_irrelevant_axioms(generate_problem(1, i, "axiom", config=cfg))) == 1
        assert len(_irrelevant_axioms(generate_problem(1, i, "tree", config=cfg))) >= 1
        # three trees, each with at least one axiom
        assert len(_irrelevant_axioms(generate_problem(1, i, "trees", config=cfg))) >= 3


@pytest.mark.parametrize(
    ("overlap", "shares_entity", "shares_name"),
    [("none", False, False), ("entity", True, False), ("agent", False, True), ("both", True, True)],
)
def test_overlap_of_the_distractors_with_the_goal(overlap, shares_entity, shares_name):
    for i in range(6):
        p = generate_problem(2, i, "trees", overlap)
        goal_names, goal_entity = set(p.program.query.agent), p.program.query.entity
        for x in _irrelevant_axioms(p):
            if not shares_name:
                assert not names_of(x) & goal_names, str(x)
            if not shares_entity:
                assert goal_entity not in entities_of(x), str(x)
        irr = _irrelevant_axioms(p)
        assert any(goal_entity in entities_of(x) for x in irr) == shares_entity
        assert any(names_of(x) & goal_names for x in irr) == shares_name


def test_both_overlap_groups_hold_more_than_the_goal_agent():
    for i in range(6):
        p = generate_problem(4, i, "tree", "both")
        goal = p.proof.goal
        groups = [
            x
            for x in _irrelevant_axioms(p)
            if isinstance(x, Cont) and len(x.agent) > 1 and set(goal.agent) & set(x.agent)
        ]
        assert groups
        if len(goal.agent) == 1:
            assert all(x.quantity > goal.quantity for x in groups if x.time == goal.time)


@pytest.mark.parametrize("irrelevant", ["axiom", "tree", "trees"])
def test_control_has_as_many_axioms_all_relevant(irrelevant):
    for i in range(4):
        problem = generate_problem(6, i, irrelevant, "entity")
        control = generate_problem(6, i, irrelevant, "entity", control=True)
        assert len(control.program.axioms) == len(problem.program.axioms)
        assert all(control.relevant)
        assert control.answer == problem.answer
        assert control.control and (control.irrelevant, control.overlap) == (irrelevant, "entity")


def test_terms_are_fresh_and_axioms_used_once(mixed_problems):
    for p in mixed_problems:
        leaves = [s.theorem for s in p.proof.steps if s.rule is None]
        assert len(leaves) == len(set(leaves))
        assert set(leaves) == {x for x, r in zip(p.program.axioms, p.relevant, strict=True) if r}
        # every name given a cont in the proof has exactly one cont per (entity, time)
        keys = Counter(s.theorem.key for s in p.proof.steps if isinstance(s.theorem, Cont))
        assert max(keys.values()) == 1
        # in the proof, a rate's agent never takes part in a transfer (the frame rule
        # would contradict the timeless rate)
        rated = {n for x in leaves if isinstance(x, Rate) for n in x.agent}
        movers = {n for x in leaves if x.pred == "transfer" for n in names_of(x)}
        assert not rated & movers


def test_sentences_follow_time():
    for i in range(10):
        p = generate_problem(8, i, "tree", "entity")
        times = [
            0 if isinstance(x, Rate) else x.time + (0.5 if x.pred == "transfer" else 0)
            for x in p.program.axioms
        ]
        assert times == sorted(times)
        assert p.text.endswith(p.question)


@pytest.mark.parametrize(("irrelevant", "overlap"), [("lots", "none"), ("none", "names")])
def test_unknown_options_are_refused(irrelevant, overlap):
    with pytest.raises(ValueError):
        generate_problem(0, 0, irrelevant, overlap)


# --- paired overlap conditions -----------------------------------------------------------


def _shape(x):
    """An axiom with its names and entities blanked: what may not change between conditions."""
    from dagmath_viz.logic import atom_to_dict

    d = atom_to_dict(x)
    return tuple(
        (k, None if isinstance(v, list) or k in ("entity", "container") else v)
        for k, v in sorted(d.items())
    )


@pytest.mark.parametrize("irrelevant", ["axiom", "tree", "trees"])
@pytest.mark.parametrize("pid", [0, 1, 2])
def test_paired_conditions_differ_only_in_names_and_entities(irrelevant, pid):
    from dagmath_viz.logic.generator import generate_paired
    from dagmath_viz.logic.program import names_of

    ps = generate_paired(7, pid, irrelevant)
    assert set(ps) == {"none", "entity", "agent", "both"}
    none = ps["none"]
    goal = none.proof.goal
    g = goal.agent[0]
    for overlap, p in ps.items():
        assert p.overlap == overlap
        assert p.answer == none.answer and p.proof.signature == none.proof.signature
        assert len(p.program.axioms) == len(none.program.axioms)
        assert p.relevant == none.relevant
        for x, y, rel in zip(p.program.axioms, none.program.axioms, p.relevant, strict=True):
            assert _shape(x) == _shape(y)  # same predicate, numbers and times
            if rel:
                assert x == y  # the goal's own axioms are untouched
        irrelevant_axioms = [x for x, r in zip(p.program.axioms, p.relevant, strict=True) if not r]
        assert irrelevant_axioms
        # the paper's distractor types: counts, comparisons and transfers only
        assert {x.pred for x in irrelevant_axioms} <= {"cont", "comp", "transfer"}
        if irrelevant == "axiom":
            assert len(irrelevant_axioms) == 1
        mentions_goal = [
            any(n == g or n.startswith(f"{g}'s ") for n in names_of(x)) for x in irrelevant_axioms
        ]
        uses_entity = any(x.entity == goal.entity for x in irrelevant_axioms)
        if overlap == "none":
            assert not any(mentions_goal) and not uses_entity
            # the authors' non-overlapping entities share the goal's topic (when it has room)
            from dagmath_viz.logic.vocab import TOPICS

            topic = next(t for t in TOPICS if goal.entity in t)
            if len(topic) - 1 >= 3:
                assert all(x.entity in topic for x in irrelevant_axioms)
        if overlap == "entity":
            assert not any(mentions_goal) and uses_entity
        if overlap == "agent":
            assert all(mentions_goal) and not uses_entity
        if overlap == "both":
            # possessives only ("Ryan's aunt"), and the goal's entity
            assert all(all(n.startswith(f"{g}'s ") for n in names_of(x)) for x in irrelevant_axioms)
            assert uses_entity
    # possessive agents survive the verbalizer and its parser
    from dagmath_viz.logic import parse_proof

    for p in ps.values():
        assert set(parse_proof(" ".join(p.sentences)).theorems) == set(p.program.axioms)
