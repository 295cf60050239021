"""Tests for the bundled sample data and its builder (sample_data/build.py).

The shape checks take their ranges from the DAG-MATH paper (issue 12's table: Tables 1-4
and Figure 3 of arXiv 2510.19842), never from the code, and compute every number from the
scored data with the library.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pandas as pd
import pytest

from dagmath_viz.analysis.simulate import load_task_dag
from dagmath_viz.answers.check import extract_boxed
from dagmath_viz.bundled import MARKER_NAME, is_bundled_sample
from dagmath_viz.cli import main as dagmath_main
from dagmath_viz.schema import DagMathError


def simulate_main(argv: list[str]) -> int:
    """``dagmath simulate ARGV``: the command as a user runs it."""
    return dagmath_main(["simulate", *argv])


ROOT = Path(__file__).parents[1] / "sample_data"
RUNS = ROOT / "runs"
TASK_DAGS = sorted((ROOT / "task_dags").glob("*/problem_*.taskdag"))
ENDING = "The final answer is $\\boxed{"


def _load_builder():
    """sample_data/build.py is a repository tool, not part of the package: load it by path."""
    spec = importlib.util.spec_from_file_location("sample_data_build", ROOT / "build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


build = _load_builder()
AVERSION_MODELS = [m.name for m in build.SIM_MODELS if m.focus == build.FOCUS]
WEAK = [m.name for m in build.SIM_MODELS if m.focus != build.FOCUS]


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


# --------------------------------------------------------------------------- reproducibility


def test_rebuild_is_byte_for_byte_identical(tmp_path: Path) -> None:
    build.build(ROOT, tmp_path)
    for folder in build.BUILT_FOLDERS:
        fresh, committed = tree(tmp_path / folder), tree(ROOT / folder)
        assert sorted(fresh) == sorted(committed), folder
        assert [rel for rel in fresh if fresh[rel] != committed[rel]] == [], folder


def test_cli_with_the_documented_seed_reproduces_a_committed_file(tmp_path: Path) -> None:
    # README: seed "<model>/<dataset>/<problem_id>", 12 samples; focus and aversion are in
    # the model's name, which is the name `dagmath simulate` gives by default.
    task = ROOT / "task_dags" / "olympiad-lite" / "problem_215.taskdag"
    argv = [str(task), "--policy", "focused", "--focus", "2.5", "--wrong-sink-aversion", "0.9"]
    argv += ["--samples", "12", "--seed", "sim-focus-2.5-aversion-0.9/olympiad-lite/215"]
    assert simulate_main([*argv, "-o", str(tmp_path)]) == 0
    rel = "sim-focus-2.5-aversion-0.9/olympiad-lite/problem_215_all_samples.json"
    assert (tmp_path / rel).read_bytes() == (RUNS / rel).read_bytes()


def test_sample_data_is_under_15_mb() -> None:
    total = sum(p.stat().st_size for p in ROOT.rglob("*") if p.is_file())
    assert total < 15 * 1024 * 1024


def test_task_dags_are_not_read_as_a_model() -> None:
    from dagmath_viz.formats.discovery import load_paths

    loaded = load_paths([ROOT / "task_dags"])
    assert loaded.trajectories == [] or len(loaded.trajectories) == 0


# --------------------------------------------------------------------------- the builder


def test_parts_are_merged_and_answers_sorted(tmp_path: Path, monkeypatch) -> None:
    def extra(source: Path):
        return build.Part(
            files={"runs/gsm-x/gsm-logic/problem_1_all_samples.json": "[]\n"},
            answers=({"problem_id": 1, "dataset": "gsm-logic", "answer": "3", "difficulty": 1},),
        )

    monkeypatch.setattr(build, "PARTS", (build.build_gsm, extra))
    build.build(ROOT, tmp_path)
    answers = json.loads((tmp_path / "runs" / "answers.json").read_text(encoding="utf-8"))
    assert [a["dataset"] for a in answers] == ["gsm-logic"] * len(answers)
    assert [a["problem_id"] for a in answers] == sorted(a["problem_id"] for a in answers)
    assert (tmp_path / "runs/gsm-x/gsm-logic/problem_1_all_samples.json").read_text() == "[]\n"

    monkeypatch.setattr(build, "PARTS", (extra, extra))
    with pytest.raises(DagMathError, match="two parts"):
        build.build(ROOT, tmp_path)


def test_check_reports_a_changed_file(tmp_path: Path) -> None:
    copy = tmp_path / "sd"
    for rel, data in tree(ROOT).items():
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy / rel).write_bytes(data)
    target = copy / "runs" / "answers.json"
    target.write_bytes(target.read_bytes() + b" ")
    (copy / "runs" / "stray.json").write_text("[]", encoding="utf-8")
    assert build.check(copy) == [
        "not made by the build: runs/stray.json",
        "differs: runs/answers.json",
    ]
    assert build.main(["--source", str(copy), "--check"]) == 1


# --------------------------------------------------------------------------- the task DAGs


def test_thirty_problems_per_dataset_over_every_difficulty_group() -> None:
    by_dataset: dict[str, int] = {}
    groups = set()
    for path in TASK_DAGS:
        (record,) = json.loads(path.read_text(encoding="utf-8"))
        by_dataset[path.parent.name] = by_dataset.get(path.parent.name, 0) + 1
        assert path.name == f"problem_{record['problem_id']}.taskdag"
        groups.add(math.ceil(record["difficulty"]))
    assert by_dataset == {"arith-word": 30, "olympiad-lite": 30}
    assert groups == {1, 2, 3, 4, 5, 6}  # every difficulty group (k - 1, k] is used


def test_task_dag_sizes_25_to_40_with_a_tail_past_80() -> None:
    # Issue 12: task DAGs of 25-40 nodes and a tail past 80 (a few problems, not most).
    sizes = [len(json.loads(p.read_text(encoding="utf-8"))[0]["steps"]) for p in TASK_DAGS]
    tail = [n for n in sizes if n > 80]
    assert 1 <= len(tail) <= len(sizes) // 6
    assert all(25 <= n <= 40 for n in sizes if n <= 80)


def test_harder_problems_have_larger_task_dags() -> None:
    # Figure 3's shape comes from here: a harder problem has a longer derivation.
    by_group: dict[int, list[int]] = {}
    for path in TASK_DAGS:
        (record,) = json.loads(path.read_text(encoding="utf-8"))
        if len(record["steps"]) <= 80:
            by_group.setdefault(math.ceil(record["difficulty"]), []).append(len(record["steps"]))
    means = [sum(v) / len(v) for _, v in sorted(by_group.items())]
    assert means[-1] >= means[0] + 2


@pytest.mark.parametrize("path", TASK_DAGS[::7], ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_task_dag_shape(path: Path, answer_checker) -> None:
    (record,) = json.loads(path.read_text(encoding="utf-8"))
    steps = record["steps"]
    assert [s["step_id"] for s in steps] == list(range(1, len(steps) + 1))
    for s in steps:
        assert s["node"].strip() and s["edge"].strip()
        assert s["node"].count("$") % 2 == 0  # math stays inside $...$
    dag = load_task_dag(path)  # topological ids, known parents, a correct sink
    reference = record["final_answer"]
    (correct,) = dag.correct_sinks
    assert dag.nodes[correct].text == f"{ENDING}{reference}}}$."
    wrong = [v for v in dag.sinks if v != correct]
    assert len(wrong) >= 10  # traps with many wrong answers, and a branch's
    for v in wrong:
        assert not answer_checker.check(reference, extract_boxed(dag.nodes[v].text)).equivalent
        # every wrong sink cites a detour, so a walk of gold steps never sees one
        assert any(p not in dag.focus_set for p in dag.nodes[v].parents)
    children = dag.children
    assert max(len(c) for c in children) >= 4  # a pivot or a trap
    # a restatement: cites one gold step, says its numbers again, and feeds a detour
    restated = [
        v
        for v, node in enumerate(dag.nodes)
        if "again" in node.text and len(node.parents) == 1 and node.parents[0] in dag.focus_set
    ]
    assert restated and all(children[v] for v in restated)


# --------------------------------------------------------------------------- scored sample data


@pytest.fixture(scope="module")
def scored(answer_checker) -> pd.DataFrame:
    from dagmath_viz.formats.discovery import load_paths
    from dagmath_viz.score.reference import score_corpus

    loaded = load_paths([RUNS])
    assert not loaded.issues
    df = score_corpus(loaded.trajectories, checker=answer_checker)
    return df[df["model"].str.startswith("sim-")]


@pytest.fixture(scope="module")
def board(scored: pd.DataFrame) -> pd.DataFrame:
    from dagmath_viz.analysis.tables import leaderboard

    return leaderboard(scored, n_boot=0).set_index(["model", "dataset"])


def test_five_aversion_models_and_one_weak(scored: pd.DataFrame) -> None:
    assert len(AVERSION_MODELS) >= 5 and len(WEAK) == 1
    assert sorted(scored["model"].unique()) == sorted(AVERSION_MODELS + WEAK)
    per = scored.groupby(["model", "dataset"])["problem_id"].nunique()
    assert (per >= 30).all()


def test_shape_of_trajectories_matches_the_paper(scored: pd.DataFrame) -> None:
    # Paper Table 1, All cohort, per model and dataset: 15-37 nodes per trajectory on
    # average, a heavy tail (to 121); density 11-20 %; max out-degree 2.9-11.2. Issue 12
    # asks for at least: mean steps 14-40, largest >= 80, density 9-22 %. We hold every
    # model x dataset group to the paper's own ranges.
    means = scored.groupby(["model", "dataset"])[["n_nodes", "density", "max_out_degree"]].mean()
    assert len(means) == 12
    assert means["n_nodes"].between(15, 37).all(), means["n_nodes"]
    assert means["density"].between(0.11, 0.20).all(), means["density"]
    assert means["max_out_degree"].between(2.9, 11.2).all(), means["max_out_degree"]
    assert scored["n_nodes"].max() >= 80


def test_table1_cohorts_have_the_papers_ordering(scored: pd.DataFrame) -> None:
    # Paper Table 1 (issue 30): Incorrect graphs are the largest, sparsest and most branchy;
    # Correct slightly larger and sparser than Perfect; Perfect the smallest and densest. We
    # ask for each ordering in most model x dataset groups (at least 9 of 12), not in all.
    from dagmath_viz.analysis.tables import table1

    cells = table1(scored, by=["model", "dataset"]).set_index(["model", "dataset", "cohort"])
    groups = sorted({key[:2] for key in cells.index})
    assert len(groups) == 12

    def stat(group, cohort: str, name: str) -> float:
        return cells.at[(*group, cohort), name]

    nodes = sum(
        stat(g, "Incorrect", "n_nodes")
        > stat(g, "Correct", "n_nodes")
        > stat(g, "Perfect", "n_nodes")
        for g in groups
    )
    density = sum(
        stat(g, "Incorrect", "density")
        < stat(g, "Correct", "density")
        < stat(g, "Perfect", "density")
        for g in groups
    )
    branchy = sum(
        stat(g, "Incorrect", "max_out_degree")
        > max(stat(g, "Correct", "max_out_degree"), stat(g, "Perfect", "max_out_degree"))
        for g in groups
    )
    assert nodes >= 9, cells["n_nodes"]
    assert density >= 9, cells["density"]
    assert branchy >= 9, cells["max_out_degree"]


def test_max_out_degree_rises_with_difficulty(scored: pd.DataFrame) -> None:
    # Paper Figure 3: the graph statistics rise across difficulty groups, max out-degree
    # more sharply than max in-degree. Averaged over models: at most one step down between
    # neighbouring groups, and that one small (under 5 %); the hardest group well above the
    # easiest; and a larger relative rise than max in-degree's.
    from dagmath_viz.analysis.tables import graph_stats_by_difficulty

    per_model = graph_stats_by_difficulty(scored, by=["model"])
    groups = per_model.groupby("difficulty_group")[["max_out_degree", "max_in_degree"]].mean()
    assert list(groups.index) == [1, 2, 3, 4, 5, 6]
    out = groups["max_out_degree"].tolist()
    falls = [(a, b) for a, b in zip(out, out[1:], strict=False) if b < a]
    assert len(falls) <= 1 and all(b > 0.95 * a for a, b in falls), out
    assert out[-1] > 1.5 * out[0], out
    rise_out = out[-1] / out[0]
    rise_in = groups["max_in_degree"].iat[-1] / groups["max_in_degree"].iat[0]
    assert rise_out > rise_in, (rise_out, rise_in)


def test_pass_at_1_spreads_while_r_hat_stays_flat(board: pd.DataFrame) -> None:
    # Paper Table 2's Std row: across models, std of PASS@1 is 10.3 / 12.2 / 11.0 points
    # against 2.1 / 2.5 / 0.9 for R̂; we ask for at least 3x.
    for dataset in ("arith-word", "olympiad-lite"):
        part = board.xs(dataset, level="dataset")
        assert part["pass_at_1"].std(ddof=1) >= 3 * part["r_hat"].std(ddof=1), dataset


def test_gaps_and_pass_at_1_in_the_papers_range(board: pd.DataFrame) -> None:
    # Paper (issue 12's table): every gap Δ = PASS@1 - R̂ between 5 and 43 points, every
    # PASS@1 between 12 and 63 %. The issue's own looser bounds (3-50) follow.
    assert board["gap"].between(0.05, 0.43).all(), board["gap"]
    assert board["pass_at_1"].between(0.12, 0.63).all(), board["pass_at_1"]


def test_pass_at_1_and_r_hat_fall_with_difficulty(scored: pd.DataFrame) -> None:
    # Paper Figure 3: both rates fall as problems get harder. Groups k = 1..6 hold
    # difficulty (k - 1, k]; we ask the easier half to beat the harder half, and the
    # hardest group to sit well below the easiest (not a fall at every step).
    from dagmath_viz.analysis.tables import by_difficulty

    groups = by_difficulty(scored, by=["difficulty_group"]).set_index("difficulty_group")
    assert list(groups.index) == [1, 2, 3, 4, 5, 6]
    for rate in ("pass_at_1", "r_hat"):
        easy, hard = groups.loc[[1, 2, 3], rate].mean(), groups.loc[[4, 5, 6], rate].mean()
        assert easy > hard, rate
        assert groups.at[6, rate] < groups.at[1, rate] / 1.5, rate


def test_aversion_lifts_pass_at_1(board: pd.DataFrame) -> None:
    # With a fixed focus, raising the aversion lifts PASS@1 overall: the most averse model
    # beats the model without aversion on every dataset, and the weak model is last.
    for dataset in ("arith-word", "olympiad-lite"):
        part = board.xs(dataset, level="dataset")["pass_at_1"]
        assert part[AVERSION_MODELS[-1]] > part[AVERSION_MODELS[0]] + 0.10
        assert part[WEAK[0]] == part.min()


def test_at_least_ten_incorrect_per_model_and_dataset(scored: pd.DataFrame) -> None:
    incorrect = scored[scored["final_correct"].eq(False)].groupby(["model", "dataset"]).size()
    assert len(incorrect) == 12 and (incorrect >= 10).all()


def test_restatements_and_unused_givens_appear_as_dead_ends(scored: pd.DataFrame) -> None:
    from dagmath_viz.run.corpus import load_corpus

    corpus = load_corpus([RUNS])
    rows = corpus.scored.index[corpus.scored["model"].str.startswith("sim-")]
    restated = unused = 0
    for row in rows[:2000]:
        traj = corpus.trajectory(row)
        for pos in corpus.scored.at[row, "dead_ends"]:
            step = traj.steps[int(pos) - 1]
            restated += step.text.endswith("again.")
            unused += not step.parents
    assert restated >= 20 and unused >= 20


def test_unused_givens_share_of_dead_ends_is_near_the_papers() -> None:
    # Paper Appendix B: 2 of its 8 dead ends are unused givens. We ask for a share within
    # a factor of two of that (1/8 to 4/8), and for restatements to occur (issue 12).
    from dagmath_viz.analysis.deadends import dead_end_table
    from dagmath_viz.run.corpus import load_corpus

    corpus = load_corpus([RUNS])
    rows = corpus.scored.index[corpus.scored["model"].str.startswith("sim-")]
    table = dead_end_table(corpus.trajectory(row) for row in rows)
    share = table["category"].value_counts(normalize=True)
    assert 1 / 8 <= share["unused given"] <= 4 / 8, share
    assert share["restatement"] > 0, share


def test_illegal_cases_are_exactly_the_documented_ones(scored: pd.DataFrame) -> None:
    illegal = scored[scored["class"] == "illegal"]
    found = set(zip(illegal["model"], illegal["dataset"], illegal["problem_id"], strict=True))
    expected = {
        (case.model, dataset, str(ids[case.problem_index]))
        for case in build.ILLEGAL_CASES
        for dataset, ids, *_ in build.DATASETS
    }
    assert found == expected
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for model, dataset, pid in expected:
        assert f"runs/{model}/{dataset}/problem_{pid}_all_samples.json" in readme


def test_samples_carry_answer_difficulty_and_counts() -> None:
    answers = json.loads((RUNS / "answers.json").read_text(encoding="utf-8"))
    key = {(a["dataset"], a["problem_id"]): a for a in answers}
    assert len([k for k in key if k[0] != "gsm-logic"]) == len(TASK_DAGS)
    for path in sorted(RUNS.glob("sim-*/*/problem_*_all_samples.json"))[::11]:
        records = json.loads(path.read_text(encoding="utf-8"))
        entry = key[(path.parent.name, records[0]["problem_id"])]
        ids = [r["sample_id"] for r in records]
        assert ids in (list(range(12)), list(range(13)))
        for r in records:
            assert (r["answer"], r["difficulty"]) == (entry["answer"], entry["difficulty"])
            assert r["final_answer"] == r["steps"][-1]["text"]
            assert r["metadata"]["model"] == path.parent.parent.name


def test_bundled_data_is_labelled(tmp_path: Path) -> None:
    assert (RUNS / MARKER_NAME).is_file()
    assert is_bundled_sample([RUNS]) and is_bundled_sample([ROOT])
    assert is_bundled_sample([RUNS / "sim-focus-2.4" / "arith-word"])
    assert not is_bundled_sample([tmp_path]) and not is_bundled_sample([])


def test_readme_explains_the_data() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "simulated" in readme.lower()
    assert "python sample_data/build.py" in readme
    assert "exp(-aversion)" in readme


def test_gsm_set_both_lenses_agree() -> None:
    """The GSM part: every strategy answers right; the shortest proof is perfect reasoning
    (no detour, so no dead end), and DFS/BFS proofs, which detour, are never perfect on
    problems with irrelevant trees (DEFINITIONS.md §7)."""
    from dagmath_viz.run.corpus import load_corpus

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
