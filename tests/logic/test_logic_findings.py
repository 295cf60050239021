"""The efficiency paper's qualitative findings, reproduced with simulated reasoners.

On 200 generated problems with several irrelevant trees: DFS and BFS are not efficient
(mean efficiency below 1), and the goal-aware overlap heuristic is misled by distractors
that share the goal's agent and entity: it is more efficient with no overlap than with both.
"""

from __future__ import annotations

from statistics import mean

import pytest

from dagmath_viz.logic import generate_problems, problem_to_record, solve_record

N = 200


@pytest.fixture(scope="module")
def runs():
    out = {}
    for overlap in ("none", "both"):
        problems = [problem_to_record(p) for p in generate_problems(N, 2025, "trees", overlap)]
        out[overlap] = {
            s: [solve_record(r, s) for r in problems] for s in ("dfs", "bfs", "overlap")
        }
    return out


@pytest.mark.parametrize("overlap", ["none", "both"])
@pytest.mark.parametrize("strategy", ["dfs", "bfs"])
def test_uninformed_search_is_inefficient(runs, overlap, strategy):
    records = runs[overlap][strategy]
    assert len(records) == N and all(r["correct"] for r in records)
    assert mean(r["efficiency"] for r in records) < 1
    assert mean(r["efficiency_non_axiom"] for r in records) < 1


def test_overlap_heuristic_is_misled_by_lexical_overlap(runs):
    none = mean(r["efficiency"] for r in runs["none"]["overlap"])
    both = mean(r["efficiency"] for r in runs["both"]["overlap"])
    assert none > both
