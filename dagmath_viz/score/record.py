"""The scored record's contract: its fields, their types, the record built, the frame.

One place says what a scored record holds (``dagmath score`` writes it, the app reads it
back): :data:`FIELDS`, in order, each with the pandas dtype of the typed table
(:mod:`dagmath_viz.store.results`) and, for a per-trajectory metric of the step graph, the
function that computes it. Everything else derives from it: the field names
(:data:`RECORD_FIELDS`), the parts around the verdict, the record dict in field order
(:func:`ordered`) and its JSON pieces (:func:`split`), which both the reference scorer
(:mod:`dagmath_viz.score.reference`) and the fast path (:mod:`dagmath_viz.score.fast`)
build their records through, and the scored frame (:func:`records_frame`).

A new per-trajectory metric is a function of the step graph in
:mod:`dagmath_viz.score.graph` and one line here, ``Field(name, dtype, graph=function)``:
both scorers then write it (the fast path through :data:`GRAPH_METRICS` on the graph of
its clean steps, so the two stay byte-identical), the frame and the typed table carry it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from dagmath_viz.score.graph import StepGraph

if TYPE_CHECKING:  # pandas is imported where a frame is built: `dagmath score` never needs it
    import pandas as pd

__all__ = [
    "FIELDS",
    "GRAPH_METRICS",
    "HEAD_FIELDS",
    "JSON_FIELDS",
    "OTHER_FIELDS",
    "RECORD_FIELDS",
    "SCHEMA",
    "SCORED_SLICE",
    "TAIL_FIELDS",
    "VERDICT_FIELDS",
    "Field",
    "concat_frames",
    "graph_metrics",
    "ordered",
    "records_frame",
    "split",
]


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a scored record.

    ``dtype``: its pandas dtype in the typed table (nullable, so a missing value stays
    missing). ``json``: written as JSON text in Parquet and CSV (lists, and step ids of any
    type). ``graph``: for a per-trajectory metric beyond those the scorers measure
    themselves, its value as a function of the trajectory's graph of well-formed edges.
    """

    name: str
    dtype: str
    json: bool = False
    graph: Callable[[StepGraph], Any] | None = None


#: The fields of a scored record, in order (the ``dagmath score`` JSONL contract).
FIELDS: tuple[Field, ...] = (
    Field("model", "string"),
    Field("dataset", "string"),
    Field("problem_id", "string"),
    Field("sample_id", "Int64"),
    Field("difficulty", "Float64"),
    Field("domain", "string"),
    Field("n_nodes", "Int64"),
    Field("n_edges", "Int64"),
    Field("density", "Float64"),
    Field("max_in_degree", "Int64"),
    Field("max_out_degree", "Int64"),
    Field("dead_ends", "object", json=True),
    Field("closeness_rate", "Float64"),
    Field("closed", "boolean"),
    Field("ancestor_share", "Float64"),
    Field("predicted_answer", "string"),
    Field("reference_answer", "string"),
    Field("final_correct", "boolean"),
    Field("perfect", "boolean"),
    Field("class", "string"),
    Field("answer_check", "string"),
    Field("errors", "object", json=True),
    Field("source", "string"),
    Field("answer_step", "object", json=True),
)

#: Columns of a scored record, in order.
RECORD_FIELDS = tuple(f.name for f in FIELDS)
#: Each field's pandas dtype in the typed table.
SCHEMA: dict[str, str] = {f.name: f.dtype for f in FIELDS}
#: Fields written as JSON text in Parquet and CSV.
JSON_FIELDS = tuple(f.name for f in FIELDS if f.json)
#: The per-trajectory metrics computed from the step graph by :data:`FIELDS`' functions.
GRAPH_METRICS: dict[str, Callable[[StepGraph], Any]] = {
    f.name: f.graph for f in FIELDS if f.graph is not None
}

