"""Tests for the bundled sample data and its builder (dagmath_viz/sample_data.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from dagmath_viz import sample_data
from dagmath_viz.answers import extract_boxed
from dagmath_viz.cli import main as dagmath_main
from dagmath_viz.schema import DagMathError
from dagmath_viz.simulate import load_task_dag


def simulate_main(argv: list[str]) -> int:
    """``dagmath simulate ARGV``: the command as a user runs it."""
    return dagmath_main(["simulate", *argv])


ROOT = Path(__file__).parents[1] / "sample_data"
RUNS = ROOT / "runs"
TASK_DAGS = sorted((ROOT / "task_dags").glob("*/problem_*.json"))
SIM_ORDER = ["sim-focus-1.0", "sim-focus-1.6", "sim-focus-2.2"]  # increasing focus
# The illegal trajectories written on purpose (README), as (model, dataset, problem, sample).
EXPECTED_ILLEGAL = {
    ("sim-focus-1.0", "arith-word", "101", 12),
    ("sim-focus-1.0", "olympiad-lite", "201", 12),
    ("sim-focus-1.6", "arith-word", "102", 12),
    ("sim-focus-1.6", "olympiad-lite", "202", 12),
    ("sim-focus-2.2", "arith-word", "103", 12),
    ("sim-focus-2.2", "olympiad-lite", "203", 12),
}
ENDING = "The final answer is $\\boxed{"


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


# --------------------------------------------------------------------------- reproducibility


def test_rebuild_is_byte_for_byte_identical(tmp_path: Path) -> None:
    sample_data.build(ROOT, tmp_path)
    fresh, committed = tree(tmp_path / "runs"), tree(RUNS)
    assert sorted(fresh) == sorted(committed)
    differing = [rel for rel in fresh if fresh[rel] != committed[rel]]
    assert differing == []
    assert sample_data.check(ROOT) == []


def test_cli_with_the_documented_seed_reproduces_a_committed_file(tmp_path: Path) -> None:
    # README: seed "<model>/<dataset>/<problem_id>", 12 samples, focus from the model name.
    task = ROOT / "task_dags" / "arith-word" / "problem_104.json"
    argv = [str(task), "--policy", "focused", "--focus", "1.6", "--samples", "12"]
    argv += ["--seed", "sim-focus-1.6/arith-word/104", "--model", "sim-focus-1.6"]
    assert simulate_main([*argv, "-o", str(tmp_path)]) == 0
    made = tmp_path / "sim-focus-1.6" / "arith-word" / "problem_104_all_samples.json"
    assert (
        made.read_bytes()
        == (RUNS / "sim-focus-1.6/arith-word/problem_104_all_samples.json").read_bytes()
    )


def test_sample_data_is_small() -> None:
    total = sum(p.stat().st_size for p in ROOT.rglob("*") if p.is_file())
    assert total < 5 * 1024 * 1024


def test_files_are_canonical_json() -> None:
    for rel, data in tree(RUNS).items():
        text = data.decode("utf-8")
        assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n", rel


# --------------------------------------------------------------------------- the builder


def test_parts_are_merged_and_answers_sorted(tmp_path: Path, monkeypatch) -> None:
    def extra(source: Path) -> sample_data.Part:
        return sample_data.Part(
            files={"runs/gsm-x/gsm-logic/problem_1_all_samples.json": "[]\n"},
            answers=({"problem_id": 1, "dataset": "gsm-logic", "answer": "3", "difficulty": 1},),
        )

    monkeypatch.setattr(sample_data, "PARTS", (*sample_data.PARTS, extra))
    sample_data.build(ROOT, tmp_path)
    answers = json.loads((tmp_path / "runs" / "answers.json").read_text(encoding="utf-8"))
    datasets = [a["dataset"] for a in answers]
    assert datasets == sorted(datasets) and "gsm-logic" in datasets
    assert (tmp_path / "runs/gsm-x/gsm-logic/problem_1_all_samples.json").read_text() == "[]\n"

    monkeypatch.setattr(sample_data, "PARTS", (extra, extra))
    with pytest.raises(DagMathError, match="two parts"):
        sample_data.build(ROOT, tmp_path)


def test_check_reports_a_changed_file(tmp_path: Path) -> None:
    copy = tmp_path / "sd"
    for rel, data in tree(ROOT).items():
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy / rel).write_bytes(data)
    target = copy / "runs" / "answers.json"
    target.write_bytes(target.read_bytes() + b" ")
    (copy / "runs" / "stray.json").write_text("[]", encoding="utf-8")
    assert sample_data.check(copy) == [
        "not made by the build: runs/stray.json",
        "differs: runs/answers.json",
    ]
    assert sample_data.main(["--source", str(copy), "--check"]) == 1


# --------------------------------------------------------------------------- the task DAGs


def test_two_datasets_of_six_problems_over_difficulties_one_to_six() -> None:
    by_dataset: dict[str, int] = {}
    groups = set()
    for path in TASK_DAGS:
        (record,) = json.loads(path.read_text(encoding="utf-8"))
        by_dataset[path.parent.name] = by_dataset.get(path.parent.name, 0) + 1
        assert 1 <= record["difficulty"] <= 6
        assert isinstance(record["domain"], str) and record["domain"]
        assert path.name == f"problem_{record['problem_id']}.json"
        groups.add(math.ceil(record["difficulty"]))
    assert by_dataset == {"arith-word": 6, "olympiad-lite": 6}
    assert groups == {1, 2, 3, 4, 5, 6}  # every difficulty group (k - 1, k] is used


@pytest.mark.parametrize("path", TASK_DAGS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_task_dag_shape(path: Path, answer_checker) -> None:
    (record,) = json.loads(path.read_text(encoding="utf-8"))
    steps = record["steps"]
    assert [s["step_id"] for s in steps] == list(range(1, len(steps) + 1))
    assert len(steps) <= 20
    for s in steps:
        assert s["node"].strip() and s["edge"].strip()
        for text in (s["node"], s["edge"]):
            assert text.count("$") % 2 == 0, (s["step_id"], text)  # math stays inside $...$
    dag = load_task_dag(path)  # topological ids, known parents, a correct sink
    reference = record["final_answer"]
    (correct,) = dag.correct_sinks
    assert dag.nodes[correct].text.endswith(f"{ENDING}{reference}}}$.")
    wrong = [v for v in dag.sinks if v != correct]
    assert wrong, "every task DAG has a wrong branch"
    for v in wrong:
        text = dag.nodes[v].text
        assert text.endswith("}$.") and ENDING in text
        assert not answer_checker.check(reference, extract_boxed(text)).equivalent
    detours = [v for v in range(len(dag.nodes)) if v not in dag.focus_set and v not in wrong]
    assert len(detours) >= 4  # restatement, commentary, alternative and wrong-branch steps


# --------------------------------------------------------------------------- scored sample data


@pytest.fixture(scope="module")
def scored(answer_checker) -> pd.DataFrame:
    from dagmath_viz.loading import load_paths
    from dagmath_viz.scoring import score_corpus

    loaded = load_paths([RUNS])
    assert not loaded.issues
    df = score_corpus(loaded.trajectories, checker=answer_checker)
    return df[df["model"].str.startswith("sim-")]


def test_every_model_shows_all_four_classes(scored: pd.DataFrame) -> None:
    assert sorted(scored["model"].unique()) == SIM_ORDER
    for model, part in scored.groupby("model"):
        assert set(part["class"]) == {"perfect", "imperfect", "incorrect", "illegal"}, model


def test_illegal_cases_are_exactly_the_documented_ones(scored: pd.DataFrame) -> None:
    illegal = scored[scored["class"] == "illegal"]
    columns = [illegal[c] for c in ("model", "dataset", "problem_id", "sample_id")]
    found = set(zip(*columns, strict=True))
    assert found == EXPECTED_ILLEGAL
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for model, dataset, pid, _ in EXPECTED_ILLEGAL:
        assert f"runs/{model}/{dataset}/problem_{pid}_all_samples.json" in readme


def test_larger_focus_gives_larger_r_hat(scored: pd.DataFrame) -> None:
    # R̂ = mean over problems of the problem's share of perfect samples (DEFINITIONS.md §2).
    per_problem = scored.groupby(["model", "dataset", "problem_id"])["perfect"].mean()
    r_hat = per_problem.groupby("model").mean()
    values = [r_hat[m] for m in SIM_ORDER]
    assert values == sorted(values) and len(set(values)) == 3
    assert values[0] > 0


def test_samples_carry_answer_difficulty_and_counts() -> None:
    answers = json.loads((RUNS / "answers.json").read_text(encoding="utf-8"))
    key = {(a["dataset"], a["problem_id"]): a for a in answers}
    assert len([k for k in key if k[0] != "gsm-logic"]) == len(TASK_DAGS)
    for path in sorted(RUNS.glob("sim-*/*/problem_*_all_samples.json")):
        records = json.loads(path.read_text(encoding="utf-8"))
        entry = key[(path.parent.name, records[0]["problem_id"])]
        ids = [r["sample_id"] for r in records]
        assert ids in (list(range(12)), list(range(13)))
        for r in records:
            assert (r["answer"], r["difficulty"]) == (entry["answer"], entry["difficulty"])
            assert r["final_answer"] == r["steps"][-1]["text"]
            assert r["metadata"]["model"] == path.parent.parent.name


def test_readme_explains_the_data() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "simulated" in readme.lower()
    assert "python -m dagmath_viz.sample_data" in readme
    assert "exp(focus)" in readme


def test_gsm_set_both_lenses_agree() -> None:
    """The GSM part: every strategy answers right; the shortest proof is perfect reasoning
    (no detour, so no dead end), and DFS/BFS proofs, which detour, are never perfect on
    problems with irrelevant trees (DEFINITIONS.md §7)."""
    from dagmath_viz.corpus import load_corpus

    df = load_corpus([RUNS]).scored
    gsm = df[df["dataset"] == "gsm-logic"]
    assert set(gsm["model"]) == {"gsm-shortest", "gsm-dfs", "gsm-bfs", "gsm-overlap"}
    assert gsm["final_correct"].all()
    assert (gsm.loc[gsm["model"] == "gsm-shortest", "class"] == "perfect").all()
    proofs = [json.loads(line) for line in (ROOT / "gsm" / "proofs.jsonl").open()]
    trees = {p["problem_id"] for p in proofs if p["irrelevant"] == "trees"}
    searched = gsm[
        gsm["model"].isin(["gsm-dfs", "gsm-bfs"]) & gsm["problem_id"].isin([str(t) for t in trees])
    ]
    assert len(searched) == 2 * len(trees) and not searched["perfect"].any()
