"""Shortest proofs: hand-built programs, brute force on small generated ones, distractors."""

from __future__ import annotations

from itertools import combinations, product

import pytest

from dagmath_viz.logic import (
    IRRELEVANT,
    OVERLAPS,
    Cont,
    GeneratorConfig,
    Program,
    Query,
    certify_unique_shortest,
    closure,
    comparison,
    generate_problem,
    shortest_proof,
    shortest_proofs,
)

A, B, C, S = ("Ann",), ("Bob",), ("Cid",), ("Sam",)


def test_three_axiom_chain_has_a_unique_proof_of_five_vertices():
    # Ann 5; Bob has 3 more than Ann; Cid has 2 more than Bob. Cid? The only proof:
    # {Ann 5, comp(Bob,Ann,3), Bob 8, comp(Cid,Bob,2), Cid 10}: 5 vertices, depth 2.
    axioms = (Cont(A, "cats", 5), comparison(B, A, "cats", 3), comparison(C, B, "cats", 2))
    program = Program(axioms, Query(C, "cats"))
    proofs = shortest_proofs(program, Cont(C, "cats", 10))
    assert len(proofs) == 1
    p = proofs[0]
    assert (p.size, p.depth, p.goal) == (5, 2, Cont(C, "cats", 10))
    assert set(p.theorems) == {*axioms, Cont(B, "cats", 8), Cont(C, "cats", 10)}
    assert [s.rule for s in p.steps if s.rule] == ["1a", "1a"]
    assert certify_unique_shortest(program, p)


def test_two_equally_short_proofs_are_both_found():
    # Bob = Ann + 3 = 8 and Bob = Cid + 6 = 8: two proofs of 3 vertices each.
    axioms = (
        Cont(A, "cats", 5),
        comparison(B, A, "cats", 3),
        Cont(C, "cats", 2),
        comparison(B, C, "cats", 6),
    )
    program = Program(axioms, Query(B, "cats"))
    proofs = shortest_proofs(program, Cont(B, "cats", 8))
    assert sorted(p.size for p in proofs) == [3, 3]
    assert {frozenset(p.theorems) for p in proofs} == {
        frozenset({axioms[0], axioms[1], Cont(B, "cats", 8)}),
        frozenset({axioms[2], axioms[3], Cont(B, "cats", 8)}),
    }
    assert not any(certify_unique_shortest(program, p) for p in proofs)


def test_the_shorter_of_two_routes_wins():
    # Cid = Bob + 2 with Bob = Ann + 3 (5 vertices), or Cid = Sam - 1 directly (3 vertices).
    axioms = (
        Cont(A, "cats", 5),
        comparison(B, A, "cats", 3),
        comparison(C, B, "cats", 2),
        Cont(S, "cats", 11),
        comparison(S, C, "cats", 1),
    )
    program = Program(axioms, Query(C, "cats"))
    p = shortest_proof(program)
    assert p.size == 3
    assert set(p.theorems) == {axioms[3], axioms[4], Cont(C, "cats", 10)}


def test_unprovable_query_has_no_proof():
    program = Program((Cont(A, "cats", 5),), Query(B, "cats"))
    assert shortest_proof(program) is None
    assert shortest_proofs(program, Cont(B, "cats", 1)) == []


def test_a_given_goal_is_its_own_proof():
    program = Program((Cont(A, "cats", 5),), Query(A, "cats"))
    assert shortest_proof(program).size == 1


# --- brute force ----------------------------------------------------------------------


def _valid(subset, axioms, edges):
    """Is ``subset`` a proof: every member an axiom or derived inside the subset?"""
    done = {x for x in subset if x in axioms}
    grew = True
    while grew:
        grew = False
        for e in edges:
            if e.head in subset and e.head not in done and all(p in done for p in e.tail):
                done.add(e.head)
                grew = True
    return done == subset


def _acyclic(choice):
    seen, active = set(), set()

    def visit(x):
        if x in active:
            return False
        if x in seen:
            return True
        active.add(x)
        ok = all(visit(p) for p in (choice[x].tail if choice.get(x) else ()))
        active.discard(x)
        seen.add(x)
        return ok

    return all(visit(x) for x in choice)


def brute_force_minimum(program, goal):
    """All vertex sets of minimum size that are proofs, and the hyperpaths on each."""
    clos = closure(program)
    axioms = set(program.axioms)
    others = [x for x in clos.theorems if x != goal]
    for k in range(1, len(clos.theorems) + 1):
        found = [
            frozenset((goal, *rest))
            for rest in combinations(others, k - 1)
            if _valid(frozenset((goal, *rest)), axioms, clos.hyperedges)
        ]
        if found:
            break
    paths = []
    for v in found:
        derived = [x for x in v if x not in axioms]
        options = [
            [e for e in clos.hyperedges if e.head == x and set(e.tail) <= v] for x in derived
        ]
        for pick in product(*options):
            choice = dict(zip(derived, pick, strict=True))
            if _acyclic(choice):
                paths.append(frozenset((x, e.rule, e.tail) for x, e in choice.items()))
    return found, paths


def small_problems():
    """Generated problems whose closure is small enough to enumerate all subsets."""
    out = []
    for depth in (1, 2):
        cfg = GeneratorConfig(depth=depth)
        for irr, ov in [("none", "none"), *(("axiom", ov) for ov in OVERLAPS)]:
            for i in range(4):
                p = generate_problem(5, i, irr, ov, config=cfg)
                if len(closure(p.program).theorems) <= 16:
                    out.append(p)
    return out


SMALL = small_problems()


def test_enough_small_problems_for_brute_force():
    assert len(SMALL) >= 20


def _id(p):
    return f"depth{p.proof.depth}-{p.irrelevant}-{p.overlap}-{p.problem_id}"


@pytest.mark.parametrize("problem", SMALL, ids=_id)
def test_generated_shortest_proof_is_unique_by_brute_force(problem):
    found, paths = brute_force_minimum(problem.program, problem.proof.goal)
    assert found == [frozenset(problem.proof.theorems)]
    derived = {(s.theorem, s.rule, s.premises) for s in problem.proof.steps if s.rule}
    assert paths == [frozenset(derived)]


# --- irrelevant axioms change nothing -----------------------------------------------------


@pytest.mark.parametrize("irrelevant", IRRELEVANT[1:])
@pytest.mark.parametrize("overlap", OVERLAPS)
def test_irrelevant_axioms_do_not_change_the_shortest_proof(irrelevant, overlap):
    cfg = GeneratorConfig(depth=3, n_trees=3)
    for i in range(3):
        p = generate_problem(21, i, irrelevant, overlap, config=cfg)
        relevant = tuple(x for x, r in zip(p.program.axioms, p.relevant, strict=True) if r)
        assert len(relevant) < len(p.program.axioms)
        alone = Program(relevant, p.program.query)
        with_distractors = shortest_proofs(p.program, p.proof.goal)
        without = shortest_proofs(alone, p.proof.goal)
        assert len(with_distractors) == len(without) == 1
        assert with_distractors[0].signature == without[0].signature == p.proof.signature