#: Record fields before the verdict, the verdict's own, and after it (RECORD_FIELDS order).
HEAD_FIELDS = RECORD_FIELDS[: RECORD_FIELDS.index("final_correct")]
VERDICT_FIELDS = ("final_correct", "perfect", "class", "answer_check")
TAIL_FIELDS = RECORD_FIELDS[RECORD_FIELDS.index("answer_check") + 1 :]
assert HEAD_FIELDS + VERDICT_FIELDS + TAIL_FIELDS == RECORD_FIELDS

_OPTS = orjson.OPT_SERIALIZE_NUMPY


def graph_metrics(graph: StepGraph) -> dict[str, Any]:
    """The values of :data:`GRAPH_METRICS` for one graph (empty while there are none)."""
    return {name: metric(graph) for name, metric in GRAPH_METRICS.items()}


def ordered(values: Mapping[str, Any]) -> dict:
    """The record of ``values`` (every field of :data:`RECORD_FIELDS`), in field order."""
    return {name: values[name] for name in RECORD_FIELDS}


def split(values: Mapping[str, Any]) -> tuple[bytes, bytes]:
    """The JSON of a record's fields before the verdict (``{"model":...`` with no closing
    brace) and after it (``,"errors":...}``), from ``values`` holding at least those."""
    head = orjson.dumps({name: values[name] for name in HEAD_FIELDS}, option=_OPTS)[:-1]
    tail = b"," + orjson.dumps({name: values[name] for name in TAIL_FIELDS}, option=_OPTS)[1:]
    return head, tail


# --------------------------------------------------------------------------- the frame

#: The one column holding a scored record's fields outside :data:`RECORD_FIELDS`, as JSON
#: text (``{"temperature": 0.7}``), or None for a record without any.
OTHER_FIELDS = "other_fields"
#: Bytes of scored JSONL parsed into records at a time (then made columns at once).
SCORED_SLICE = 1 << 20


def records_frame(records: Iterable[dict]) -> pd.DataFrame:
    """A scored DataFrame with the columns of :data:`RECORD_FIELDS` (missing ones empty).

    A record's other fields go, as JSON text, into the one column :data:`OTHER_FIELDS`:
    with a column per field, records that each carry a key of their own would make a frame
    as wide as it is long (16,000 such records took 6 GB).
    """
    import pandas as pd

    known = frozenset(RECORD_FIELDS)
    frame = pd.DataFrame.from_records([_known_fields(r, known) for r in records])
    for col in RECORD_FIELDS:
        if col not in frame.columns:
            frame[col] = None
    frame["problem_id"] = frame["problem_id"].astype(str)
    frame["difficulty"] = pd.to_numeric(frame["difficulty"], errors="coerce")
    return frame


def _known_fields(record: dict, known: frozenset[str]) -> dict:
    """``record`` with its fields outside ``known`` (:data:`RECORD_FIELDS`) folded into one."""
    if record.keys() <= known:
        return record
    other = {k: v for k, v in record.items() if k not in known}
    try:
        text = orjson.dumps(other, option=orjson.OPT_NON_STR_KEYS | _OPTS).decode()
    except TypeError:  # not JSON (a caller's own object): shown as text
        text = repr(other)
    return {**{k: v for k, v in record.items() if k in known}, OTHER_FIELDS: text}


def concat_frames(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """One frame of ``frames``' rows (index 0..n-1), with the dtypes one frame built from
    all their records would have: a column whose dtype differs between frames (bool in
    one, object with ``None`` in another) is inferred again from its values."""
    import pandas as pd

    if not frames:
        return records_frame([])
    if len(frames) == 1:
        return frames[0]
    columns = list(dict.fromkeys(c for f in frames for c in f.columns))
    # a field only some records have is missing (NaN) in the frames of the others
    frames = [f if list(f.columns) == columns else f.reindex(columns=columns) for f in frames]
    out = pd.concat(frames, ignore_index=True)
    for col in columns:
        if len({str(f[col].dtype) for f in frames}) > 1:
            out[col] = pd.Series(out[col].tolist(), index=out.index)
    return out
