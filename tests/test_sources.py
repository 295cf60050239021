"""Reading one trajectory back from a scored record's ``source`` (and dead ends from records)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagmath_viz.analysis.deadends import (
    UNKNOWN,
    dead_end_category_counts,
    scored_dead_end_table,
)
from dagmath_viz.formats.sources import SourceReader, SourceRef, missing_sources, parse_source
from dagmath_viz.run.corpus import load_corpus
from dagmath_viz.score.record import records_frame


def _steps(parents: list[list[int]]) -> list[dict]:
    return [
        {"step_id": i + 1, "text": f"s{i + 1}", "thinking": f"why {i + 1}",
         "direct_dependent_steps": p or None}
        for i, p in enumerate(parents)
    ]  # fmt: skip


@pytest.fixture
def run(tmp_path) -> Path:
    """model-x/ds/problem_7_all_samples.json: two samples.

    Sample 0: 1, 2 <- 1, 3 <- 1 (final): step 2 is a dead end whose only ancestor (1) is on
    the final step's path -> commentary. Sample 1: 1, 2, 3 <- 1 (final): step 2 is an unused
    given.
    """
    folder = tmp_path / "run" / "model-x" / "ds"
    folder.mkdir(parents=True)
    samples = [
        {"problem_id": 7, "sample_id": 0, "steps": _steps([[], [1], [1]])},
        {"problem_id": 7, "sample_id": 1, "steps": _steps([[], [], [1]])},
    ]
    (folder / "problem_7_all_samples.json").write_text(json.dumps(samples))
    return tmp_path / "run"


def test_parse_source_forms():
    assert parse_source("a/b.json:item 2") == SourceRef("a/b.json", location="item 2")
    assert parse_source("a/b.jsonl:line 7") == SourceRef("a/b.jsonl", location="line 7")
    assert parse_source("c:/x.jsonl:line 7, item 2") == SourceRef(
        "c:/x.jsonl", location="line 7, item 2"
    )
    assert parse_source("a/b.json[3]") == SourceRef("a/b.json", position=3)
    assert parse_source("a/b.json") == SourceRef("a/b.json")
    assert parse_source("") is None and parse_source(None) is None


def test_reads_the_record_it_names(run):
    corpus = load_corpus([run])
    reader = SourceReader([run])
    for traj in corpus.trajectories:
        back, why = reader.read(traj.source, traj.key)
        assert why is None
        assert back.key == traj.key and back.steps == traj.steps


def test_relative_source_found_under_the_scored_file_folder(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = "run/model-x/ds/problem_7_all_samples.json:item 2"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # not found from here ...
    assert SourceReader([elsewhere]).read(source)[0] is None
    scored_file = tmp_path / "scored.jsonl"  # ... but beside the scored file it is
    traj, why = SourceReader(roots=[scored_file]).read(source, ("model-x", "ds", "7", 1))
    assert why is None and traj.sample_id == 1


def test_missing_source_names_the_path(tmp_path):
    traj, why = SourceReader(roots=[tmp_path]).read("gone/problem_1_all_samples.json:item 1")
    assert traj is None
    assert why == "source file not found: gone/problem_1_all_samples.json"
    assert SourceReader().read("")[1] == "the record names no source file"


def test_changed_file_falls_back_to_the_key(run):
    src = str(run / "model-x" / "ds" / "problem_7_all_samples.json") + ":item 1"
    # the record says item 1 but its key is sample 1: the key wins (file edited since)
    traj, why = SourceReader([run]).read(src, ("model-x", "ds", "7", 1))
    assert why is None and traj.sample_id == 1
    traj, why = SourceReader([run]).read(src, ("model-x", "ds", "7", 9))
    assert traj is None and "no trajectory at item 1 matches" in why


def test_scored_dead_ends_categorised_from_sources_or_unknown(run, tmp_path):
    records = records_frame(
        [{**r, "source": r["source"]} for r in load_corpus([run]).scored.to_dict("records")]
    )
    with_reader = scored_dead_end_table(records, SourceReader([run]))
    assert sorted(zip(with_reader["sample_id"], with_reader["step_id"], with_reader["category"],
                      with_reader["text"], strict=True)) == [
        (0, 2, "commentary", "s2"),
        (1, 2, "unused given", "s2"),
    ]  # fmt: skip
    without = scored_dead_end_table(records, None)
    assert list(without["category"]) == [UNKNOWN, UNKNOWN]
    assert list(without["text"]) == ["", ""]
    counts = dead_end_category_counts(without)
    assert counts.loc[0, UNKNOWN] == 2 and counts.loc[0, "total"] == 2
    moved = records.assign(source="nowhere/problem_7_all_samples.json:item 1")
    assert missing_sources(moved, SourceReader([run])) == ["nowhere/problem_7_all_samples.json"]
    assert set(scored_dead_end_table(moved, SourceReader([run]))["category"]) == {UNKNOWN}
