"""``dagmath report`` on the bundled and shared sources (issue 30): groups with no difficulty,
the folder that holds both lenses, the paper's Table 1, the interval option's names."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from dagmath_viz.cli import main
from dagmath_viz.schema import COHORTS

REPO = Path(__file__).parents[1]
SAMPLE = REPO / "sample_data"
#: sample_data/README.md: 6 simulated models x 60 problems x 12 samples, plus one illegal
#: sample in each of 6 files; the GSM set: 4 strategies x 26 problems, one proof each.
SIM_TRAJECTORIES = 6 * 60 * 12 + 6
GSM_TRAJECTORIES = 4 * 26
TABLE1_STATS = ["n_nodes", "n_edges", "density_percent", "max_in_degree", "max_out_degree"]


def report_json(capsys, *args: str | Path) -> tuple[int, list[dict], str]:
    code = main(["report", *map(str, args), "--format", "json", "-q"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err, err
    return code, json.loads(out), err


def test_by_difficulty_group_json_on_the_whole_sample_folder(capsys) -> None:
    # The GSM exports carry no difficulty: their group is null (it crashed on pd.NA).
    code, rows, _err = report_json(capsys, SAMPLE, "--by", "model,difficulty_group")
    assert code == 0
    assert {r["difficulty_group"] for r in rows} == {None, 1, 2, 3, 4, 5, 6}
    assert sum(r["n_trajectories"] for r in rows) == SIM_TRAJECTORIES + GSM_TRAJECTORIES
    gsm = [r for r in rows if r["model"].startswith("gsm-")]
    assert len(gsm) == 4 and all(r["difficulty_group"] is None for r in gsm)


def test_the_gsm_logic_files_are_not_read_as_trajectories(capsys) -> None:
    # sample_data/gsm/{problems,proofs}.jsonl hold 26 + 104 logic-program records: they were
    # read as 130 illegal trajectories of models "problems" and "proofs".
    code = main(["report", str(SAMPLE), "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0
    rows = json.loads(out)
    assert {r["model"] for r in rows}.isdisjoint({"problems", "proofs"})
    assert sum(r["class_counts"]["illegal"] for r in rows) == 6  # the six made on purpose
    for name in ("problems.jsonl", "proofs.jsonl"):
        assert f"warning: {SAMPLE / 'gsm' / name}: skipped: logic-program records" in err


@pytest.mark.shared
def test_by_difficulty_group_json_on_the_shared_sources(capsys, shared_data: Path) -> None:
    # dagmath-fewshot: 4 solutions + 4 gold files, no difficulty anywhere (one null group).
    code, rows, _ = report_json(capsys, shared_data, "--by", "model,difficulty_group")
    assert code == 0
    assert [r["difficulty_group"] for r in rows] == [None, None]
    assert sum(r["n_trajectories"] for r in rows) == 8
    # Thought Anchors: 10 MATH Level-5 problems, a correct and an incorrect chain each.
    anchors = shared_data.parent / "thought-anchors"
    code, rows, _ = report_json(capsys, anchors, "--by", "model,difficulty_group")
    assert code == 0
    assert [(r["difficulty_group"], r["n_problems"], r["n_trajectories"]) for r in rows] == [
        (5, 10, 20)
    ]
    assert rows[0]["pass_at_1"] == 0.5


def test_no_intervals_and_the_deprecated_bootstrap_name(capsys) -> None:
    runs = SAMPLE / "runs" / "sim-focus-2.4"
    code, rows, err = report_json(capsys, runs, "--no-intervals")
    assert code == 0 and all("r_hat_ci" not in r for r in rows) and "deprecated" not in err
    code = main(["report", str(runs), "--format", "json", "--bootstrap", "0"])
    out, err = capsys.readouterr()
    assert code == 0 and json.loads(out) == rows
    assert "warning: --bootstrap N is deprecated; use --intervals or --no-intervals" in err
    code, with_ci, _ = report_json(capsys, runs)
    assert all(0.0 <= r["r_hat_ci"][0] < r["r_hat_ci"][1] <= 1.0 for r in with_ci)


def test_pooled_groups_flag_few_problems(capsys) -> None:
    # --by difficulty_group pools the six simulated models: a group of 7 problems has
    # 42 model x problem rows, but it rests on 7 problems.
    code, rows, _ = report_json(capsys, SAMPLE / "runs", "--by", "difficulty_group")
    assert code == 0
    assert [r["small_sample"] for r in rows] == [r["n_problems"] < 20 for r in rows]
    assert any(r["small_sample"] for r in rows)


@pytest.mark.shared
@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_table1_on_the_fewshot_solutions(capsys, shared_data: Path, fmt: str) -> None:
    # Hand counts of the four solutions (tests/test_scoring.py FEWSHOT_STATS): N 22, 26, 25,
    # 38; E 30, 34, 36, 65; density 60/462, 68/650, 72/600, 130/1406; max in 4, 4, 3, 6;
    # max out 3, 3, 4, 5. All four are perfect, so All = Correct = Perfect, Incorrect empty.
    code = main(["report", str(shared_data), "--table", "table1", "--format", fmt, "-q"])
    out, _ = capsys.readouterr()
    assert code == 0
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert list(rows[0]) == ["model", "dataset", "cohort", "n", *TABLE1_STATS]
    else:
        rows = json.loads(out)
    assert [(r["model"], r["cohort"]) for r in rows] == [
        (m, c) for m in ("dagmath-authors-fewshot", "gold") for c in COHORTS
    ]
    density = 100 * (60 / 462 + 68 / 650 + 72 / 600 + 130 / 1406) / 4
    for r in rows:
        if r["cohort"] == "Incorrect":
            assert int(r["n"]) == 0 and r["n_nodes"] in ("", None)
            continue
        assert int(r["n"]) == 4
        values = [float(r[s]) for s in TABLE1_STATS]
        assert values == pytest.approx([111 / 4, 165 / 4, density, 17 / 4, 15 / 4])


def test_table1_as_text_prints_one_decimal_and_a_dash(capsys) -> None:
    # gsm-shortest: every proof is the shortest one, so perfect: Incorrect is empty.
    code = main(["report", str(SAMPLE / "runs" / "gsm-shortest"), "--table", "table1", "-q"])
    out, _ = capsys.readouterr()
    assert code == 0
    header, *lines = out.splitlines()
    assert header.split() == ["model", "dataset", "cohort", "n", *TABLE1_STATS]
    incorrect = next(line for line in lines if " Incorrect " in line).split()
    assert incorrect[3:] == ["0", "–", "–", "–", "–", "–"]
    all_row = next(line for line in lines if " All " in line).split()
    assert all(len(v.split(".")[1]) == 1 for v in all_row[4:])


@pytest.mark.shared
def test_the_default_table_fits_a_terminal_and_wide_keeps_every_column(capsys, shared_data):
    # The four few-shot solutions are perfect (the shared data's README): PASS@1 = R̂ = 100 %,
    # gap 0; four problems are fewer than the 20 the intervals want, so the row says so.
    source = ["report", str(shared_data / "fewshot_solutions.json")]
    source += ["--answers", str(shared_data / "answers.json"), "-q"]
    assert main(source) == 0
    out = capsys.readouterr().out.splitlines()
    assert max(map(len, out)) <= 150
    header, row = out[0].split(), out[1]
    assert header[:4] == ["model", "dataset", "problems", "trajectories"]
    assert "PASS@1 % [95% CI]" in out[0] and "pass_at_1_low" not in out[0]
    assert row.split()[2:5] == ["4", "4", "100.0"]
    assert row.rstrip().endswith("few problems")
    assert main([*source, "--wide"]) == 0
    wide = capsys.readouterr().out.splitlines()[0].split()
    assert {"pass_at_1_low", "pass_at_1_high", "n_scored", "perfect", "illegal"} <= set(wide)


def test_logic_program_strategies_are_noted_not_ranked_as_models(capsys) -> None:
    """The four GSM strategies (sample_data/README.md: exported by gsm export, domain
    gsm-logic) are noted in the text table; the six simulated models are not."""
    code = main(["report", str(SAMPLE / "runs"), "--no-intervals", "-q"])
    out, _ = capsys.readouterr()
    assert code == 0
    lines = out.splitlines()[1:]
    noted = sorted(line.split()[0] for line in lines if "logic-program strategy" in line)
    assert noted == ["gsm-bfs", "gsm-dfs", "gsm-overlap", "gsm-shortest"]
    assert len(lines) == 12 + 4  # 6 models × 2 data sets, and the strategies after them
    assert all(line.split()[0].startswith("sim-") for line in lines[:12])


def test_split_logic_strategies_by_hand() -> None:
    import pandas as pd

    from dagmath_viz.analysis.tables import logic_strategy_models, split_logic_strategies

    df = pd.DataFrame(
        {
            "model": ["A", "A", "B", "B", "C"],
            # A: every trajectory an exported strategy proof; B: one is; C: a model's proof
            "domain": ["gsm-logic", "gsm-logic", "gsm-logic", None, "gsm-logic-model-proof"],
        }
    )
    assert logic_strategy_models(df) == {"A"}
    models, strategies = split_logic_strategies(df)
    assert list(models["model"]) == ["B", "B", "C"] and list(strategies["model"]) == ["A", "A"]
    # a folder of strategies alone: nothing split off, they are what is shown
    alone, none = split_logic_strategies(df[df["model"] == "A"])
    assert len(alone) == 2 and none.empty
    assert logic_strategy_models(df.drop(columns="domain")) == set()


def test_a_models_exported_proofs_are_a_model_not_a_strategy(tmp_path, capsys) -> None:
    """score-proofs --export writes a model's proofs: domain gsm-logic-model-proof, so the
    report lists them as a model (gsm export's strategies carry gsm-logic)."""
    from dagmath_viz.cli.gsm import main as gsm_main

    proofs = tmp_path / "p.jsonl"
    proofs.write_text(
        json.dumps(
            {
                "id": 1,
                "model": "llama",
                "text": "Ann has 3 kites. Bo has 2 kites more than Ann. "
                "How many kites does Bo have?",
                "proof": "Ann has 3 kites. Bo has 2 kites more than Ann. So Bo has 5 kites.",
            }
        )
        + "\n",
        "utf-8",
    )
    runs = tmp_path / "runs"
    assert gsm_main(["score-proofs", str(proofs), "-o", str(tmp_path / "s.jsonl"), "--export",
                     str(runs), "-q"]) == 0  # fmt: skip
    (path,) = runs.rglob("*.json")
    assert json.loads(path.read_text("utf-8"))[0]["domain"] == "gsm-logic-model-proof"
    code = main(["report", str(runs), str(SAMPLE / "runs" / "gsm-bfs"), "--no-intervals", "-q"])
    out, _ = capsys.readouterr()
    assert code == 0
    (llama,) = [line for line in out.splitlines() if line.split()[0] == "llama"]
    (bfs,) = [line for line in out.splitlines() if line.split()[0] == "gsm-bfs"]
    assert "strategy" not in llama and "logic-program strategy" in bfs
