"""Gold files: ``<dataset>/problem_<id>.json``, the reference DAGs (``node``/``edge`` steps).

The file name carries the problem id, the folder the dataset; a record in the gold
spelling is the model ``gold`` and may give its reference as ``final_answer``
(:func:`dagmath_viz.formats.records.parse_record`).
"""

from __future__ import annotations

import re
from pathlib import Path

from dagmath_viz.formats.common import FileContext
from dagmath_viz.formats.records import by_suffix, documents_by_suffix

__all__ = ["NAME", "claims", "context", "documents", "form"]

#: ``problem_<id>.json``; the published gold benchmark writes ``problem_<id>_final.json``.
NAME = re.compile(r"^problem_(.+?)(?:_final)?\.jsonl?$")
form = by_suffix(".jsonl")
documents = documents_by_suffix(".jsonl")


def claims(path: Path) -> bool:
    return bool(NAME.match(path.name))


def context(path: Path) -> FileContext:
    """The dataset is the folder, the problem id in the name."""
    match = NAME.match(path.name)
    folder = path.absolute().parent  # the same names from whichever folder it is named
    return FileContext(str(path), None, folder.name or "default",
                       match.group(1) if match else None)  # fmt: skip
