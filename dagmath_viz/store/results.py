"""Scored records as a typed table: written as Parquet or CSV, read back from any of them.

``dagmath score -o run.parquet`` (or ``.csv``) writes the records of the scored JSONL as one
table with a fixed schema (:data:`SCHEMA`), and :func:`read_scored` reads JSONL, Parquet
or CSV back into the same typed DataFrame. Why a reader of our own: ``pd.read_json(...,
lines=True)`` guesses types per column, so problem ids ``"007"`` and ``"12"`` become the
integers 7 and 12 (leading zeros lost, ids no longer join with an answer key), and
``pd.read_csv`` does the same. Here the types come from the schema, never from the data.

The schema is the record contract's (:data:`dagmath_viz.score.record.SCHEMA`). The fields
whose values are lists or step ids of any type (``dead_ends``, ``errors``,
``answer_step``: :data:`~dagmath_viz.score.record.JSON_FIELDS`) are written as JSON text
in Parquet and CSV (one schema for both, lossless for a step id that is not an integer)
and decoded back by :func:`read_scored`. Fields a record carries beyond :data:`SCHEMA` (a
pre-scored file's own) are kept (as JSON text in a table file when they are not plain
text or numbers; read back as that text). CSV cells that a spreadsheet would run as
formulas are prefixed with ``'`` (:mod:`dagmath_viz.export`) and the prefix is removed
again on reading.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from pathlib import Path

import orjson
import pandas as pd

from dagmath_viz import jsonio
from dagmath_viz.export import FORMULA_PREFIXES, csv_bytes
from dagmath_viz.schema import InputError
from dagmath_viz.score.record import JSON_FIELDS, SCHEMA

__all__ = ["SUFFIXES", "read_scored", "scored_table", "table_bytes"]

#: The table formats, by the output's suffix.
SUFFIXES = (".parquet", ".csv")


def scored_table(records: Iterable[dict]) -> pd.DataFrame:
    """Scored records (dicts) as the typed DataFrame of :data:`SCHEMA` (lists as lists)."""
    frame = pd.DataFrame.from_records(list(records))
    return _typed(frame)


def table_bytes(frame: pd.DataFrame, suffix: str) -> bytes:
    """``frame`` (from :func:`scored_table`) as the bytes of a ``.parquet`` or ``.csv`` file."""
    flat = frame.copy()
    for col in flat.columns:
        plain = all(v is None or isinstance(v, str) for v in flat[col])
        if col in JSON_FIELDS or (flat[col].dtype == object and not plain):
            flat[col] = flat[col].map(_json_text, na_action="ignore").astype("string")
    if suffix == ".csv":
        return csv_bytes(flat)
    buffer = io.BytesIO()
    flat.to_parquet(buffer, index=False)
    return buffer.getvalue()


def read_scored(path: str | Path) -> pd.DataFrame:
    """The records of a ``dagmath score`` output (JSONL, ``.parquet`` or ``.csv``), typed.

    Columns follow :data:`SCHEMA` whatever the file's format: ``problem_id`` is text
    (``"007"`` keeps its zeros), counts are nullable integers, ``final_correct`` a nullable
    boolean, ``dead_ends`` and ``errors`` lists.

    Raises:
        InputError: the file cannot be read, or a line or cell is not what the format says
            (the message names the file and the place).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return _from_parquet(path)
    if suffix == ".csv":
        return _from_csv(path)
    return _from_jsonl(path)


def _from_jsonl(path: Path) -> pd.DataFrame:
    records = []
    for document in jsonio.read_jsonl(path):
        if isinstance(document.value, InputError):
            raise InputError(f"{path}: {document.value}")
        if not isinstance(document.value, dict):
            raise InputError(f"{path}: {document.location}: not a scored record (a JSON object)")
        records.append(document.value)
    return _typed(pd.DataFrame.from_records(records))


def _from_parquet(path: Path) -> pd.DataFrame:
    try:
        frame = pd.read_parquet(path)
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from None
    except Exception as exc:  # noqa: BLE001 - pyarrow's errors for a file that is not Parquet
        raise InputError(f"{path}: not a Parquet file ({type(exc).__name__}: {exc})") from None
    return _decoded(path, frame)


def _from_csv(path: Path) -> pd.DataFrame:
    data = jsonio.read_bytes(path)
    try:
        # every cell as text first: the schema types it, pandas guesses nothing
        frame = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, na_values=[""])
    except (ValueError, pd.errors.ParserError) as exc:
        raise InputError(f"{path}: not a CSV table ({' '.join(str(exc).split())})") from None
    frame.columns = [_unquoted(c) for c in frame.columns]
    for col in frame.columns:
        frame[col] = frame[col].map(_unquoted, na_action="ignore")
    return _decoded(path, frame)


def _decoded(path: Path, frame: pd.DataFrame) -> pd.DataFrame:
    """A table file's frame with its JSON text fields decoded, then typed."""
    for col in JSON_FIELDS:
        if col in frame.columns:
            frame[col] = [_json_value(path, col, i, v) for i, v in enumerate(frame[col])]
    return _typed(frame, path)


def _typed(frame: pd.DataFrame, path: Path | None = None) -> pd.DataFrame:
    """``frame`` with every :data:`SCHEMA` column (missing ones empty) of its dtype, first
    and in order; other columns after them, as they are."""
    out = {}
    for col, dtype in SCHEMA.items():
        values = frame[col] if col in frame.columns else pd.Series([None] * len(frame))
        out[col] = _as(values, dtype, col, path)
    for col in frame.columns:
        if col not in SCHEMA:
            out[col] = frame[col]
    return pd.DataFrame(out, index=pd.RangeIndex(len(frame)))


def _as(values: pd.Series, dtype: str, col: str, path: Path | None) -> pd.Series:
    if dtype == "object":
        return values.astype(object).where(values.notna(), None)
    if dtype == "string":
        # ids written as numbers by another tool ("problem_id": 7) are still text here
        return values.map(_text, na_action="ignore").astype("string")
    try:
        if values.dtype == object or pd.api.types.is_string_dtype(values.dtype):
            # text cells (a CSV file's): "True" and "3" are read as what they say
            values = values.astype(object).where(values.notna(), None)
            if dtype == "boolean":
                values = values.map(_boolean, na_action="ignore")
            else:
                values = pd.to_numeric(values, errors="raise")
        return values.astype(dtype)
    except (TypeError, ValueError) as exc:
        where = f"{path}: " if path else ""
        raise InputError(f"{where}column '{col}': not {dtype} ({exc})") from None


def _text(value: object) -> str:
    return value if isinstance(value, str) else str(value)


_BOOLEANS: dict[object, object] = {"True": True, "true": True, "False": False, "false": False}


def _boolean(value: object) -> object:
    return _BOOLEANS.get(value, value)


def _json_text(value: object) -> str | None:
    return None if value is None else orjson.dumps(value).decode()


def _json_value(path: Path, col: str, row: int, value: object) -> object:
    if value is None or (isinstance(value, float) and value != value):
        return None
    if not isinstance(value, str):
        return value
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        raise InputError(f"{path}: row {row + 1}: '{col}' is not JSON text") from None


def _unquoted(value: str) -> str:
    """A CSV cell without the quote :mod:`dagmath_viz.export` put before a formula-like one."""
    if value.startswith("'") and value[1:].startswith(FORMULA_PREFIXES):
        return value[1:]
    return value
