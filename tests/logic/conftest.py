"""Shared fixtures for the logic-program tests: hand-built programs and generated problems."""

from __future__ import annotations

import pytest

from dagmath_viz.logic import (
    IRRELEVANT,
    OVERLAPS,
    Cont,
    GeneratorConfig,
    Program,
    Query,
    atom_to_dict,
    comparison,
    generate_problem,
)

RYAN, ELI, SAM = ("Ryan",), ("Eli",), ("Sam",)


@pytest.fixture
def eli_program() -> Program:
    """Ryan has 5 cats; Eli has 3 more than Ryan; Sam has 4 cats (irrelevant). Eli? (8)."""
    axioms = (Cont(RYAN, "cats", 5), comparison(ELI, RYAN, "cats", 3), Cont(SAM, "cats", 4))
    return Program(axioms, Query(ELI, "cats"))


@pytest.fixture
def eli_record(eli_program) -> dict:
    """The same problem as a problem record, with its shortest proof written by hand."""
    r5, k, _ = eli_program.axioms
    e8 = Cont(ELI, "cats", 8)
    return {
        "problem_id": 7,
        "problem_text": "Ryan has 5 cats. Eli has 3 more cats than Ryan. Sam has 4 cats. ...",
        "axioms": [atom_to_dict(x) for x in eli_program.axioms],
        "query": {"agent": ["Eli"], "entity": "cats", "time": 0},
        "answer": 8,
        "shortest_proof": [
            {"theorem": atom_to_dict(r5), "rule": None, "premises": None},
            {"theorem": atom_to_dict(k), "rule": None, "premises": None},
            {"theorem": atom_to_dict(e8), "rule": "1a", "premises": [0, 1]},
        ],
        "depth": 1,
        "irrelevant": "axiom",
        "overlap": "entity",
        "control": False,
    }


@pytest.fixture(scope="session")
def mixed_problems():
    """Two problems of every structure × overlap, plus controls (depth 2, quick)."""
    cfg = GeneratorConfig(depth=2, n_trees=2)
    return [
        generate_problem(11, i, irr, ov, control, cfg)
        for irr in IRRELEVANT
        for ov in OVERLAPS
        for control in (False, True)
        for i in range(2)
    ]
