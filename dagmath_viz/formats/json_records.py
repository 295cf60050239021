"""JSON records in any file name: a list of samples, one object, or JSON Lines (``.jsonl``).

The catch-all of the JSON formats (the registry asks it last): scored JSONL is read here
too (:mod:`dagmath_viz.formats.scored`).
"""

from __future__ import annotations

from pathlib import Path

from dagmath_viz.formats.records import by_suffix, documents_by_suffix

__all__ = ["SUFFIXES", "claims", "documents", "form"]

SUFFIXES = (".json", ".jsonl")
form = by_suffix(".jsonl")
documents = documents_by_suffix(".jsonl")


def claims(path: Path) -> bool:
    return path.suffix.lower() in SUFFIXES
