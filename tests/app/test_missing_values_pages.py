"""Missing values on the pages read "–", as the Overview shows them, never "None": the
Trajectories grid's difficulty (scored JSONL, or files, that give none) and the Trajectory
page's step fields; a CSV keeps an empty cell."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from dagmath_viz.analysis.tables import MISSING
from dagmath_viz.analysis.trajectory_table import trajectory_table
from dagmath_viz.cli import main
from dagmath_viz.export import csv_bytes
from dagmath_viz.run.corpus import load_corpus
from tests.app.helpers import app_on, on_page, two_problem_run

CHAIN = Path("deepseek-r1-distill-qwen-14b/correct_base_solution/problem_2238")


@pytest.fixture
def one_chain(tmp_path, thought_anchors_root) -> Path:
    """One Thought Anchors chain in the source's layout (copied out of ../shared, never
    into the repository): its steps carry the source's fields."""
    shutil.copytree(thought_anchors_root / CHAIN, tmp_path / CHAIN)
    return tmp_path


@pytest.fixture
def no_difficulty(tmp_path) -> Path:
    """``dagmath score`` output (scored JSONL) of two hand-written trajectories whose
    records say no difficulty."""
    two_problem_run(tmp_path / "run")
    out = tmp_path / "scored" / "scored.jsonl"
    out.parent.mkdir()
    assert main(["score", "-q", str(tmp_path / "run"), "-o", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 2 and all(r.get("difficulty") is None for r in records)
    return out.parent


def test_trajectories_grid_shows_a_dash_for_no_difficulty(monkeypatch, no_difficulty):
    at = on_page(app_on(monkeypatch, no_difficulty, timeout=120), "pages/trajectories.py")
    grid = next(f for f in at.dataframe if "difficulty" in f.value.columns)
    assert len(grid.value) == 2 and grid.value["difficulty"].isna().all()
    assert grid.proto.placeholder == MISSING == "–"


def test_step_fields_show_a_dash_for_a_step_without_the_field(monkeypatch, one_chain):
    at = app_on(
        monkeypatch, one_chain, timeout=120, model=CHAIN.parts[0], problem="2238", sample="0"
    )
    at = on_page(at, "pages/trajectory.py")
    (section,) = [e for e in at.expander if e.label == "Step fields"]
    (table,) = section.dataframe
    assert table.proto.placeholder == "–"


def test_the_csv_keeps_an_empty_cell_for_no_difficulty(no_difficulty):
    table = trajectory_table(load_corpus([no_difficulty]).scored)
    text = csv_bytes(table).decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["difficulty"] for r in rows] == ["", ""]
    assert "None" not in text and "nan" not in text.lower()
