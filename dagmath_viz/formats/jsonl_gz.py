"""Gzipped JSON Lines (``.jsonl.gz``), as ``datasets`` and many eval harnesses write them."""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterable
from pathlib import Path

from dagmath_viz import jsonio
from dagmath_viz.formats.records import ROWS
from dagmath_viz.schema import InputError

__all__ = ["MAX_INFLATED_BYTES", "SUFFIX", "claims", "documents", "form"]

SUFFIX = ".jsonl.gz"
#: The most a file may inflate to (a small file can inflate without bound).
MAX_INFLATED_BYTES = 4 * 2**30


def form(path: Path) -> str:
    return ROWS


def claims(path: Path) -> bool:
    return path.name.lower().endswith(SUFFIX)


def documents(path: Path, data: bytes) -> Iterable[jsonio.Document]:
    """The lines of the inflated file (``line N``).

    Raises:
        InputError: not a readable gzip file, or it inflates past the cap.
    """
    out = bytearray()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as handle:
            while block := handle.read(1 << 20):
                out += block
                if len(out) > MAX_INFLATED_BYTES:
                    raise InputError(f"inflates to over {MAX_INFLATED_BYTES} bytes")
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"not a readable gzip file ({exc})") from None
    return jsonio.parse_lines(bytes(out))
