"""The official DAG-MATH layout: ``<model>/<dataset>/problem_<id>_all_samples.json``.

A JSON array of samples per problem (the DAG-MATH authors' shape); the file name carries
the problem id, the grandparent folder the model, the parent folder the dataset. This
module is the one place the file name is written: ``dagmath generate``, ``simulate`` and
``gsm export`` name their files through :func:`file_name`.
"""

from __future__ import annotations

import re
from pathlib import Path

from dagmath_viz.formats.common import FileContext
from dagmath_viz.formats.records import by_suffix, documents_by_suffix

__all__ = ["GLOB", "NAME", "claims", "context", "documents", "file_name", "form"]

NAME = re.compile(r"^problem_(.+)_all_samples\.jsonl?$")
#: The files of the layout, for ``Path.glob``.
GLOB = "problem_*_all_samples.json"
form = by_suffix(".jsonl")
documents = documents_by_suffix(".jsonl")


def file_name(problem_id: str) -> str:
    """The file of one problem's samples (``problem_<id>_all_samples.json``).

    >>> file_name("7")
    'problem_7_all_samples.json'
    """
    return f"problem_{problem_id}_all_samples.json"


def claims(path: Path) -> bool:
    return bool(NAME.match(path.name))


def context(path: Path) -> FileContext:
    """The model is the grandparent folder, the dataset the parent, the id in the name."""
    match = NAME.match(path.name)
    folder = path.absolute().parent  # the same names from whichever folder it is named
    return FileContext(
        file=str(path),
        model=folder.parent.name if match and folder.parent.name else None,
        dataset=folder.name or "default",
        problem_id=match.group(1) if match else None,
    )
