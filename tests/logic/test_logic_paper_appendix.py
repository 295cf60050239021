"""score-proofs on the efficiency paper's own example proofs (its Appendix D.2 and D.3).

The problems and proofs are in ../shared/data/efficiency-paper-examples, exactly as the
paper prints them (its README lists them and the paper's notes). Every expected number is
worked out by hand from DEFINITIONS.md §6; the comments show the counting.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from dagmath_viz.cli.gsm import main
from dagmath_viz.logic.modelproofs import score_proof_record

EXAMPLES = Path(__file__).parents[2] / ".." / "shared" / "data" / "efficiency-paper-examples"


@pytest.fixture(scope="module")
def examples() -> dict[str, dict]:
    """The paper's four example records, by id."""
    path = (EXAMPLES / "examples.jsonl").resolve()
    if not path.is_file():
        reason = f"shared data not found at {path}"
        if os.environ.get("DAGMATH_REQUIRE_SHARED") == "1":
            pytest.fail(f"{reason} and DAGMATH_REQUIRE_SHARED=1", pytrace=False)
        pytest.skip(f"{reason} (set DAGMATH_REQUIRE_SHARED=1 to make this a failure)")
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return {r["id"]: r for r in rows}


@pytest.mark.parametrize(
    ("rid", "size"),
    [
        # D.2's prompt example: 9 numbered lines, each a theorem of its shortest proof
        ("D2-prompt-example", 9),
        # D.2's generation: 5 lines (2 axioms, a conclusion, an axiom, a conclusion)
        ("D2-generation", 5),
        # D.3: "four inference rules, ten theorems" (the README), one a line
        ("D3-shortest-proof", 10),
    ],
)
def test_the_papers_shortest_proofs_score_one(examples, rid, size):
    """A proof that states exactly the shortest proof's theorems, in the order its trees
    are written: efficiency, non-axiom efficiency and recall 1, an exact match, and
    distance 0 to the "efficient" search order (the trees' order kept to the proof)."""
    out = score_proof_record(examples[rid])
    assert "error" not in out, out.get("error")
    assert out["correct"] is True and out["answer"] == int(examples[rid]["answer"])
    assert out["unmatched"] == []
    assert out["n_statements"] == size and out["shortest_size"] == size
    assert (out["efficiency"], out["efficiency_non_axiom"], out["recall"]) == (1.0, 1.0, 1.0)
    assert out["exact_match"] is True
    assert out["distance"]["efficient"] == 0.0


def test_d3_shortest_proof_needs_rule_1c_in_the_references(examples):
    """Line 6 ("So the difference between the number of parrots Dennie and Dianna have is
    19 - 4 = 15.") is concluded by 1c from lines 4 and 5, and line 8 by compeq elimination
    from it: without 1c in the references the trees never reach Edgar's 29 nor the goal.

    The trees written in order (dfs), worked by hand: the axioms in problem order, each
    conclusion once its last premise is seen: Winnah 53 (after "Ichabod has 30 packets
    less than Winnah"), Pieter 14 (after the transfer), Imogene 151, Rahel 122, the
    difference 15 (after "Dianna owns 4 parrots"), Edgar 29 (after the compeq), Eddie 26:
    seven conclusions. The proof states four of them in that order: three deletions in
    seven, 3/7.
    """
    out = score_proof_record(examples["D3-shortest-proof"])
    assert out["distance"]["dfs"] == pytest.approx(3 / 7)


def test_llamas_d3_proof(examples):
    """Llama-3.1-8B-Instruct's 17 lines, by hand (S = the 10 theorems of the shortest proof):

    - lines 1, 2, 4, 6: axioms about keys, packets, crayons (irrelevant), not in S;
    - lines 3, 5, 7: their conclusions (Rahel 122, Winnah 53, Imogene 151), not in S;
    - lines 8, 9 (Pieter's 20, the transfer), 11 (the compeq), 16 (Edgar vs Eddie): axioms in S;
    - line 12 states two axioms in S (Dennie 19, Dianna 4);
    - line 13 (the difference 15, no entity named: the goal's parrots), 10 (Pieter 14),
      15 (Edgar 29), 17 (Eddie 26): conclusions in S;
    - line 14 (Edgar has 15 more than Pieter): a true theorem, not in S.

    |P| = 17 + 1 = 18, |S ∩ P| = 10: efficiency 10/18; recall 10/10. Non-axiom theorems
    of P: lines 3, 5, 7, 10, 13, 14, 15, 17 = 8, of which 10, 13, 15, 17 are in S: 4/8.
    """
    out = score_proof_record(examples["D3-llama-3.1-8b-instruct"])
    assert out["correct"] is True and out["answer"] == 26
    assert out["unmatched"] == []
    assert out["n_statements"] == 18 and out["shortest_size"] == 10
    assert out["efficiency"] == pytest.approx(10 / 18)
    assert out["efficiency_non_axiom"] == pytest.approx(4 / 8)
    assert out["recall"] == 1.0 and out["exact_match"] is False
    line12 = [r for r in out["matched"] if r["text"].startswith("Dennie has 19 parrots and")]
    assert [r["theorem"]["agent"] for r in line12] == [["Dennie"], ["Dianna"]]
    line13 = [r for r in out["matched"] if r["text"].startswith("The difference between")]
    assert len(line13) == 1 and line13[0]["in_shortest"] is True
    assert line13[0]["theorem"]["entity"] == "parrots" and line13[0]["theorem"]["diff"] == 15


def test_the_cli_scores_the_whole_file(examples, tmp_path):
    out = tmp_path / "scored.jsonl"
    assert main(["score-proofs", str((EXAMPLES / "examples.jsonl").resolve()), "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert [r["id"] for r in rows] == list(examples)
    assert [r["efficiency"] for r in rows[:3]] == [1.0, 1.0, 1.0]
    assert rows[3]["efficiency"] == pytest.approx(10 / 18)
