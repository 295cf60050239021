"""Newline-delimited JSON (``.ndjson``): JSON Lines by another name."""

from __future__ import annotations

from pathlib import Path

from dagmath_viz.formats.records import LINES, line_documents

__all__ = ["SUFFIX", "claims", "documents", "form"]

SUFFIX = ".ndjson"
documents = line_documents


def form(path: Path) -> str:
    return LINES


def claims(path: Path) -> bool:
    return path.suffix.lower() == SUFFIX
