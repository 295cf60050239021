"""Efficiency, edit distances, search-order distance and the report table."""

from __future__ import annotations

import math

import pytest

from dagmath_viz.logic import (
    Cont,
    ProgramError,
    efficiency,
    efficiency_table,
    format_table,
    levenshtein,
    normalized_levenshtein,
    search_order_distance,
)


@pytest.mark.parametrize(
    ("proof", "shortest", "axioms", "expected"),
    [
        # P = {a,b,c,d} (d twice), S = {a,b,c}: 3/4; non-axiom {c} of {c,d}; recall 3/3
        ("abcdd", "abc", "ab", (3 / 4, 1 / 2, 1.0, False)),
        # the shortest proof itself
        ("abc", "abc", "ab", (1.0, 1.0, 1.0, True)),
        # nothing written
        ("", "abc", "ab", (0.0, 0.0, 0.0, False)),
        # only axioms on both sides: the non-axiom variant has nothing to charge
        ("ab", "a", "ab", (1 / 2, 1.0, 1.0, False)),
        # a detour that skips a shortest-proof step: P = {a,x,c}, S = {a,b,c}: 2/3, recall 2/3;
        # non-axiom: {c} of {x,c} (the old |S|/|P| gave 3/3 = 1 here)
        ("axc", "abc", "a", (2 / 3, 1 / 2, 2 / 3, False)),
        # a bare goal: |S|/|P| was 3; precision is 1 (all it says is right), recall 1/3
        ("c", "abc", "ab", (1.0, 1.0, 1 / 3, False)),
    ],
)
def test_efficiency(proof, shortest, axioms, expected):
    e = efficiency(list(proof), list(shortest), list(axioms))
    assert (e.efficiency, e.efficiency_non_axiom, e.recall) == pytest.approx(expected[:3])
    assert e.exact_match is expected[3]


@pytest.mark.parametrize(
    ("a", "b", "d"),
    [("kitten", "sitting", 3), ("", "abc", 3), ("abc", "abc", 0), ("abc", "cab", 2), ("", "", 0)],
)
def test_levenshtein(a, b, d):
    assert levenshtein(a, b) == d
    assert levenshtein(b, a) == d


def test_normalized_levenshtein():
    assert normalized_levenshtein("kitten", "sitting") == pytest.approx(3 / 7)
    assert normalized_levenshtein("", "") == 0.0
    assert normalized_levenshtein("ab", "cd") == 1.0


def test_search_order_distance(eli_program):
    # DFS and BFS both prove one non-axiom theorem, Eli 8 (test_logic_chaining).
    r5, k, _ = eli_program.axioms
    e8 = Cont(("Eli",), "cats", 8)
    assert search_order_distance([r5, k, e8], eli_program) == {"dfs": 0.0, "bfs": 0.0}
    # an extra non-axiom theorem first: one insertion over two theorems
    extra = Cont(("Eli",), "cats", 8, 1)
    assert search_order_distance([extra, e8], eli_program) == {"dfs": 0.5, "bfs": 0.5}


def _rec(strategy, correct, eff, eff_na, irrelevant="trees", overlap="none", control=False):
    return {
        "strategy": strategy,
        "correct": correct,
        "efficiency": eff,
        "efficiency_non_axiom": eff_na,
        "irrelevant": irrelevant,
        "overlap": overlap,
        "control": control,
    }


def test_efficiency_table_groups_and_orders():
    records = [
        _rec("overlap", True, 0.5, 0.25, overlap="both"),
        _rec("dfs", True, 0.5, 0.5),
        _rec("dfs", False, 1.0, 0.0),
        _rec("shortest", True, 1.0, 1.0),
        _rec("dfs", True, 0.2, 0.1, control=True),
    ]
    t = efficiency_table(records)
    assert list(t.columns) == [
        "strategy",
        "irrelevant",
        "overlap",
        "control",
        "n",
        "accuracy",
        "efficiency",
        "efficiency_non_axiom",
        "recall",
        "exact_match",
    ]
    assert list(zip(t.strategy, t.overlap, t.control, strict=True)) == [
        ("shortest", "none", False),
        ("dfs", "none", False),
        ("overlap", "both", False),
        ("dfs", "none", True),
    ]
    dfs = t.iloc[1]
    # efficiency is scored on correct answers (DEFINITIONS.md §6): the wrong dfs proof counts
    # in n and accuracy only, so the means are those of the one correct proof (0.5, 0.5)
    assert (dfs.n, dfs.accuracy, dfs.efficiency, dfs.efficiency_non_axiom) == (2, 0.5, 0.5, 0.5)
    assert math.isnan(dfs.recall)  # no record carries recall


