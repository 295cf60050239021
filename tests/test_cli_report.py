"""``dagmath report`` on the bundled and shared sources (issue 30): groups with no difficulty,
the folder that holds both lenses, the paper's Table 1, the interval option's names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagmath_viz.cli import main

REPO = Path(__file__).parents[1]
SAMPLE = REPO / "sample_data"
#: sample_data/README.md: 6 simulated models x 60 problems x 12 samples, plus one illegal
#: sample in each of 6 files; the GSM set: 4 strategies x 26 problems, one proof each.
SIM_TRAJECTORIES = 6 * 60 * 12 + 6
GSM_TRAJECTORIES = 4 * 26


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
