"""``dagmath score -o x.parquet|x.csv`` and ``dagmath_viz.read_scored`` (issue 31, item 5).

``pd.read_json(lines=True)`` turns the problem id ``"007"`` into the integer 7; the typed
table and its reader must not, whatever the file's format.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import dagmath_viz
from dagmath_viz.cli import main
from dagmath_viz.schema import InputError


def _step(i: int, parents: list[int] | None, node: str) -> dict:
    return {"step_id": i, "edge": "e", "direct_dependent_steps": parents, "node": node}


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """Two problems whose ids look like numbers ("007", "12"), with a dead end and an
    answer key; and a formula-looking model answer for the CSV."""
    folder = tmp_path / "run"
    folder.mkdir()
    lines = [
        {
            "problem_id": "007",
            "steps": [
                _step(1, None, "2 + 2"),
                _step(2, [1], "a detour"),  # nobody uses it: a dead end
                _step(3, [1], r"$\boxed{4}$"),
            ],
        },
        {"problem_id": "12", "steps": [_step(1, None, "x"), _step(2, [1], r"\boxed{=1+1}")]},
    ]
    (folder / "model.jsonl").write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    (folder / "answers.json").write_text(json.dumps({"007": "4", "12": "7"}))
    return folder


def _score(run_dir: Path, out: Path) -> None:
    assert main(["score", str(run_dir), "-o", str(out), "--no-cache", "-q"]) == 0


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
def test_score_output_round_trips_with_string_ids(run_dir: Path, tmp_path: Path, suffix: str):
    out = tmp_path / f"x{suffix}"
    _score(run_dir, out)
    table = dagmath_viz.read_scored(out)
    assert list(table["problem_id"]) == ["007", "12"]
    assert table["problem_id"].dtype == "string"
    # worked out by hand from DEFINITIONS.md: 3 nodes, edges 1->2 and 1->3, one dead end
    first = table.iloc[0]
    assert (first["n_nodes"], first["n_edges"], first["dead_ends"]) == (3, 2, [2])
    assert first["density"] == pytest.approx(2 / 3)  # 2 edges of the 3 a DAG of 3 can have
    assert bool(first["final_correct"]) is True
    assert bool(table.iloc[1]["final_correct"]) is False  # "=1+1" is not 7
    assert table.iloc[1]["predicted_answer"] == "=1+1"  # the CSV's formula quote is undone
    assert str(table["n_nodes"].dtype) == "Int64" and str(table["closed"].dtype) == "boolean"
    assert table.iloc[0]["errors"] == [] and list(table.columns[:3]) == [
        "model",
        "dataset",
        "problem_id",
    ]


def test_parquet_csv_and_jsonl_read_back_the_same(run_dir: Path, tmp_path: Path):
    tables = {}
    for suffix in (".jsonl", ".parquet", ".csv"):
        _score(run_dir, tmp_path / f"x{suffix}")
        tables[suffix] = dagmath_viz.read_scored(tmp_path / f"x{suffix}")
    pd.testing.assert_frame_equal(tables[".jsonl"], tables[".parquet"])
    pd.testing.assert_frame_equal(tables[".jsonl"], tables[".csv"])


def test_the_parquet_file_is_typed_for_other_readers(run_dir: Path, tmp_path: Path):
    _score(run_dir, tmp_path / "x.parquet")
    plain = pd.read_parquet(tmp_path / "x.parquet")
    assert list(plain["problem_id"]) == ["007", "12"]
    assert str(plain["n_nodes"].dtype) == "Int64"
    assert json.loads(plain["dead_ends"][0]) == [2]  # lists are JSON text, as in the CSV


def test_a_spreadsheet_does_not_see_a_formula(run_dir: Path, tmp_path: Path):
    _score(run_dir, tmp_path / "x.csv")
    assert ",'=1+1," in (tmp_path / "x.csv").read_text()


def test_read_scored_names_the_file_and_place(tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"problem_id": "1"}\n{oops\n')
    with pytest.raises(InputError, match=r"bad\.jsonl: line 2"):
        dagmath_viz.read_scored(bad)
    fake = tmp_path / "fake.parquet"
    fake.write_text("not parquet")
    with pytest.raises(InputError, match=r"fake\.parquet: not a Parquet file"):
        dagmath_viz.read_scored(fake)
    csv = tmp_path / "bad.csv"
    csv.write_text("problem_id,n_nodes\n1,many\n")
    with pytest.raises(InputError, match=r"bad\.csv: column 'n_nodes'"):
        dagmath_viz.read_scored(csv)
    with pytest.raises(InputError, match="missing.jsonl"):
        dagmath_viz.read_scored(tmp_path / "missing.jsonl")