def test_efficiency_table_empty_and_bad():
    assert efficiency_table([]).empty
    assert format_table(efficiency_table([])) == "(no proof records)"
    with pytest.raises(ProgramError, match="record 0: missing"):
        efficiency_table([{"strategy": "dfs"}])


def test_format_table_shows_percent():
    text = format_table(efficiency_table([_rec("dfs", True, 0.5, math.nan)]))
    assert "100.0" in text and "50.0" in text and "—" in text


def test_model_proofs_beside_the_strategies():
    from dagmath_viz.logic import model_proof_summary

    strategies = [
        {"strategy": "dfs", "correct": True, "efficiency": 0.5, "recall": 1.0,
         "exact_match": False},
        {"strategy": "dfs", "correct": True, "efficiency": 0.7, "recall": 1.0,
         "exact_match": False},
        {"strategy": "shortest", "correct": True, "efficiency": 1.0, "recall": 1.0,
         "exact_match": True},
    ]  # fmt: skip
    scored = [
        {"model": "m", "correct": True, "efficiency": 0.8, "recall": 0.5, "exact_match": False},
        # a wrong answer: counted in accuracy, not in the rates
        {"model": "m", "correct": False, "efficiency": None, "recall": None},
        {"id": 3, "error": "cannot read sentence 1"},
    ]
    t = model_proof_summary(strategies, scored)
    assert list(t["reasoner"]) == ["shortest", "dfs", "m"]
    assert list(t["kind"]) == ["strategy", "strategy", "model"]
    dfs, m = t.iloc[1], t.iloc[2]
    assert dfs["n"] == 2 and dfs["efficiency"] == pytest.approx(0.6)
    assert m["n"] == 2 and m["accuracy"] == 0.5
    assert m["efficiency"] == pytest.approx(0.8) and m["recall"] == pytest.approx(0.5)
    assert t.iloc[0]["exact_match"] == 1.0 and m["exact_match"] == 0.0


def test_overlap_bars_note_counts_problems_and_says_whether_they_are_paired(tmp_path):
    """The by-overlap chart's caption. The bundled set has two problems per structure ×
    overlap cell, drawn separately (sample_data/README.md: 'two problems per cell'); a
    ``gsm generate --paired`` file has each problem in all four overlaps, renamed only."""
    import json
    from pathlib import Path

    from dagmath_viz.cli.gsm import main
    from dagmath_viz.logic import overlap_bars_note, read_jsonl

    bundled = read_jsonl(Path(__file__).parents[2] / "sample_data" / "gsm" / "proofs.jsonl")
    note = overlap_bars_note(bundled, "tree")
    assert note.startswith("Each bar is the mean over 2 problems, and each overlap has")
    assert "says little" in note
    problems, proofs = tmp_path / "p.jsonl", tmp_path / "s.jsonl"
    gen = ["generate", "--problems", "3", "--seed", "4", "--irrelevant", "axiom", "--paired"]
    assert main([*gen, "-o", str(problems), "-q"]) == 0
    assert len(problems.read_text().splitlines()) == 12  # 3 problems × 4 overlaps
    assert main(["solve", "--strategy", "all", str(problems), "-o", str(proofs), "-q"]) == 0
    records = [json.loads(line) for line in proofs.read_text().splitlines()]
    paired = overlap_bars_note(records, "axiom")
    assert paired.startswith("Each bar is the mean over 3 problems, the same problems")
    assert overlap_bars_note(records, "trees") == "No problem with this structure."
    # 12 problems a bar: no warning about few problems
    many = [{**r, "problem_id": f"{r['problem_id']}-{k}"} for k in range(4) for r in records]
    assert "says little" not in overlap_bars_note(many, "axiom")


def test_efficiency_figure_writes_n_on_every_bar():
    from pathlib import Path

    from dagmath_viz.draw.figures import efficiency_figure
    from dagmath_viz.logic import read_jsonl

    proofs = read_jsonl(Path(__file__).parents[2] / "sample_data" / "gsm" / "proofs.jsonl")
    fig = efficiency_figure(efficiency_table(proofs), "tree")
    assert "problems per bar" in fig.layout.title.text
    for trace in fig.data:  # one trace per overlap, a bar per strategy, 2 problems each
        assert list(trace.text) == [2, 2, 2, 2] and trace.texttemplate == "n=%{text}"
