"""Problem and proof records; simulated reasoners end to end (verbalize, parse, score)."""

from __future__ import annotations

import json

import pytest

from dagmath_viz.logic import (
    STRATEGIES,
    Cont,
    ProgramError,
    atom_from_dict,
    atom_to_dict,
    comparison,
    forward_chain,
    problem_from_record,
    problem_to_record,
    read_jsonl,
    solve_record,
    write_jsonl,
)
from dagmath_viz.schema import InputError

R5 = Cont(("Ryan",), "cats", 5)
K = comparison(("Eli",), ("Ryan",), "cats", 3)
S4 = Cont(("Sam",), "cats", 4)
E8 = Cont(("Eli",), "cats", 8)


# by hand (see test_logic_chaining): bfs proves R5, K, S4, E8 -> 3/4; the others prove
# exactly the three theorems of the shortest proof -> 1. Every strategy's only non-axiom
# theorem is E8, so the non-axiom efficiency is 1 for all.
@pytest.mark.parametrize(
    ("strategy", "n", "eff"), [("shortest", 3, 1.0), ("dfs", 3, 1.0), ("bfs", 4, 0.75)]
)
def test_solve_hand_built_problem(eli_record, strategy, n, eff):
    r = solve_record(eli_record, strategy)
    assert (r["n_theorems"], r["efficiency"], r["efficiency_non_axiom"]) == (n, eff, 1.0)
    assert (r["answer"], r["correct"], r["shortest_size"]) == (8, True, 3)
    assert r["theorems"][-1] == {
        "theorem": atom_to_dict(E8),
        "text": r["proof_text"].splitlines()[-1],
        "rule": "1a",
        "premises": [0, 1],
    }
    assert (r["irrelevant"], r["overlap"], r["control"]) == ("axiom", "entity", False)
    assert r["unmatched"] == 0


def test_solve_recomputes_a_missing_shortest_proof(eli_record):
    del eli_record["shortest_proof"]
    assert solve_record(eli_record, "bfs")["efficiency"] == 0.75


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"axioms": []}, "axioms must be a non-empty list"),
        ({"problem_id": True}, "problem_id"),
        ({"query": {"agent": ["Eli"], "entity": "cats", "time": -1}}, "time"),
        ({"answer": "8"}, "answer must be an integer"),
        ({"axioms": [atom_to_dict(R5), atom_to_dict(Cont(("Ryan",), "cats", 6))]}, "inconsistent"),
        ({"shortest_proof": [{"theorem": atom_to_dict(E8), "premises": [3]}]}, "premises"),
    ],
)
def test_bad_problem_records(eli_record, change, message):
    eli_record.update(change)
    with pytest.raises(ProgramError, match=message):
        solve_record(eli_record, "dfs")


def test_unknown_strategy(eli_record):
    with pytest.raises(ValueError, match="unknown strategy"):
        solve_record(eli_record, "guess")


def test_problem_record_round_trip(mixed_problems):
    for p in mixed_problems:
        rec = json.loads(json.dumps(problem_to_record(p)))
        loaded = problem_from_record(rec)
        assert loaded.program == p.program
        assert loaded.shortest == p.proof
        assert loaded.answer == p.answer
        assert rec["n_axioms"] == len(rec["sentences"]) == len(rec["axioms"])


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_is_correct_and_parses_back(mixed_problems, strategy):
    for p in mixed_problems:
        r = solve_record(problem_to_record(p), strategy)
        assert r["correct"] and r["answer"] == p.answer
        assert r["unmatched"] == 0
        # verbalizing then parsing gives back every theorem the strategy proved, in order
        written = [atom_from_dict(t["theorem"]) for t in r["theorems"]]
        if strategy == "shortest":
            assert written == list(p.proof.theorems)
            assert r["efficiency"] == 1.0 and r["efficiency_non_axiom"] == 1.0
        else:
            assert written == list(forward_chain(p.program, strategy).order)
            assert 0.0 < r["efficiency"] <= 1.0
        for i, t in enumerate(r["theorems"]):
            assert t["premises"] is None or all(j < i for j in t["premises"])


def test_jsonl_round_trip_and_errors(tmp_path):
    path = tmp_path / "x.jsonl"
    assert write_jsonl(path, [{"b": 1, "a": 2}, {"c": [1]}]) == 2
    assert path.read_text().splitlines()[0] == '{"a": 2, "b": 1}'
    assert read_jsonl(path) == [{"a": 2, "b": 1}, {"c": [1]}]
    path.write_text('{"a": 1}\n\n[1, 2]\n')
    with pytest.raises(InputError, match="line 3: expected a JSON object"):
        read_jsonl(path)
    path.write_text("{oops\n")
    with pytest.raises(InputError, match="line 1, column 2: invalid JSON"):
        read_jsonl(path)
    with pytest.raises(InputError, match="no such file or folder"):
        read_jsonl(tmp_path / "missing.jsonl")


def test_distance_to_the_efficient_reference(eli_record):
    from dagmath_viz.logic import solve_record

    # Eli: the shortest proof's one non-axiom theorem is Eli 8; every strategy states it alone
    # among its non-axioms (BFS adds only the axiom Sam 4), so the distance is 0
    for strategy in ("shortest", "bfs", "dfs"):
        assert solve_record(eli_record, strategy)["distance_efficient"] == 0.0


def test_distance_to_the_efficient_reference_on_a_detour():
    from dagmath_viz.logic import generate_problem, problem_to_record, solve_record

    rec = problem_to_record(generate_problem(1, 0, "trees", "none"))
    assert solve_record(rec, "shortest")["distance_efficient"] == 0.0
    bfs = solve_record(rec, "bfs")
    axioms = {str(a) for a in rec["axioms"]}
    n_mine = sum(1 for t in bfs["theorems"] if str(t["theorem"]) not in axioms)
    n_ref = sum(1 for s in rec["shortest_proof"] if s["premises"] is not None)
    assert n_mine > n_ref  # BFS detours through the distractor trees
    # an edit script needs at least n_mine - n_ref deletions
    assert bfs["distance_efficient"] >= (n_mine - n_ref) / n_mine
