"""Paired outcomes (dagmath_viz/analysis/paired.py) and ``dagmath compare``.

The per-problem cells are recomputed here from the scored records with plain dictionaries
(no pandas, none of the module's code), on hand-made records, on the bundled data and on
the real Thought Anchors chains."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest

from dagmath_viz.analysis import metrics
from dagmath_viz.analysis.paired import (
    Side,
    design_note,
    outcome_counts,
    paired_outcomes,
    parse_side,
    summarise_pair,
)
from dagmath_viz.cli import main
from dagmath_viz.schema import DagMathError

REPO = Path(__file__).parents[1]
RUNS = REPO / "sample_data" / "runs"
TA = (REPO / ".." / "shared" / "data" / "thought-anchors").resolve()
TA_MODEL = "deepseek-r1-distill-qwen-14b"


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.fixture(scope="module")
def thought_anchors() -> Path:
    if not TA.is_dir():
        if os.environ.get("DAGMATH_REQUIRE_SHARED") == "1":
            pytest.fail(f"thought-anchors data not found at {TA}", pytrace=False)
        pytest.skip(f"thought-anchors data not found at {TA}")
    return TA


def _rec(model, pid, sample, correct, closed, dataset="d"):
    return {
        "model": model, "dataset": dataset, "problem_id": pid, "sample_id": sample,
        "final_correct": correct, "closed": closed,
    }  # fmt: skip


# --------------------------------------------------------------------------- hand-made records


def hand_frame() -> pd.DataFrame:
    rows = [
        # p1: a right and closed, b right not closed -> answer both, perfect only A
        _rec("a", "p1", 0, True, True),
        _rec("b", "p1", 0, True, False),
        # p2: a wrong, b right and closed -> answer only B, perfect only B
        _rec("a", "p2", 0, False, True),
        _rec("b", "p2", 0, True, True),
        # p3: both wrong -> neither, neither
        _rec("a", "p3", 0, False, False),
        _rec("b", "p3", 0, False, True),
        # p4: a has 3 samples, 2 right (1 closed); b has 1 unscored sample only: not shared
        _rec("a", "p4", 0, True, True),
        _rec("a", "p4", 1, True, False),
        _rec("a", "p4", 2, False, False),
        _rec("b", "p4", 0, None, True),
        # p5: a 2 of 4 right (exactly half), b 1 of 1 right
        *[_rec("a", "p5", i, i < 2, True) for i in range(4)],
        _rec("b", "p5", 0, True, True),
    ]
    return pd.DataFrame(rows)


def test_cells_and_counts_by_hand():
    table = paired_outcomes(hand_frame(), Side("a"), Side("b"))
    pairs = zip(table["answer_cell"], table["perfect_cell"], strict=True)
    cells = dict(zip(table["problem_id"], pairs, strict=True))
    # p4 is not shared (b's only sample is unscored); p5: 2 of 4 is not a majority
    assert cells == {
        "p1": ("both", "only_a"),
        "p2": ("only_b", "only_b"),
        "p3": ("neither", "neither"),
        "p5": ("only_b", "only_b"),
    }
    assert outcome_counts(table) == {
        "answer": {"both": 1, "only_a": 0, "only_b": 2, "neither": 1},
        "perfect": {"both": 0, "only_a": 1, "only_b": 2, "neither": 1},
    }
    s = summarise_pair(table, Side("a"), Side("b"), "majority")
    # per-problem PASS@1 differences: p1 0, p2 -1, p3 0, p5 0.5 - 1 = -0.5 -> mean -0.375
    assert s.differences["pass_at_1"].estimate == pytest.approx(-0.375)
    # PRR: p1 1 - 0, p2 0 - 1, p3 0, p5 0.5 - 1 -> mean -0.125
    assert s.differences["prr"].estimate == pytest.approx(-0.125)
    assert s.n_problems == 4 and s.note is None


@pytest.mark.parametrize(
    ("rule", "p5_answer"),
    [
        ("majority", "only_b"),  # 2 of 4 is not more than half
        ("any", "both"),  # at least one right
        ("all", "only_b"),
    ],
)
def test_rules_with_several_samples(rule, p5_answer):
    table = paired_outcomes(hand_frame(), Side("a"), Side("b"), rule)
    assert table.set_index("problem_id").loc["p5", "answer_cell"] == p5_answer


def test_sample_sides_pair_two_runs_of_one_model():
    df = pd.DataFrame([_rec("m", "p", 0, True, True), _rec("m", "p", 1, False, False)])
    table = paired_outcomes(df, Side("m", 0), Side("m", 1))
    assert table["answer_cell"].tolist() == ["only_a"]
    assert table["perfect_cell"].tolist() == ["only_a"]


def test_parse_side_and_its_errors():
    assert parse_side("m@3", ["m", "n"]) == Side("m", 3)
    assert parse_side("x@1", ["x@1"]) == Side("x@1")  # a full name wins
    with pytest.raises(DagMathError, match="no model 'zz'"):
        parse_side("zz", ["m"])
    with pytest.raises(DagMathError, match="no model 'm@x'"):
        parse_side("m@x", ["m"])
    with pytest.raises(DagMathError, match="both sides"):
        paired_outcomes(hand_frame(), Side("a"), Side("a"))


def test_design_note_only_for_sources_that_pair_by_design():
    assert design_note(["arith-word"]) is None
    assert "by design" in design_note(["thought-anchors", "x"])


# --------------------------------------------------------------------------- the command


def _independent_cells(records, side_a, side_b, rule="majority"):
    """{(dataset, problem): (answer cell, perfect cell)} from scored records, by hand."""
    tallies = defaultdict(lambda: [0, 0, 0])  # (side, dataset, problem) -> n, right, perfect
    for r in records:
        if r["final_correct"] is None:
            continue
        for name, (model, sample) in (("a", side_a), ("b", side_b)):
            if r["model"] == model and (sample is None or r["sample_id"] == sample):
                t = tallies[(name, r["dataset"], str(r["problem_id"]))]
                t[0] += 1
                t[1] += bool(r["final_correct"])
                t[2] += bool(r["final_correct"]) and bool(r["closed"])
    right = {"majority": lambda k, n: 2 * k > n, "any": lambda k, n: k > 0}[rule]
    names = {"both": (True, True), "only_a": (True, False), "only_b": (False, True)}
    out = {}
    for (side, ds, pid), (n, c, p) in tallies.items():
        if side != "a" or ("b", ds, pid) not in tallies:
            continue
        nb, cb, pb = tallies[("b", ds, pid)]
        cells = []
        for ka, kb in ((c, cb), (p, pb)):
            pair = (right(ka, n), right(kb, nb))
            cells.append(next((k for k, v in names.items() if v == pair), "neither"))
        out[(ds, pid)] = tuple(cells)
    return out


def _scored_records(capsys, tmp_path, *paths) -> list[dict]:
    out = tmp_path / "scored.jsonl"
    code, _, err = run(capsys, "score", *paths, "-o", out, "-q")
    assert code == 0, err
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("rule", ["majority", "any"])
def test_compare_on_the_bundled_data(capsys, tmp_path, rule):
    a, b = "sim-focus-2.4", "sim-focus-2.5-aversion-1.2"
    code, out, err = run(
        capsys, "compare", RUNS, "--models", f"{a},{b}", "--format", "json", "--rule", rule
    )
    assert code == 0, err
    got = json.loads(out)
    cells = {
        (p["dataset"], p["problem_id"]): (p["answer_cell"], p["perfect_cell"])
        for p in got["problems"]
    }
    records = _scored_records(capsys, tmp_path, RUNS)
    assert cells == _independent_cells(records, (a, None), (b, None), rule)
    # the bundled data: 30 problems in each of its two datasets, every model has all
    assert got["n_problems"] == 60 == len(cells)
    counts = got["counts"]["answer"]
    assert sum(counts.values()) == 60
    assert counts["only_a"] == sum(v[0] == "only_a" for v in cells.values())
    # the paired test is the Overview's: PASS@1(A) - PASS@1(B) over shared problems
    df = pd.DataFrame(records)
    for metric in ("pass_at_1", "prr"):
        want = metrics.paired_difference(df, a, b, metric=metric).difference
        assert got["differences"][metric]["estimate"] == pytest.approx(want.estimate)
        assert got["differences"][metric]["low"] == pytest.approx(want.low)
    assert got["note"] is None


@pytest.mark.shared
def test_compare_thought_anchors_correct_against_incorrect(capsys, tmp_path, thought_anchors):
    a, b = f"{TA_MODEL}@0", f"{TA_MODEL}@1"
    code, out, err = run(
        capsys, "compare", thought_anchors, "--models", f"{a},{b}", "--format", "json"
    )
    assert code == 0, err
    got = json.loads(out)
    records = _scored_records(capsys, tmp_path, thought_anchors)
    want = _independent_cells(records, (TA_MODEL, 0), (TA_MODEL, 1))
    cells = {
        (p["dataset"], p["problem_id"]): (p["answer_cell"], p["perfect_cell"])
        for p in got["problems"]
    }
    assert cells == want and len(cells) == 10
    assert "by design" in got["note"]
    # the table format says so too, above the counts
    code, out, _ = run(capsys, "compare", thought_anchors, "--models", f"{a},{b}")
    assert code == 0 and "note: Thought Anchors keeps one solution it marks correct" in out
    code, out, _ = run(
        capsys, "compare", thought_anchors, "--models", f"{a},{b}", "--format", "csv"
    )
    assert code == 0 and out.splitlines()[0].startswith("dataset,problem_id,answer_cell")
    assert len(out.splitlines()) == 11


@pytest.mark.shared
def test_thought_anchors_and_a_bundled_model_share_no_problem(capsys, thought_anchors):
    code, _, err = run(
        capsys,
        "compare",
        thought_anchors,
        RUNS / "sim-focus-2.4",
        "--models",
        f"{TA_MODEL},sim-focus-2.4",
    )
    assert code == 3
    assert "share no scored problem" in err


@pytest.mark.parametrize(
    ("models", "message"),
    [
        (None, "choose two with --models"),
        ("sim-focus-2.4", "two names separated by a comma"),
        ("sim-focus-2.4,nope", "no model 'nope'"),
        ("sim-focus-2.4,sim-focus-2.4", "both sides are sim-focus-2.4"),
    ],
)
def test_compare_usage_errors(capsys, models, message):
    args = ["compare", RUNS] + ([] if models is None else ["--models", models])
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") >= 1
