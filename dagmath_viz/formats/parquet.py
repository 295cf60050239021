"""Parquet files (``.parquet``), as ``Dataset.to_parquet()`` writes them: one record a row.

Read with pyarrow (a dependency already, for the frame cache); a list of step structs
comes back as a list of objects, a field a step lacks as null.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from pathlib import Path

from dagmath_viz import jsonio
from dagmath_viz.formats.records import ROWS
from dagmath_viz.schema import InputError

__all__ = ["SUFFIX", "claims", "documents", "form"]

SUFFIX = ".parquet"


def form(path: Path) -> str:
    return ROWS


def claims(path: Path) -> bool:
    return path.suffix.lower() == SUFFIX


def documents(path: Path, data: bytes) -> Iterable[jsonio.Document]:
    """One document per row (``row N``, from 1).

    Raises:
        InputError: not a readable Parquet file.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        rows = pq.read_table(io.BytesIO(data)).to_pylist()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(f"not a readable Parquet file ({exc})") from None
    return [jsonio.Document(f"row {i}", row) for i, row in enumerate(rows, start=1)]
