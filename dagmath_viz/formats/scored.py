"""Scored JSONL, the output of ``dagmath score``: recognised by its fields, validated once.

A scored record is also a valid input (score once on a big machine, explore anywhere): the
JSON records formats hand every record with :data:`SCORED_FIELDS` here instead of reading
it as a trajectory, and a file made only of valid scored records is parsed in one go.
The records themselves are built by :func:`dagmath_viz.score.reference.to_record`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from dagmath_viz import jsonio
from dagmath_viz.formats.common import is_sample_id
from dagmath_viz.schema import CLASSES, InputError
from dagmath_viz.text import short_repr

__all__ = ["SCORED_FIELDS", "is_scored", "parse_scored_jsonl", "scored_fault", "starts_scored"]

#: Fields that mark a record written by ``dagmath score`` (a valid app input too).
SCORED_FIELDS = frozenset({"n_nodes", "dead_ends", "closeness_rate", "class"})


def is_scored(record: Any) -> bool:
    """True for a record written by ``dagmath score`` (it has :data:`SCORED_FIELDS`)."""
    return isinstance(record, dict) and SCORED_FIELDS <= record.keys()


#: Bytes of a JSONL file's first line read to tell scored records from trajectories.
FIRST_LINE_BYTES = 1 << 24


def starts_scored(path: Path) -> bool:
    """Whether a JSON Lines file's first line is a valid scored record: such a file is
    read as scored records a slice at a time, any other by its format's reader (so a JSONL
    of trajectories is not read twice)."""
    try:
        with open(path, "rb") as handle:
            head = jsonio.strip_bom(handle.readline(FIRST_LINE_BYTES))
    except OSError:
        return False  # the reader says why
    return bool(head.strip()) and parse_scored_jsonl(head) is not None


def parse_scored_jsonl(data: bytes) -> list[dict] | None:
    """Every record of JSONL data made of valid scored records only (parsed in one go,
    several times faster than line by line), else None: the file is read line by line."""
    lines = [line for line in jsonio.strip_bom(data).split(b"\n") if line.strip()]
    if not lines:
        return None
    try:
        records = jsonio.parse(b"[" + b",".join(lines) + b"]")
    except InputError:
        return None
    # one object per line (a line holding two values would make the counts differ)
    if len(records) != len(lines):
        return None
    for record in records:
        if type(record) is not dict or not SCORED_FIELDS <= record.keys():
            return None
        if scored_fault(record) is not None:
            return None
    return records


_SCORED_NUMBERS = (
    "n_nodes", "n_edges", "density", "max_in_degree", "max_out_degree", "closeness_rate",
)  # fmt: skip


def scored_fault(record: dict) -> str | None:
    """Why a pre-scored record cannot be aggregated (validated here, once, at the edge)."""
    for name in ("model", "dataset", "problem_id"):
        if record.get(name) is None:
            return f"scored record lacks '{name}'"
    for name in _SCORED_NUMBERS:
        value = record.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
            return f"scored record: '{name}' is {short_repr(value)}, expected a number"
    if record.get("class") not in CLASSES:
        return f"scored record: unknown class {short_repr(record.get('class'))}"
    closed = record.get("closed")
    if not isinstance(closed, bool):
        return f"scored record: 'closed' is {short_repr(closed)}, expected true or false"
    for name in ("final_correct", "perfect"):
        value = record.get(name)
        if value is not None and not isinstance(value, bool):
            return f"scored record: '{name}' is {short_repr(value)}, expected true, false or null"
    if not isinstance(record.get("dead_ends"), list):
        return "scored record: 'dead_ends' is not a list"
    # the key of a row in the app and in tables: text names, a 64-bit sample id
    for name in ("model", "dataset"):
        if not isinstance(record[name], str):
            return f"scored record: '{name}' is {short_repr(record[name])}, expected text"
    if not isinstance(record["problem_id"], str | int) or isinstance(record["problem_id"], bool):
        found = short_repr(record["problem_id"])
        return f"scored record: 'problem_id' is {found}, expected text or an integer"
    if not is_sample_id(record.get("sample_id")):
        found = short_repr(record.get("sample_id"))
        return f"scored record: 'sample_id' is {found}, expected a 64-bit integer"
    return None
