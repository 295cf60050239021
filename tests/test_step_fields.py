"""The Trajectory page's "Step fields" table (issue 34: every per-chunk field shown, in a
sortable column): checked against a Thought Anchors chunk file read here with ``json``."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pandas as pd

from dagmath_viz.analysis.step_fields import has_step_fields, step_fields_table
from dagmath_viz.export import csv_bytes
from dagmath_viz.formats import thought_anchors
from dagmath_viz.schema import Step, Trajectory

CHAIN = "deepseek-r1-distill-qwen-14b/correct_base_solution/problem_2238/chunks_labeled.json"
#: The chunk keys that are not per-step values (id, parents, text; tags have their column).
STRUCTURE = {"chunk_idx", "depends_on", "chunk", "function_tags"}


def test_one_row_per_chunk_with_every_value_of_the_file(thought_anchors_root: Path) -> None:
    path = thought_anchors_root / CHAIN
    chunks = json.loads(path.read_text(encoding="utf-8"))
    (traj,) = thought_anchors.read(path).trajectories
    assert has_step_fields(traj)
    table = step_fields_table(traj)

    assert len(table) == len(chunks) == 60
    assert table["step"].tolist() == [c["chunk_idx"] for c in chunks]
    assert table["step"].dtype == "int64"  # sorts 2 before 10
    assert table["tags"].tolist() == [", ".join(c["function_tags"]) for c in chunks]
    # the file's own keys, each a column, in the file's order
    names = [k for k in chunks[0] if k not in STRUCTURE]
    assert list(table.columns) == ["step", "text", "dead end", "tags", *names]
    for name in names:
        expected = [c.get(name) for c in chunks]
        if all(isinstance(v, int | float) for v in expected):
            assert table[name].dtype == float, name  # numbers sort as numbers
            assert table[name].tolist() == [float(v) for v in expected], name
        else:
            assert table[name].tolist() == expected, name
    # the excerpt: the chunk's start, on one line, at most 80 characters, plain text (the
    # chain's only markdown is its closing "**Final Answer**": read without the markers)
    assert sum("**" in c["chunk"] for c in chunks) == 1
    for excerpt, chunk in zip(table["text"], chunks, strict=True):
        flat = " ".join(chunk["chunk"].replace("**Final Answer**", "Final Answer").split())
        assert len(excerpt) <= 80
        assert excerpt == flat or excerpt == flat[:79] + "…"

    # dead ends from the file: a chunk other than the last that no later chunk depends on
    cited = {int(p) for c in chunks for p in c["depends_on"]}
    dead = {c["chunk_idx"] for c in chunks[:-1] if c["chunk_idx"] not in cited}
    assert len(dead) == 12
    assert set(table.loc[table["dead end"] == "yes", "step"]) == dead
    assert (table["dead end"] == "no").sum() == 48

    # sorting by importance puts the file's most important chunk first
    key = "counterfactual_importance_accuracy"
    top = max(chunks, key=lambda c: c[key])
    ordered = table.sort_values(key, ascending=False)
    assert ordered["step"].iloc[0] == top["chunk_idx"]
    assert math.isclose(ordered[key].iloc[0], top[key])


def test_missing_and_mixed_values_and_names_that_clash() -> None:
    steps = (
        Step(1, (), "=HYPERLINK(1)", fields=(("score", 2), ("note", 3), ("text", "own"))),
        Step(2, (1,), "b", fields=(("note", "three"),)),
        Step("3", (2,), "c", fields=(("score", None),)),
    )
    table = step_fields_table(Trajectory("m", "d", "1", 0, steps), dead_ends=[2])
    assert list(table.columns) == ["step", "text", "dead end", "score", "note", "text (field)"]
    assert table["dead end"].tolist() == ["no", "yes", "no"]  # as the record lists them
    assert table["step"].tolist() == ["1", "2", "3"]  # one id is not an integer: all text
    assert table["score"].dtype == float
    assert table["score"].iloc[0] == 2.0 and table["score"].isna().tolist() == [False, True, True]
    assert table["note"].tolist() == ["3", "three", None]  # mixed: all text, never both
    assert table["text (field)"].tolist() == ["own", None, None]
    # the CSV the page offers: text that looks like a formula is neutralised
    rows = pd.read_csv(io.BytesIO(csv_bytes(table)))
    assert rows["text"].iloc[0] == "'=HYPERLINK(1)"


def test_no_fields_no_table() -> None:
    traj = Trajectory("m", "d", "1", 0, (Step(1, (), "a"), Step(2, (1,), "b")))
    assert not has_step_fields(traj)
    assert not has_step_fields(None)
    assert list(step_fields_table(traj).columns) == ["step", "text", "dead end"]
