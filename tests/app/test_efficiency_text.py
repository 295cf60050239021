"""The Efficiency page on the efficiency paper's own problems (issue 34 item 9).

``../shared/data/mathgap-sample/problems.jsonl`` (155 problems from the authors' generator,
as text) uploaded with the proofs ``dagmath gsm solve --text`` writes for them, and
``../shared/data/efficiency-paper-examples/examples.jsonl`` (the paper's Appendix D
problems with their proofs) uploaded alone. Both skip without ../shared, and fail with
DAGMATH_REQUIRE_SHARED=1.
"""

from __future__ import annotations

import json

import pytest

from dagmath_viz.logic.modelproofs import solve_text_record
from dagmath_viz.logic.textproofs import proof_lines, scored_text_proofs
from tests.app.helpers import efficiency_with_uploads


@pytest.fixture(scope="module")
def mathgap(request) -> tuple[bytes, bytes]:
    shared = request.getfixturevalue("shared_data")  # ../shared/data/dagmath-fewshot
    path = shared.parent / "mathgap-sample" / "problems.jsonl"
    lines = path.read_bytes().splitlines()
    assert len(lines) == 155  # the file's README: 155 problems
    # what `dagmath gsm solve --text` writes, one line per problem
    solved = [solve_text_record(json.loads(line)) for line in lines]
    return path.read_bytes(), "\n".join(json.dumps(r) for r in solved).encode()


@pytest.fixture(scope="module")
def examples(request) -> bytes:
    shared = request.getfixturevalue("shared_data")  # ../shared/data/dagmath-fewshot
    return (shared.parent / "efficiency-paper-examples" / "examples.jsonl").read_bytes()


def test_the_papers_generated_problems_load_and_count_right(monkeypatch, mathgap):
    at = efficiency_with_uploads(monkeypatch, *mathgap)
    assert not at.warning  # no record left out
    caption = " ".join(c.value for c in at.caption)
    assert "155 problems · 155 proofs scored · 155 reach the right answer" in caption
    metrics = {m.label: m.value for m in at.metric}
    # the solver's own shortest proofs: every statement is a shortest-proof theorem
    assert metrics["Accuracy"] == "100.0%" and metrics["Efficiency"] == "100.0%"
    (table,) = [d.value for d in at.dataframe if "efficiency_non_axiom" in d.value.columns]
    assert len(table) == 155 and table["correct"].all()


def test_the_papers_example_proofs_show_matched_and_unmatched(monkeypatch, examples):
    at = efficiency_with_uploads(monkeypatch, examples, None)
    assert not at.warning
    assert any("4 problems · 4 proofs scored" in c.value for c in at.caption)
    box = next(s for s in at.selectbox if s.label == "Problem")
    box.set_value("D3-llama-3.1-8b-instruct").run()
    lines = at.dataframe[-1].value
    counts = lines["status"].value_counts().to_dict()
    # the paper's D.3: 18 statements, 10 of them in the shortest proof (6 axioms and 4
    # theorems), 8 outside it (the keys, packets and crayons, and "So Edgar has 15 more
    # parrots than Pieter."); the closing answer line is not counted
    assert counts == {
        "matched, not in the shortest proof": 8,
        "axiom of the shortest proof": 6,
        "theorem of the shortest proof": 4,
        "not counted (the answer line)": 1,
    }
    edgar = lines[lines["statement"] == "So Edgar has 15 more parrots than Pieter."]
    assert edgar["status"].tolist() == ["matched, not in the shortest proof"]


def test_scoring_the_examples_gives_the_papers_numbers(examples):
    records = [json.loads(line) for line in examples.splitlines()]
    scored, issues = scored_text_proofs(records)
    assert issues == []
    llama = next(r for r in scored if r["id"] == "D3-llama-3.1-8b-instruct")
    # the paper's Appendix D.3: efficiency 10/18, non-axiom 4/8, recall 1
    assert llama["efficiency"] == pytest.approx(10 / 18)
    assert llama["efficiency_non_axiom"] == pytest.approx(4 / 8)
    assert llama["recall"] == 1.0
    assert sum(1 for r in proof_lines(llama) if r["status"].startswith("unmatched")) == 0


def test_a_problem_without_a_proof_is_named_once():
    problems = [{"id": "a", "text": "Ann has 3 apples. How many apples does Ann have?"}]
    scored, issues = scored_text_proofs(problems, [], problems_name="p.jsonl")
    assert scored == [] and len(issues) == 1
    assert str(issues[0]) == "p.jsonl: record 1: id 'a': it holds no 'proof'"
