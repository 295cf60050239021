"""``gsm solve --text`` reads back every problem text this project writes.

``gsm generate`` says its problems in this project's own templates
(:mod:`dagmath_viz.logic.verbalize`, time stamps said: "After round 1, ...", "In round 2,
..."), not in the authors'; the bundled ``sample_data/gsm/problems.jsonl`` are such problems.
The expected answers are the generator's own (its shortest proof, from the program, not from
the text), so each check compares two independent computations.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagmath_viz.cli.gsm import main
from dagmath_viz.logic import IRRELEVANT, OVERLAPS
from dagmath_viz.logic.modelproofs import solve_text_record

BUNDLED = Path(__file__).parents[2] / "sample_data" / "gsm" / "problems.jsonl"


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _read_back(problems: Path, tmp_path: Path) -> list[tuple[object, object]]:
    """(answer read from the text, the generator's answer) for each problem, via the CLI."""
    out = tmp_path / "answers.jsonl"
    assert main(["solve", "--text", str(problems), "-o", str(out)]) == 0
    want = {r["problem_id"]: r["answer"] for r in _lines(problems)}
    got = _lines(out)
    assert len(got) == len(want)
    return [(r.get("answer", r.get("error")), want.get(r["id"])) for r in got]


@pytest.mark.parametrize("control", [False, True], ids=["distractors", "control"])
@pytest.mark.parametrize("irrelevant", IRRELEVANT)
def test_every_generated_problem_is_read_back(tmp_path, irrelevant, control):
    """5 problems in each of the 4 x 4 x 2 designs: 160 problems, every answer read back."""
    for overlap in OVERLAPS:
        problems = tmp_path / f"{overlap}.jsonl"
        args = ["generate", "--problems", "5", "--seed", "7", "--irrelevant", irrelevant]
        args += ["--overlap", overlap, "-o", str(problems)] + (["--control"] * control)
        assert main(args) == 0
        pairs = _read_back(problems, tmp_path)
        assert len(pairs) == 5
        assert [got for got, _ in pairs] == [want for _, want in pairs]


def test_the_bundled_gsm_problems_are_read_back(tmp_path):
    pairs = _read_back(BUNDLED, tmp_path)
    assert len(pairs) == 26
    assert [got for got, _ in pairs] == [want for _, want in pairs]


def test_the_bundled_problems_irrelevant_sentences_are_the_generators():
    """Read from the text alone, the irrelevant axioms are exactly the sentences the
    generator marks not relevant (125 of them over the 26 problems)."""
    n = 0
    for rec in _lines(BUNDLED):
        out = solve_text_record(rec)
        assert out["id"] == rec["problem_id"] and out["answer"] == rec["answer"]
        want = [s for s, r in zip(rec["sentences"], rec["relevant"], strict=True) if not r]
        assert out["irrelevant_axioms"] == want
        n += len(want)
    assert n == 125
