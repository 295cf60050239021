"""JSON Lines inside a ``.json`` file: what Hugging Face's ``Dataset.to_json()`` writes.

``datasets`` writes one record per line by default, whatever the file is called (and
escapes ``/`` as ``\\/``, which any JSON reader reads back as ``/``). Such a file is told
from a JSON document by its first line: a whole JSON object followed by more content.
"""

from __future__ import annotations

from pathlib import Path

from dagmath_viz import jsonio
from dagmath_viz.formats.records import LINES, line_documents
from dagmath_viz.schema import InputError

__all__ = ["claims", "documents", "form"]

#: Bytes read at most to find the first line (a longer first line is not sniffed).
SNIFF_BYTES = 16 * 2**20
_BLOCK = 1 << 16
documents = line_documents


def form(path: Path) -> str:
    return LINES


def claims(path: Path) -> bool:
    """A ``.json`` file whose first line is a whole JSON object and is not the last line."""
    if path.suffix.lower() != ".json":
        return False
    try:
        with open(path, "rb") as handle:
            head = _first_line(handle)
            if head is None:
                return False
            rest = handle.read(_BLOCK)
            while rest and not rest.strip():
                rest = handle.read(_BLOCK)
    except OSError:
        return False  # the JSON reader says why
    if not rest.strip():
        return False
    try:
        return isinstance(jsonio.parse(head), dict)
    except InputError:
        return False


def _first_line(handle) -> bytes | None:
    """The first line when it may be one JSON object (it starts with ``{``), else None."""
    line = jsonio.strip_bom(handle.read(_BLOCK)).lstrip()
    if not line.startswith(b"{"):
        return None
    while b"\n" not in line and len(line) < SNIFF_BYTES:
        more = handle.read(_BLOCK)
        if not more:
            return None
        line += more
    head, sep, tail = line.partition(b"\n")
    if not sep:
        return None
    handle.seek(handle.tell() - len(tail))
    return head
