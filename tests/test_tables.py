"""tables.py: leaderboard, Table 1, class counts, difficulty groups, display formats."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dagmath_viz.analysis.tables import (
    class_counts_table,
    cohort_long,
    default_comparison,
    format_percent,
    graph_stats_by_difficulty,
    leaderboard,
    leaderboard_display,
    spread_display,
    table1,
    table1_display,
    table1_report,
    with_difficulty_group,
)
from dagmath_viz.schema import CLASSES
from dagmath_viz.score.record import records_frame


def rec(dataset, pid, cls, r, n_nodes, difficulty=None) -> dict:
    correct = {"perfect": True, "imperfect": True, "incorrect": False, "unscored": None}[cls]
    closed = r == 1.0
    return {
        "model": "A", "dataset": dataset, "problem_id": pid, "sample_id": 0,
        "difficulty": difficulty, "n_nodes": n_nodes, "n_edges": 2 * n_nodes,
        "density": n_nodes / 100, "max_in_degree": n_nodes, "max_out_degree": 1,
        "dead_ends": [], "closeness_rate": r, "closed": closed, "final_correct": correct,
        "perfect": None if correct is None else closed and correct, "class": cls,
    }  # fmt: skip


# A/D: p1 perfect (4 nodes) and wrong (6 nodes), p2 imperfect r = 0.5 (5 nodes)
#   PASS@1 = (1/2 + 1)/2 = 0.75; R̂ = (1/2 + 0)/2 = 0.25; Δ = 0.5
#   AUC = ((1 + 0)/2 + 0.5)/2 = 0.5
# A/E: p1 perfect (3 nodes), p9 unscored (7 nodes): PASS@1 = R̂ = AUC = 1
ROWS = [
    rec("D", "p1", "perfect", 1.0, 4, difficulty=1.0),
    rec("D", "p1", "incorrect", 1.0, 6, difficulty=1.0),
    rec("D", "p2", "imperfect", 0.5, 5, difficulty=2.5),
    rec("E", "p1", "perfect", 1.0, 3, difficulty=6.0),
    rec("E", "p9", "unscored", 1.0, 7),
]


@pytest.fixture
def frame() -> pd.DataFrame:
    return records_frame(ROWS)


PERCENT_CASES = [
    pytest.param(0.875, "87.5%", id="fraction"),
    pytest.param(1.0, "100.0%", id="one"),
    pytest.param(0.0, "0.0%", id="zero"),
    pytest.param(1 / 3, "33.3%", id="one-decimal"),
    pytest.param(None, "–", id="none"),
    pytest.param(float("nan"), "–", id="nan"),
]


@pytest.mark.parametrize(("value", "expected"), PERCENT_CASES)
def test_format_percent(value, expected: str) -> None:
    assert format_percent(value) == expected


def test_leaderboard_by_hand(frame: pd.DataFrame) -> None:
    board = leaderboard(frame, n_boot=0)
    assert board[["model", "dataset"]].values.tolist() == [["A", "D"], ["A", "E"]]
    d, e = board.to_dict("records")
    assert (d["pass_at_1"], d["r_hat"], d["gap"], d["auc"]) == pytest.approx((0.75, 0.25, 0.5, 0.5))
    assert (e["pass_at_1"], e["r_hat"], e["gap"], e["auc"]) == pytest.approx((1.0, 1.0, 0.0, 1.0))
    assert (d["n_problems"], d["n_trajectories"], d["n_scored"]) == (2, 3, 3)
    assert (e["n_problems"], e["n_trajectories"], e["n_scored"]) == (2, 2, 1)
    assert [d[c] for c in CLASSES] == [1, 1, 1, 0, 0]
    assert [e[c] for c in CLASSES] == [1, 0, 0, 0, 1]
    assert not any(c.endswith(("_low", "_high")) for c in board.columns)


def test_leaderboard_with_intervals(frame: pd.DataFrame) -> None:
    board = leaderboard(frame, n_boot=100).set_index("dataset")
    d = board.loc["D"]  # two problems: an interval, flagged as resting on few problems
    assert d["pass_at_1_low"] <= d["pass_at_1"] <= d["pass_at_1_high"]
    assert d["r_hat_low"] <= d["r_hat"] <= d["r_hat_high"]
    assert d["auc_low"] <= d["auc"] <= d["auc_high"]
    assert d["small_sample"]
    # E has one scored problem: no spread, so no interval at all (NaN), never a fake point
    e = board.loc["E"]
    assert math.isnan(e["pass_at_1_low"]) and math.isnan(e["r_hat_high"])


def test_leaderboard_display_shows_percent(frame: pd.DataFrame) -> None:
    shown = leaderboard_display(leaderboard(frame, n_boot=0))
    assert shown["AUC"].tolist() == ["50.0%", "100.0%"]
    assert shown["problems"].tolist() == [2, 2]


# Table 1 cells for A/D (n_nodes): All (4 + 6 + 5)/3 = 5; Incorrect 6; Correct (4 + 5)/2 = 4.5;
# Perfect 4. A/E: All (3 + 7)/2 = 5; Incorrect none; Correct 3; Perfect 3.
TABLE1_CASES = [
    pytest.param("D", "All", 3, 5.0, id="D-all"),
    pytest.param("D", "Incorrect", 1, 6.0, id="D-incorrect"),
    pytest.param("D", "Correct", 2, 4.5, id="D-correct"),
    pytest.param("D", "Perfect", 1, 4.0, id="D-perfect"),
    pytest.param("E", "All", 2, 5.0, id="E-all-includes-unscored"),
    pytest.param("E", "Incorrect", 0, float("nan"), id="E-empty-cohort"),
    pytest.param("E", "Correct", 1, 3.0, id="E-correct"),
]


@pytest.mark.parametrize(("dataset", "cohort", "n", "mean_nodes"), TABLE1_CASES)
def test_table1(frame: pd.DataFrame, dataset: str, cohort: str, n: int, mean_nodes: float):
    t1 = table1(frame)
    assert len(t1) == 2 * 4  # two groups x four cohorts
    (cell,) = t1[(t1["dataset"] == dataset) & (t1["cohort"] == cohort)].to_dict("records")
    assert cell["n"] == n
    if math.isnan(mean_nodes):
        assert math.isnan(cell["n_nodes"])
    else:
        assert cell["n_nodes"] == pytest.approx(mean_nodes)
        assert cell["n_edges"] == pytest.approx(2 * mean_nodes)  # every row has E = 2N
        assert cell["density"] == pytest.approx(mean_nodes / 100)  # stays a fraction


def test_table1_display_puts_density_in_percent(frame: pd.DataFrame) -> None:
    shown = table1_display(table1(frame))
    all_d = shown[(shown["dataset"] == "D") & (shown["cohort"] == "All")].iloc[0]
    assert all_d["density (%)"] == pytest.approx(5.0)  # mean density 0.05 -> 5.0 %
    assert all_d["#nodes"] == pytest.approx(5.0)


def test_table1_report_has_the_papers_columns_and_units(frame: pd.DataFrame) -> None:
    t1 = table1_report(frame)
    assert list(t1.columns) == [
        "model", "dataset", "cohort", "n", "n_nodes", "n_edges", "density_percent",
        "max_in_degree", "max_out_degree",
    ]  # fmt: skip
    assert t1["cohort"].tolist() == ["All", "Incorrect", "Correct", "Perfect"] * 2
    d = t1[t1["dataset"] == "D"].set_index("cohort")
    # D's Correct: 4 and 5 nodes, density 4 % and 5 %, max in-degree = n_nodes
    assert d.loc["Correct", ["n_nodes", "density_percent", "max_in_degree"]].tolist() == (
        pytest.approx([4.5, 4.5, 4.5])
    )


def test_table1_keeps_a_group_without_difficulty(frame: pd.DataFrame) -> None:
    # E/p9 has no difficulty: its group (NA) is a row, not silently dropped
    t1 = table1_report(with_difficulty_group(frame), by=["difficulty_group"])
    all_rows = t1[t1["cohort"] == "All"]
    assert all_rows["n"].sum() == len(ROWS)
    assert all_rows["difficulty_group"].isna().sum() == 1


def test_graph_stats_by_difficulty_by_hand(frame: pd.DataFrame) -> None:
    # Groups: 1 holds D/p1 (4 and 6 nodes), 3 holds D/p2 (5), 6 holds E/p1 (3); E/p9 has
    # no difficulty and is left out.
    t = graph_stats_by_difficulty(frame)
    assert t[["model", "difficulty_group", "n"]].values.tolist() == [
        ["A", 1, 2], ["A", 3, 1], ["A", 6, 1]
    ]  # fmt: skip
    assert t["n_nodes"].tolist() == pytest.approx([5.0, 5.0, 3.0])
    assert t["n_edges"].tolist() == pytest.approx([10.0, 10.0, 6.0])
    assert t["density"].tolist() == pytest.approx([0.05, 0.05, 0.03])
    assert graph_stats_by_difficulty(frame.assign(difficulty=None)).empty


def test_class_counts_table(frame: pd.DataFrame) -> None:
    counts = class_counts_table(frame).set_index("dataset")
    assert list(counts.columns) == ["model", *CLASSES, "total"]
    assert counts.loc["D", list(CLASSES)].tolist() == [1, 1, 1, 0, 0]
    assert counts.loc["E", list(CLASSES)].tolist() == [1, 0, 0, 0, 1]
    assert counts["total"].to_dict() == {"D": 3, "E": 2}


def test_cohort_long_repeats_rows_per_cohort(frame: pd.DataFrame) -> None:
    long = cohort_long(frame)
    # All 5, Incorrect 1, Correct 3, Perfect 2
    assert long["cohort"].value_counts().to_dict() == {
        "All": 5,
        "Correct": 3,
        "Perfect": 2,
        "Incorrect": 1,
    }


def test_with_difficulty_group(frame: pd.DataFrame) -> None:
    grouped = with_difficulty_group(frame)
    # 1.0 -> 1, 1.0 -> 1, 2.5 -> 3, 6.0 -> 6, unknown -> <NA>
    assert grouped["difficulty_group"].tolist()[:4] == [1, 1, 3, 6]
    assert grouped["difficulty_group"].isna().tolist() == [False] * 4 + [True]
    assert "difficulty_group" not in frame.columns  # a copy


# --------------------------------------------------------------------------- the paper's analyses


def model_rows(model: str, outcomes: dict[str, list[str]], difficulty: dict | None = None):
    """Rows of one model: problem id -> list of classes (P perfect, I imperfect r=0.5, W)."""
    rows = []
    for pid, kinds in outcomes.items():
        for sid, kind in enumerate(kinds):
            cls = {"P": "perfect", "I": "imperfect", "W": "incorrect"}[kind]
            r = 0.5 if kind == "I" else 1.0
            nodes = {"P": 4, "I": 10, "W": 6}[kind]
            row = rec("D", pid, cls, r, nodes, difficulty=(difficulty or {}).get(pid))
            rows.append({**row, "model": model, "sample_id": sid})
    return rows


def test_leaderboard_by_model_and_difficulty_group() -> None:
    # p1 difficulty 1.0 -> group 1; p2 1.5 and p3 2.0 -> group 2 ((1, 2]).
    diff = {"p1": 1.0, "p2": 1.5, "p3": 2.0}
    rows = model_rows("A", {"p1": ["P", "W"], "p2": ["I", "I"], "p3": ["W", "W"]}, diff)
    board = leaderboard(records_frame(rows), by=["model", "difficulty_group"], n_boot=0)
    assert list(board["difficulty_group"]) == [1, 2]
    # group 1: PASS@1 = R̂ = 1/2. group 2: PASS@1 = (1 + 0)/2, R̂ = 0, AUC = (0.5 + 0)/2.
    assert list(board["pass_at_1"]) == pytest.approx([0.5, 0.5])
    assert list(board["r_hat"]) == pytest.approx([0.5, 0.0])
    assert list(board["auc"]) == pytest.approx([0.5, 0.25])
    assert list(board["n_problems"]) == [1, 2] and board["small_sample"].all()


def test_unknown_grouping_column_is_one_clear_error(frame: pd.DataFrame) -> None:
    from dagmath_viz.analysis.tables import grouping_frame
    from dagmath_viz.schema import DagMathError

    with pytest.raises(DagMathError, match=r"unknown column\(s\) colour .*difficulty_group"):
        grouping_frame(frame, ["model", "colour"])
    assert "difficulty_group" in grouping_frame(frame, ["difficulty_group"]).columns


def test_model_spread_is_the_sample_std_across_models() -> None:
    from dagmath_viz.analysis.tables import model_spread

    # Three models on two problems. PASS@1: A (1 + 0)/2 = 0.5, B 1, C 0; R̂: A 0.5, B 0.5,
    # C 0. Sample std of PASS@1 over (0.5, 1, 0): mean 0.5, sqrt((0 + 0.25 + 0.25)/2) = 0.5;
    # of R̂ over (0.5, 0.5, 0): mean 1/3, sqrt((1/36 + 1/36 + 4/36)/2) = sqrt(1/12).
    rows = model_rows("A", {"p1": ["P"], "p2": ["W"]})
    rows += model_rows("B", {"p1": ["P"], "p2": ["I"]})
    rows += model_rows("C", {"p1": ["W"], "p2": ["W"]})
    (spread,) = model_spread(records_frame(rows)).to_dict("records")
    assert spread["dataset"] == "D" and spread["n_models"] == 3
    assert spread["pass_at_1_std"] == pytest.approx(0.5)
    assert spread["r_hat_std"] == pytest.approx(math.sqrt(1 / 12))
    assert spread["ratio"] == pytest.approx(0.5 / math.sqrt(1 / 12))
    # AUC: A (1 + 0)/2 = 0.5, B (1 + 0.5)/2 = 0.75, C 0: std of (0.5, 0.75, 0)
    assert spread["auc_std"] == pytest.approx(pd.Series([0.5, 0.75, 0.0]).std())


def test_closeness_accuracy_bins() -> None:
    from dagmath_viz.analysis.tables import closeness_accuracy, closeness_bin

    assert closeness_bin(0.0) == "[0.00, 0.50)" and closeness_bin(0.5) == "[0.50, 0.75)"
    assert closeness_bin(0.89) == "[0.75, 0.90)" and closeness_bin(0.95) == "[0.90, 1.00)"
    assert closeness_bin(1.0) == "1 (no dead end)" and closeness_bin(float("nan")) is None
    # r = 1: P, W (1 of 2 correct); r = 0.5: I, I (2 of 2). Unscored rows are left out.
    rows = model_rows("A", {"p1": ["P", "W"], "p2": ["I", "I"]})
    rows.append({**rec("D", "p3", "unscored", 0.2, 3), "model": "A"})
    table = closeness_accuracy(records_frame(rows))
    assert list(table["closeness_bin"]) == ["[0.50, 0.75)", "1 (no dead end)"]
    assert list(table["n"]) == [2, 2] and list(table["accuracy"]) == [1.0, 0.5]


def test_correct_to_perfect_shift() -> None:
    from dagmath_viz.analysis.tables import correct_to_perfect_shift

    # Correct = P (4 nodes) and two I (10 nodes each): mean 8; Perfect = 4 -> shift -4.
    # Gap: PASS@1 = (1/2 + 1)/2 = 0.75, R̂ = (1/2 + 0)/2 = 0.25 -> 0.5.
    rows = model_rows("A", {"p1": ["P", "W"], "p2": ["I", "I"]})
    (shift,) = correct_to_perfect_shift(records_frame(rows)).to_dict("records")
    assert shift["n_nodes"] == pytest.approx(4 - 8)
    assert shift["gap"] == pytest.approx(0.5)
    # no perfect trajectory: no shift
    (none,) = correct_to_perfect_shift(records_frame(model_rows("B", {"p1": ["I"]}))).to_dict(
        "records"
    )
    assert math.isnan(none["n_nodes"])


def test_report_by_model_and_difficulty_group_on_the_command_line(tmp_path, capsys) -> None:
    import json

    from dagmath_viz.cli import main

    diff = {"p1": 1.0, "p2": 1.5}
    rows = model_rows("A", {"p1": ["P", "W"], "p2": ["I", "I"]}, diff)
    scored = tmp_path / "scored.jsonl"
    scored.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    argv = ["report", str(scored), "--by", "model,difficulty_group", "--format", "csv"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("model,difficulty_group,")
    assert [line.split(",")[1] for line in lines[1:]] == ["1", "2"]
    assert main(["report", str(scored), "--table", "spread", "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("dataset,n_models,")


def test_answers_before_final_step() -> None:
    from dagmath_viz.analysis.tables import answers_before_final_step
    from dagmath_viz.schema import Step, Trajectory

    def traj(ids):
        return Trajectory(
            model="m", dataset="d", problem_id="1", sample_id=0,
            steps=tuple(Step(i, (), "x") for i in ids),
        )  # fmt: skip

    # row 0: answer in the final step (id 3); row 1: in step 2 of 1..3 (counts);
    # row 2: no box anywhere (None); row 3: no trajectory to compare with (unknown).
    df = pd.DataFrame({"answer_step": [3, 2, None, 5]})
    trajs = [traj([1, 2, 3]), traj([1, 2, 3]), traj([1, 2]), None]
    assert answers_before_final_step(df, trajs) == (1, 3)
    assert answers_before_final_step(pd.DataFrame({"x": [1]}), [None]) is None


def _random_scored_frame(seed: int, n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    classes = np.array(["perfect", "imperfect", "incorrect", "illegal", "unscored"])
    difficulty = rng.choice([np.nan, 0.0, 0.2, 1.0, 1.5, 2.0, 3.7, -1.0, 5.0], size=n)
    final = rng.choice([True, False, None], size=n)
    return pd.DataFrame({
        "model": rng.choice(["a", "b", "c"], size=n),
        "dataset": rng.choice(["d1", "d2"], size=n),
        "problem_id": rng.integers(0, 40, size=n).astype(str),
        "sample_id": np.arange(n),
        "difficulty": difficulty,
        "final_correct": final,
        "closed": rng.random(n) < 0.5,
        "closeness_rate": rng.random(n),
        "class": rng.choice(classes, size=n),
        "n_nodes": rng.integers(1, 30, size=n),
        "other": ["x"] * n,
    })  # fmt: skip


def test_with_difficulty_group_matches_the_row_by_row_definition():
    from dagmath_viz.analysis.metrics import difficulty_group

    for seed in range(5):
        df = _random_scored_frame(seed)
        got = with_difficulty_group(df)
        expected = df["difficulty"].map(difficulty_group).astype("Int64")
        assert got["difficulty_group"].equals(expected)
        assert str(got["difficulty_group"].dtype) == "Int64"
        assert got.drop(columns="difficulty_group").equals(df)  # the rest unchanged
        assert "difficulty_group" not in df.columns  # the input is left alone
    odd = with_difficulty_group(pd.DataFrame({"difficulty": [float("inf"), 0.5, None]}))
    assert odd["difficulty_group"].tolist() == [pd.NA, 1, pd.NA]  # infinite: no group


def test_model_spread_from_a_given_board_is_the_same_table():
    from dagmath_viz.analysis.tables import model_spread

    for seed in range(3):
        df = _random_scored_frame(seed)
        board = leaderboard(df, n_boot=1000)
        pd.testing.assert_frame_equal(model_spread(df, board=board), model_spread(df))


def test_leaderboard_ignores_columns_it_does_not_read():
    df = _random_scored_frame(7)
    wide = df.assign(extra=[[1]] * len(df), more=df["model"] + "!")
    pd.testing.assert_frame_equal(leaderboard(wide, n_boot=1000), leaderboard(df, n_boot=1000))


def test_table1_ignores_columns_it_does_not_read():
    df = _random_scored_frame(11)
    for stat in ("n_edges", "density", "max_in_degree", "max_out_degree"):
        df[stat] = df["n_nodes"] * 0.5 + len(stat)
    wide = df.assign(extra=[[1]] * len(df), more=df["model"] + "!")
    expected = table1(df)
    pd.testing.assert_frame_equal(table1(wide), expected)
    assert len(expected) == 6 * 4  # 3 models × 2 datasets × 4 cohorts


# --- Compare's default pair ---------------------------------------------------------------


def _pairs(*rows: tuple[str, str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["model", "dataset"])


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        # the bundled shape: two logic models sort first but share only their own dataset;
        # the dataset four models share wins, and its first two by name are compared
        (
            _pairs(
                ("gsm-a", "gsm"),
                ("gsm-b", "gsm"),
                ("sim-2", "arith"),
                ("sim-1", "arith"),
                ("sim-3", "arith"),
                ("sim-4", "arith"),
            ),
            ["sim-1", "sim-2"],
        ),
        # a tie on models: the dataset with more trajectories
        (_pairs(("a", "x"), ("b", "x"), ("c", "y"), ("d", "y"), ("d", "y")), ["c", "d"]),
        # a tie on both: the dataset first by name
        (_pairs(("c", "y"), ("d", "y"), ("a", "z"), ("b", "z")), ["c", "d"]),
        # no dataset holds two models: the first two names overall
        (_pairs(("b", "x"), ("a", "y")), ["a", "b"]),
        (_pairs(("only", "x"), ("only", "x")), ["only"]),
        (_pairs(), []),
    ],
    ids=["most-models", "tie-rows", "tie-name", "none-shared", "one-model", "empty"],
)
def test_default_comparison(frame: pd.DataFrame, expected: list[str]) -> None:
    assert default_comparison(frame) == expected


def test_the_spread_is_displayed_in_percent_with_the_ratio_to_one_decimal():
    spread = pd.DataFrame(
        [{"dataset": "d", "n_models": 3, "pass_at_1_mean": 0.5, "pass_at_1_std": 0.25,
          "r_hat_mean": 0.125, "r_hat_std": 0.0625, "auc_mean": 0.3, "auc_std": 0.1,
          "ratio": 4.04}]
    )  # fmt: skip
    shown = spread_display(spread)
    row = shown.iloc[0]
    assert row["PASS@1 mean"] == "50.0%" and row["PASS@1 std"] == "25.0%"
    assert row["R̂ std"] == "6.2%" or row["R̂ std"] == "6.3%"  # 6.25 % to one decimal
    assert row["std PASS@1 / std R̂"] == "4.0" and row["models"] == 3


def test_an_unknown_spread_shows_a_dash_not_none():
    # one model: no std, so no ratio; two models of one R̂: no ratio (std R̂ = 0)
    spread = pd.DataFrame(
        [{"dataset": "one", "n_models": 1, "pass_at_1_mean": 0.5, "pass_at_1_std": np.nan,
          "r_hat_mean": 0.25, "r_hat_std": np.nan, "auc_mean": 0.3, "auc_std": np.nan,
          "ratio": np.nan},
         {"dataset": "same", "n_models": 2, "pass_at_1_mean": 0.5, "pass_at_1_std": 0.1,
          "r_hat_mean": 0.25, "r_hat_std": 0.0, "auc_mean": 0.3, "auc_std": 0.0,
          "ratio": np.nan}]
    )  # fmt: skip
    shown = spread_display(spread)
    assert shown["std PASS@1 / std R̂"].tolist() == ["–", "–"]
    assert shown["PASS@1 std"].tolist() == ["–", "10.0%"]
    assert not shown.isna().any().any()
