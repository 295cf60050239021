"""The scored record's contract (``dagmath_viz.score.record``) is the one list of fields.

A new per-trajectory metric is a function of the step graph and one ``Field`` line in the
contract; the reference scorer, the fast path, the frame and the typed table take it from
there. Here a toy metric (the number of source steps: steps citing no earlier step) is
added to the contract for the length of a test, and both scorers must write it, byte for
byte alike, with the values counted by hand from the real few-shot data.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from dagmath_viz.answers.check import AnswerChecker
from dagmath_viz.formats.discovery import discover, load_paths
from dagmath_viz.run import pool as pipeline
from dagmath_viz.score import fast, record
from dagmath_viz.score.graph import StepGraph
from dagmath_viz.score.reference import score_records
from dagmath_viz.store import results

# Steps citing nothing, read off the in-degree lists counted by hand in test_scoring.py:
# problem 1: only step 1 (steps 2..22 each cite one or more); problem 2: steps 1, 2, 6, 8,
# 9, 21, 22; problem 3: steps 1, 2, 3, 4, 10, 12, 20; problem 4: steps 1, 2, 3.
SOURCE_STEPS = {"1": 1, "2": 7, "3": 7, "4": 3}


def source_steps(graph: StepGraph) -> int:
    return sum(1 for parents in graph.parents if not parents)


@pytest.fixture
def toy_metric(monkeypatch: pytest.MonkeyPatch) -> str:
    """The contract with one more field, ``source_steps``, after ``ancestor_share``."""
    toy = record.Field("source_steps", "Int64", graph=source_steps)
    at = record.RECORD_FIELDS.index("ancestor_share") + 1
    fields = (*record.FIELDS[:at], toy, *record.FIELDS[at:])
    names = tuple(f.name for f in fields)
    monkeypatch.setattr(record, "FIELDS", fields)
    monkeypatch.setattr(record, "RECORD_FIELDS", names)
    monkeypatch.setattr(record, "HEAD_FIELDS", names[: names.index("final_correct")])
    monkeypatch.setitem(record.GRAPH_METRICS, toy.name, toy.graph)
    return toy.name


@pytest.mark.shared
def test_a_new_graph_metric_is_written_alike_by_both_scorers(
    toy_metric: str, shared_data: Path, answer_checker: AnswerChecker
) -> None:
    array = shared_data / "fewshot_solutions.json"
    clean = fast.score_clean_file(array, discover([shared_data]).answers)
    assert clean is not None and len(clean.records) == 4  # the fast path took the file

    loaded = load_paths([shared_data])
    records = score_records(loaded.trajectories, checker=answer_checker)
    expected = [orjson.dumps(r, option=orjson.OPT_APPEND_NEWLINE) for r in records]
    run = pipeline.score_paths([shared_data], checker=answer_checker, workers=1)
    got = list(run.lines())
    assert got == expected  # fast path (the array) and reference path (gold) alike

    rows = [orjson.loads(line) for line in got]
    assert {r["model"] for r in rows} == {"dagmath-authors-fewshot", "gold"}
    for row in rows:
        assert list(row) == list(record.RECORD_FIELDS)  # in the contract's place
        assert row[toy_metric] == SOURCE_STEPS[row["problem_id"]], row["problem_id"]
    frame = record.records_frame(rows)
    assert "other_fields" not in frame.columns  # a field of its own, not an unknown one
    assert frame[toy_metric].tolist() == [SOURCE_STEPS[r["problem_id"]] for r in rows]


def test_the_typed_table_takes_its_schema_from_the_contract() -> None:
    assert results.SCHEMA is record.SCHEMA and results.JSON_FIELDS is record.JSON_FIELDS
    assert list(record.SCHEMA) == list(record.RECORD_FIELDS)
