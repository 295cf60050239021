"""Tests for dagmath_viz.analysis.simulate and dagmath_viz.cli.simulate (DEFINITIONS.md §5).

Every expected value is derived by hand or in closed form in the comment next to it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from dagmath_viz.analysis.simulate import (
    ExactTooLargeError,
    Policy,
    TaskDagError,
    exact_rates,
    load_task_dag,
    monte_carlo_rates,
    parse_task_dag,
    sample_walks,
    simulate_samples,
    walk_outcome,
    walk_to_record,
    write_samples,
)
from dagmath_viz.cli import main as dagmath_main
from dagmath_viz.schema import DagMathError, UnsafePathError


def main(argv: list[str]) -> int:
    """``dagmath simulate ARGV``: the command as a user runs it."""
    return dagmath_main(["simulate", *argv])


RIGHT = "The final answer is $\\boxed{1}$."
WRONG = "The final answer is $\\boxed{0}$."


def gold(steps: list[tuple[list[int] | None, str]], answer: str = "1", pid: int = 7) -> list:
    """A gold-layout document; step i (1-based) gets parents ``steps[i-1][0]``."""
    return [
        {
            "problem_id": pid,
            "problem_text": "toy",
            "sample_id": 0,
            "final_answer": answer,
            "difficulty": 2,
            "domain": "Toy",
            "steps": [
                {"step_id": i, "edge": f"edge {i}", "direct_dependent_steps": p, "node": text}
                for i, (p, text) in enumerate(steps, start=1)
            ],
        }
    ]


def toy_doc(length: int) -> list:
    """Paper Figure 2: a source and two chains of ``length`` nodes each, counting the source.

    Step 1 is the source; steps 2..L the correct chain (sink L); steps L+1..2L-1 the wrong
    chain (sink 2L-1).
    """
    steps: list[tuple[list[int] | None, str]] = [(None, "source")]
    for chain, sink_text in ((0, RIGHT), (1, WRONG)):
        first = 2 + chain * (length - 1)
        for k in range(length - 1):
            node = first + k
            parent = 1 if k == 0 else node - 1
            steps.append(([parent], sink_text if k == length - 2 else f"chain {chain} step {k}"))
    return gold(steps)


def se(p: float, n: int) -> float:
    return math.sqrt(p * (1 - p) / n)


# --------------------------------------------------------------------------- the toy DAG


@pytest.mark.parametrize("length", range(2, 9))
def test_toy_dag_uniform_exact_matches_closed_form(length: int) -> None:
    # Each of the L-1 steps after the source picks the next correct node with chance 1/2.
    dag = parse_task_dag(toy_doc(length))
    exact = exact_rates(dag, Policy("uniform"))
    assert exact.prr == pytest.approx(0.5 ** (length - 1), rel=1e-12)
    assert exact.pass_at_1 == pytest.approx(0.5, rel=1e-12)


@pytest.mark.parametrize("length", range(2, 9))
def test_toy_dag_monte_carlo_within_four_standard_errors(length: int) -> None:
    dag = parse_task_dag(toy_doc(length))
    n = 20_000
    mc = monte_carlo_rates(dag, Policy("uniform"), n, seed=f"toy-{length}")
    prr, pass1 = 0.5 ** (length - 1), 0.5
    assert mc.n == n
    assert abs(mc.prr - prr) <= 4 * se(prr, n)
    assert abs(mc.pass_at_1 - pass1) <= 4 * se(pass1, n)
    assert mc.prr_se == pytest.approx(se(mc.prr, n))


@pytest.mark.parametrize(("length", "focus"), [(2, 0.5), (3, 0.5), (4, 2.0), (5, 2.0), (6, 1.0)])
def test_toy_dag_focused_is_a_race_of_bernoulli_steps(length: int, focus: float) -> None:
    # Every step picks the correct chain with p = e^f / (e^f + 1). Perfect: L-1 successes
    # in a row. Correct: L-1 successes before L-1 failures (negative binomial).
    p = math.exp(focus) / (math.exp(focus) + 1)
    m = length - 1
    pass1 = sum(math.comb(m - 1 + k, k) * p**m * (1 - p) ** k for k in range(m))
    exact = exact_rates(parse_task_dag(toy_doc(length)), Policy("focused", focus))
    assert exact.prr == pytest.approx(p**m, rel=1e-12)
    assert exact.pass_at_1 == pytest.approx(pass1, rel=1e-12)


# --------------------------------------------------------------------------- small hand DAGs


def detour_doc() -> list:
    # 1 given; 2 detour (parent 1); 3 correct sink (parent 1); 4 wrong sink (parent 2).
    return gold([(None, "g"), ([1], "detour"), ([1], RIGHT), ([2], WRONG)])


def test_detour_dag_uniform() -> None:
    # After 1: {2, 3}. Pick 3 (1/2): perfect. Pick 2 (1/2): then {3, 4}; 3 is correct but
    # 2 is a dead end (imperfect), 4 is wrong. PRR = 1/2, PASS@1 = 1/2 + 1/4 = 3/4.
    exact = exact_rates(parse_task_dag(detour_doc()), Policy())
    assert (exact.prr, exact.pass_at_1) == (pytest.approx(0.5), pytest.approx(0.75))


@pytest.mark.parametrize("focus", [0.0, 0.7, 3.0])
def test_detour_dag_focused(focus: float) -> None:
    # Node 3 (and 1) weigh e^f, nodes 2 and 4 weigh 1: p = e^f / (e^f + 1) at both choices.
    # PRR = p; PASS@1 = p + (1 - p) p.
    p = math.exp(focus) / (math.exp(focus) + 1)
    exact = exact_rates(parse_task_dag(detour_doc()), Policy("focused", focus))
    assert exact.prr == pytest.approx(p)
    assert exact.pass_at_1 == pytest.approx(p + (1 - p) * p)


def test_two_sources_start_anywhere() -> None:
    # Givens 1, 2; correct sink 3 needs both; wrong sink 4 needs 1.
    # Start 1 (1/2): {2, 4} -> 2 (1/2) then {3, 4}: 3 (1/2). Start 2 (1/2): {1} then {3, 4}.
    # PRR = PASS@1 = 1/2 * 1/2 * 1/2 + 1/2 * 1/2 = 3/8 (every correct walk is closed).
    doc = gold([(None, "g1"), (None, "g2"), ([1, 2], RIGHT), ([1], WRONG)])
    exact = exact_rates(parse_task_dag(doc), Policy())
    assert exact.prr == pytest.approx(3 / 8)
    assert exact.pass_at_1 == pytest.approx(3 / 8)


def test_two_correct_sinks_both_count() -> None:
    # 1 -> 2 (boxed 1), 1 -> 3 (boxed 1): every walk is 1 then a correct sink, closed.
    doc = gold([(None, "g"), ([1], RIGHT), ([1], "so $\\boxed{ 1 }$")])
    dag = parse_task_dag(doc)
    assert dag.correct_sinks == frozenset({1, 2})
    exact = exact_rates(dag, Policy("focused", 2.0))
    assert (exact.prr, exact.pass_at_1) == (pytest.approx(1.0), pytest.approx(1.0))


def test_exact_refuses_beyond_max_states() -> None:
    # 12 independent givens and one sink needing all: the walk visits the givens in any
    # order, so every subset of them is a state: 2^12 = 4096 states, and PRR = 1.
    doc = gold([(None, f"g{i}") for i in range(12)] + [(list(range(1, 13)), RIGHT)])
    dag = parse_task_dag(doc, source="wide.json")
    exact = exact_rates(dag, Policy(), max_states=4096)
    assert (exact.prr, exact.pass_at_1) == (pytest.approx(1.0), pytest.approx(1.0))
    assert exact.n_states == 4096
    with pytest.raises(ExactTooLargeError, match=r"wide\.json: .*more than 4,095 .*Monte-Carlo"):
        exact_rates(dag, Policy(), max_states=4095)
    assert issubclass(ExactTooLargeError, DagMathError)


# --------------------------------------------------------------------------- sinks (§5)


def unused_given_doc() -> list:
    # Givens 1 (used) and 2 (used by nothing); 3 <- 1; the answer 4 <- 3.
    return gold([(None, "g1"), (None, "g2 (unused)"), ([1], "step"), ([3], RIGHT)])


def test_an_unused_given_is_a_source_not_a_sink() -> None:
    # The only sink is 4: a sink has incoming edges (DEFINITIONS.md §5), and 2 has none.
    # Every walk ends at 4, so PASS@1 = 1. Perfect needs 2 never visited (it would be a
    # dead end): pick 1 from {1, 2} (1/2), then 3 from {2, 3} (1/2), then 4 from {2, 4}
    # (1/2): PRR = 1/8.
    dag = parse_task_dag(unused_given_doc())
    assert dag.sinks == (3,)
    exact = exact_rates(dag, Policy())
    assert exact.pass_at_1 == pytest.approx(1.0)
    assert exact.prr == pytest.approx(1 / 8)
    for walk in sample_walks(dag, Policy(), 200, seed="unused"):
        assert walk[-1] == 3  # no walk stops at the unused given


def test_cli_unused_given_case(tmp_path: Path, capsys) -> None:
    task = tmp_path / "task.json"
    task.write_text(json.dumps(unused_given_doc()), encoding="utf-8")
    assert main([str(task), "--policy", "uniform", "--exact"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "prr": pytest.approx(0.125),
        "pass_at_1": pytest.approx(1.0),
    }


# --------------------------------------------------------------------------- wrong-sink aversion


@pytest.mark.parametrize("focus", [0.0, 0.8])
def test_aversion_on_the_detour_dag_lifts_pass_at_1_not_prr(focus: float) -> None:
    # After 1: {2 (weight 1), 3 (e^f)}: 3 with p = e^f / (e^f + 1), perfect. Else after 2:
    # {3 (e^f), 4 (wrong sink, e^-b)}: 3 with q = e^f / (e^f + e^-b), imperfect.
    # PRR = p whatever b; PASS@1 = p + (1 - p) q, rising with b towards 1.
    dag = parse_task_dag(detour_doc())
    p = math.exp(focus) / (math.exp(focus) + 1)
    previous = -1.0
    for b in (0.0, 0.5, 1.0, 2.0, 4.0):
        exact = exact_rates(dag, Policy("focused", focus, aversion=b))
        q = math.exp(focus) / (math.exp(focus) + math.exp(-b))
        assert exact.prr == pytest.approx(p, rel=1e-12)
        assert exact.pass_at_1 == pytest.approx(p + (1 - p) * q, rel=1e-12)
        assert exact.pass_at_1 > previous
        previous = exact.pass_at_1


@pytest.mark.parametrize("length", [3, 4, 6])
def test_aversion_on_the_toy_dag_is_monotone(length: int) -> None:
    # A perfect walk runs the correct chain first, so it never has the wrong sink in its
    # admissible set: PRR = p^(L-1) for every b. A walk that finishes the wrong chain first
    # meets the wrong sink beside the correct chain's next node; aversion makes it skip the
    # wrong sink more often, so PASS@1 rises strictly with b, towards 1.
    dag = parse_task_dag(toy_doc(length))
    focus = 0.5
    p = math.exp(focus) / (math.exp(focus) + 1)
    results = [exact_rates(dag, Policy("focused", focus, aversion=b)) for b in (0, 1, 2, 3)]
    for r in results:
        assert r.prr == pytest.approx(p ** (length - 1), rel=1e-12)
    passes = [r.pass_at_1 for r in results]
    assert all(a < b for a, b in zip(passes, passes[1:], strict=False))
    assert exact_rates(dag, Policy("focused", focus, aversion=60.0)).pass_at_1 == pytest.approx(1.0)


def test_cli_wrong_sink_aversion(tmp_path: Path, capsys) -> None:
    task = write_doc(tmp_path, detour_doc())
    base = [str(task), "--policy", "focused", "--focus", "0", "--exact"]
    assert main([*base, "--wrong-sink-aversion", "1"]) == 0
    # p = 1/2, q = 1 / (1 + e^-1): PASS@1 = 1/2 + q/2.
    q = 1 / (1 + math.exp(-1))
    assert json.loads(capsys.readouterr().out) == {
        "prr": pytest.approx(0.5),
        "pass_at_1": pytest.approx(0.5 + q / 2),
    }
    # a usage error (README exit codes)
    assert main([str(task), "--policy", "uniform", "--exact", "--wrong-sink-aversion", "1"]) == 2
    assert "--policy focused" in capsys.readouterr().err
    out = tmp_path / "out"
    argv = [str(task), "--policy", "focused", "--wrong-sink-aversion", "2", "--samples", "3"]
    assert main([*argv, "-o", str(out)]) == 0
    assert (out / "sim-focus-1-aversion-2").is_dir()


# --------------------------------------------------------------------------- small DAGs, MC


SMALL_DAGS = {
    "toy-5": toy_doc(5),
    "detour": detour_doc(),
    "unused-given": unused_given_doc(),
}


@pytest.mark.parametrize("name", SMALL_DAGS)
@pytest.mark.parametrize(
    "policy", [Policy(), Policy("focused", 1.6), Policy("focused", 1.0, 2.0)], ids=lambda p: p.label
)
def test_exact_agrees_with_monte_carlo(name: str, policy: Policy) -> None:
    dag = parse_task_dag(SMALL_DAGS[name], source=name)
    exact = exact_rates(dag, policy)
    n = 20_000
    mc = monte_carlo_rates(dag, policy, n, seed=f"{name}/{policy.label}")
    assert abs(mc.prr - exact.prr) <= 4 * se(exact.prr, n) + 1e-12
    assert abs(mc.pass_at_1 - exact.pass_at_1) <= 4 * se(exact.pass_at_1, n) + 1e-12


# --------------------------------------------------------------------------- the rule itself

# Paper Figure 1 (DEFINITIONS.md §4), v1..v11 as steps 1..11; v10 answer 300, v11 answer 0.
FIG1 = gold(
    [
        (None, "v1"), (None, "v2"), (None, "v3"), ([1], "v4"), ([1], "v5"), ([1], "v6"),
        ([6], "v7"), ([3, 4, 7], "v8"), ([7], "v9"),
        ([2, 5, 8], "The final answer is $\\boxed{300}$."),
        ([3, 9], "The final answer is $\\boxed{0}$."),
    ],
    answer="300",
)  # fmt: skip


@pytest.mark.parametrize(
    ("walk", "expected"),
    [
        ([1, 2, 3, 4, 5, 6, 7, 8, 10], (True, True)),  # perfect
        ([1, 2, 3, 4, 5, 6, 7, 9, 8, 10], (True, False)),  # v9 a dead end
        ([1, 2, 3, 6, 7, 9, 11], (False, False)),  # wrong answer
    ],
    ids=["perfect", "imperfect", "wrong"],
)
def test_walk_outcome_on_figure_1(walk: list[int], expected: tuple[bool, bool]) -> None:
    dag = parse_task_dag(FIG1)
    assert walk_outcome(dag, [v - 1 for v in walk]) == expected


def test_walk_to_record_renumbers_in_trajectory_order() -> None:
    dag = parse_task_dag(FIG1)
    record = walk_to_record(dag, [v - 1 for v in (1, 2, 3, 6, 7, 9, 11)], 4, "m")
    # v1 v2 v3 v6 v7 v9 v11 become steps 1..7: v6 cites v1 -> [1]; v7 cites v6 -> [4];
    # v9 cites v7 -> [5]; v11 cites v3, v9 -> [3, 6].
    parents = [s["direct_dependent_steps"] for s in record["steps"]]
    assert parents == [None, None, None, [1], [4], [5], [3, 6]]
    assert [s["step_id"] for s in record["steps"]] == [1, 2, 3, 4, 5, 6, 7]
    assert record["steps"][3] == {
        "step_id": 4,
        "thinking": "edge 6",
        "direct_dependent_steps": [1],
        "text": "v6",
    }
    assert record["final_answer"] == "The final answer is $\\boxed{0}$."
    assert record["metadata"] == {"model": "m", "reasoning_content": ""}
    assert (record["problem_id"], record["sample_id"], record["answer"]) == (7, 4, "300")
    assert (record["difficulty"], record["domain"]) == (2, "Toy")


def test_sampled_walks_follow_the_rule() -> None:
    for name, doc in [*SMALL_DAGS.items(), ("fig1", FIG1)]:
        dag = parse_task_dag(doc)
        sinks = set(dag.sinks)
        for walk in sample_walks(dag, Policy("focused", 0.5, 1.0), 200, seed=name):
            assert not dag.nodes[walk[0]].parents  # starts at a source
            assert len(set(walk)) == len(walk)
            for t, v in enumerate(walk):
                assert set(dag.nodes[v].parents) <= set(walk[:t])  # admissible
            assert walk[-1] in sinks and not sinks & set(walk[:-1])  # first sink stops


def test_sampling_is_reproducible() -> None:
    dag = parse_task_dag(FIG1)
    first = simulate_samples(dag, Policy("focused", 1.0), 30, "s", "m")
    assert first == simulate_samples(dag, Policy("focused", 1.0), 30, "s", "m")
    assert first != simulate_samples(dag, Policy("focused", 1.0), 30, "t", "m")


def test_written_samples_score_as_expected(tmp_path: Path, answer_checker) -> None:
    from dagmath_viz.formats.discovery import load_paths
    from dagmath_viz.score.reference import score_corpus

    dag = parse_task_dag(FIG1)
    walks = [(1, 2, 3, 4, 5, 6, 7, 8, 10), (1, 2, 3, 4, 5, 6, 7, 9, 8, 10), (1, 2, 3, 6, 7, 9, 11)]
    records = [walk_to_record(dag, [v - 1 for v in w], i, "m") for i, w in enumerate(walks)]
    path = write_samples(records, tmp_path, "m", "d", dag.problem_id)
    assert path == tmp_path / "m" / "d" / "problem_7_all_samples.json"
    assert path.read_bytes().endswith(b"}\n]\n")
    loaded = load_paths([tmp_path])
    assert not loaded.issues
    df = score_corpus(loaded.trajectories, checker=answer_checker)
    assert list(df["class"]) == ["perfect", "imperfect", "incorrect"]
    assert list(df["dead_ends"][1]) == [8]  # v9, the 8th step of the imperfect walk
    assert set(df["model"]) == {"m"} and set(df["dataset"]) == {"d"}


def test_write_samples_refuses_unsafe_names(tmp_path: Path) -> None:
    with pytest.raises(UnsafePathError):
        write_samples([], tmp_path, "../up", "d", 1)
    with pytest.raises(UnsafePathError):
        write_samples([], tmp_path, "m", "d", "a/b")


# --------------------------------------------------------------------------- policies, input


@pytest.mark.parametrize(
    ("kind", "focus", "aversion"),
    [
        ("focused", -1.0, 0.0),
        ("focused", math.nan, 0.0),
        ("uniform", 1.0, 0.0),
        ("greedy", 0, 0.0),
        ("focused", 1.0, -0.5),
        ("focused", 1.0, math.inf),
        ("uniform", 0.0, 1.0),
    ],
)
def test_bad_policies(kind: str, focus: float, aversion: float) -> None:
    with pytest.raises(DagMathError):
        Policy(kind, focus, aversion)


def test_huge_focus_is_a_perfect_reasoner() -> None:
    dag = parse_task_dag(FIG1)
    exact = exact_rates(dag, Policy("focused", 1000.0))  # exp(-1000) underflows to 0
    assert (exact.prr, exact.pass_at_1) == (pytest.approx(1.0), pytest.approx(1.0))


BAD_DOCS = {
    "two records": [{}, {}],
    "not an object": [3],
    "no problem_id": [{"final_answer": "1", "steps": [{"step_id": 1, "node": RIGHT}]}],
    "no answer": [{"problem_id": 1, "steps": [{"step_id": 1, "node": RIGHT}]}],
    "no steps": [{"problem_id": 1, "final_answer": "1", "steps": []}],
    "step not object": [{"problem_id": 1, "final_answer": "1", "steps": ["x"]}],
    "node not text": [{"problem_id": 1, "final_answer": "1", "steps": [{"step_id": 1, "node": 5}]}],
    "forward parent": gold([([2], "a"), (None, RIGHT)]),
    "unknown parent": gold([(None, "a"), ([9], RIGHT)]),
    "duplicate id": [
        {
            "problem_id": 1,
            "final_answer": "1",
            "steps": [{"step_id": 1, "node": "a"}, {"step_id": 1, "node": RIGHT}],
        }
    ],
    "no correct sink": gold([(None, "a"), ([1], WRONG)]),
}


@pytest.mark.parametrize("doc", BAD_DOCS.values(), ids=BAD_DOCS.keys())
def test_bad_task_dags_are_refused_naming_the_source(doc: list) -> None:
    with pytest.raises(TaskDagError, match=r"^bad\.json: "):
        parse_task_dag(doc, source="bad.json")


def test_sink_matching_ignores_spaces_and_dollars() -> None:
    dag = parse_task_dag(gold([(None, "a"), ([1], "so $\\boxed{ 3 / 7 }$")], answer="$3/7$"))
    assert dag.correct_sinks == frozenset({1})


def test_load_task_dag_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text("[{", encoding="utf-8")
    with pytest.raises(TaskDagError, match=r"broken\.json: line 1, column 3: invalid JSON"):
        load_task_dag(bad)
    with pytest.raises(TaskDagError, match=r"missing\.json: no such file or folder$"):
        load_task_dag(tmp_path / "missing.json")


# --------------------------------------------------------------------------- command line


def write_doc(folder: Path, doc: list, name: str = "problem_7.json") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_cli_writes_the_official_layout(tmp_path: Path, capsys) -> None:
    task = write_doc(tmp_path / "dags" / "toyset", toy_doc(3))
    out = tmp_path / "out"
    argv = [str(task), "--policy", "focused", "--focus", "2", "--samples", "5", "--seed", "3"]
    assert main([*argv, "--model", "sim-x", "-o", str(out)]) == 0
    path = out / "sim-x" / "toyset" / "problem_7_all_samples.json"  # dataset: the DAG's folder
    records = json.loads(path.read_text(encoding="utf-8"))
    assert [r["sample_id"] for r in records] == [0, 1, 2, 3, 4]
    assert all(r["metadata"]["model"] == "sim-x" for r in records)
    assert capsys.readouterr().out == ""
    # Same seed, same bytes; the default model name says the policy.
    assert main([*argv, "--dataset", "other", "-o", str(out)]) == 0
    again = out / "sim-focus-2" / "other" / "problem_7_all_samples.json"
    assert json.loads(again.read_text(encoding="utf-8"))[0]["steps"] == records[0]["steps"]


def test_cli_exact_prints_only_the_json(tmp_path: Path, capsys) -> None:
    task = write_doc(tmp_path, toy_doc(3))
    assert main([str(task), "--policy", "uniform", "--exact"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out) == {"prr": pytest.approx(0.25), "pass_at_1": pytest.approx(0.5)}
    assert out.count("\n") == 1
    assert main([str(task), "--policy", "uniform", "--exact", "--samples", "200"]) == 0
    captured = capsys.readouterr()
    assert set(json.loads(captured.out)) == {"prr", "pass_at_1"}
    assert "monte carlo (200 samples" in captured.err


def test_cli_through_the_dagmath_command(tmp_path: Path, capsys) -> None:
    from dagmath_viz.cli import main as dagmath

    task = write_doc(tmp_path, toy_doc(2))
    assert dagmath(["simulate", str(task), "--policy", "uniform", "--exact"]) == 0
    assert json.loads(capsys.readouterr().out) == {"prr": 0.5, "pass_at_1": 0.5}


@pytest.mark.parametrize(
    ("doc", "extra", "needle", "code"),
    [
        ("[{", [], "invalid JSON", 1),
        (json.dumps(gold([(None, "a"), ([1], WRONG)])), [], "no sink", 1),
        (json.dumps(toy_doc(3)), ["-o", "x"], "drop -o", 2),  # usage errors exit 2
        (json.dumps(toy_doc(3)), ["--focus", "1"], "--policy focused", 2),
    ],
    ids=["invalid json", "no correct sink", "exact with output", "uniform with focus"],
)
def test_cli_bad_input_is_one_line(tmp_path: Path, capsys, doc: str, extra, needle, code) -> None:
    task = tmp_path / "task.json"
    task.write_text(doc, encoding="utf-8")
    assert main([str(task), "--policy", "uniform", "--exact", *extra]) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err and "Traceback" not in err
    if needle in ("invalid JSON", "no sink"):
        assert str(task) in err


def test_cli_missing_file_and_missing_options(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "nope.json"
    assert main([str(missing), "--policy", "uniform", "--exact"]) == 1
    assert str(missing) in capsys.readouterr().err
    task = write_doc(tmp_path, toy_doc(2))
    assert main([str(task), "--policy", "uniform"]) == 2  # neither --exact nor -o/--samples
    assert "--samples" in capsys.readouterr().err
    assert main([str(task)]) == 2  # argparse: --policy is required
    unsafe = ["--samples", "2", "-o", str(tmp_path / "out"), "--model", ".."]
    assert main([str(task), "--policy", "uniform", *unsafe]) == 1
    assert "model name" in capsys.readouterr().err
