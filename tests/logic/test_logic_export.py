"""DAG-MATH export of proofs, the official layout, and the drawable proof graph."""

from __future__ import annotations

import json
import re

import pytest

from dagmath_viz.logic import (
    Cont,
    ProgramError,
    atom_from_dict,
    comparison,
    export_trajectories,
    generate_problem,
    problem_to_record,
    proof_graph,
    solve_record,
    trajectory_sample,
    verbalize,
)
from dagmath_viz.schema import UnsafePathError

R5 = Cont(("Ryan",), "cats", 5)
K = comparison(("Eli",), ("Ryan",), "cats", 3)
S4 = Cont(("Sam",), "cats", 4)
E8 = Cont(("Eli",), "cats", 8)


def dead_ends(sample):
    """Steps other than the last that no step lists as a parent (DEFINITIONS.md §1)."""
    used = {p for s in sample["steps"] for p in s["direct_dependent_steps"] or []}
    return [s["step_id"] for s in sample["steps"][:-1] if s["step_id"] not in used]


def test_bfs_proof_as_trajectory(eli_record):
    # bfs proves Ryan 5, the comparison, Sam 4 (never used), then Eli 8 from steps 1 and 2
    sample = trajectory_sample(solve_record(eli_record, "bfs"))
    steps = sample["steps"]
    assert [s["step_id"] for s in steps] == [1, 2, 3, 4]
    assert [s["direct_dependent_steps"] for s in steps] == [None, None, None, [1, 2]]
    assert steps[3]["text"].endswith("The final answer is $\\boxed{8}$.")
    assert sample["final_answer"] == steps[3]["text"]
    assert steps[0]["thinking"] == "Given in the problem."
    assert "5 + 3 = 8" in steps[3]["thinking"]
    assert dead_ends(sample) == [3]
    assert sample["metadata"] == {"model": "gsm-bfs", "reasoning_content": ""}
    assert (sample["answer"], sample["proof_depth"], sample["domain"]) == ("8", 1, "gsm-logic")
    assert "difficulty" not in sample  # a proof depth is no difficulty (issue 30)
    assert (sample["problem_id"], sample["sample_id"]) == (7, 0)
    assert sample["problem_text"] == eli_record["problem_text"]


def test_shortest_proof_is_closed(eli_record):
    sample = trajectory_sample(solve_record(eli_record, "shortest"))
    assert len(sample["steps"]) == 3
    assert dead_ends(sample) == []


def test_official_layout(eli_record, tmp_path):
    records = [solve_record(eli_record, s) for s in ("bfs", "shortest", "bfs")]
    files = export_trajectories(records, tmp_path)
    assert [f.relative_to(tmp_path).as_posix() for f in files] == [
        "gsm-bfs/gsm-logic/problem_7_all_samples.json",
        "gsm-shortest/gsm-logic/problem_7_all_samples.json",
    ]
    bfs = json.loads(files[0].read_text())
    assert [s["sample_id"] for s in bfs] == [0, 1]
    # the project extracts the content of the last \boxed{...}
    assert re.findall(r"\\boxed\{([^}]*)\}", bfs[0]["final_answer"])[-1] == "8"


@pytest.mark.parametrize(
    ("dataset", "strategy"), [("../up", "bfs"), ("gsm-logic", "../../x"), ("a/b", "bfs")]
)
def test_unsafe_names_are_refused(eli_record, tmp_path, dataset, strategy):
    rec = solve_record(eli_record, "bfs") | {"strategy": strategy}
    with pytest.raises(UnsafePathError):
        export_trajectories([rec], tmp_path, dataset)


def test_bad_premises_are_refused(eli_record):
    rec = solve_record(eli_record, "bfs")
    rec["theorems"][3]["premises"] = [3]
    with pytest.raises(ProgramError, match="bad premises"):
        trajectory_sample(rec)


def test_proof_graph_flags(eli_record):
    g = proof_graph(eli_record, solve_record(eli_record, "bfs"))
    assert g.edges == ((1, 4), (2, 4))
    flags = [(n.is_axiom, n.is_goal, n.in_shortest_proof, n.irrelevant, n.level) for n in g.nodes]
    assert flags == [
        (True, False, True, False, 0),
        (True, False, True, False, 0),
        (True, False, False, True, 0),  # Sam 4: the irrelevant axiom
        (False, True, True, False, 1),
    ]
    assert g.nodes[2].label in {verbalize(S4, v) for v in (0, 1)}
    assert g.to_dict()["edges"] == [[1, 4], [2, 4]]


@pytest.mark.parametrize("strategy", ["dfs", "bfs", "overlap"])
def test_generated_exports_keep_the_shortest_proof_as_ancestors(strategy):
    for i in range(8):
        p = generate_problem(13, i, "trees", "both")
        record = solve_record(problem_to_record(p), strategy)
        sample = trajectory_sample(record)
        steps = sample["steps"]
        last = len(steps)
        ancestors, stack = {last}, [last]
        while stack:
            for q in steps[stack.pop() - 1]["direct_dependent_steps"] or []:
                if q not in ancestors:
                    ancestors.add(q)
                    stack.append(q)
        theorems = [atom_from_dict(t["theorem"]) for t in record["theorems"]]
        shortest = {j + 1 for j, x in enumerate(theorems) if x in set(p.proof.theorems)}
        # every vertex of the unique shortest proof is necessary, so the strategy's own
        # derivation of the goal contains them all; dead ends lie outside it
        assert shortest <= ancestors
        assert not set(dead_ends(sample)) & shortest
        for s in steps:
            assert all(q < s["step_id"] for q in s["direct_dependent_steps"] or [])
