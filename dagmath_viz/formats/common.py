"""What the format readers share: the result of reading a file, and the small value readers.

Every reader turns a file into a :class:`FileLoad`; the helpers here read one JSON value
the same way in every format (a text field, a step id, an answer, a difficulty), so a
malformed value is described alike whichever file it came from.
"""

from __future__ import annotations

import math
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from dagmath_viz import jsonio
from dagmath_viz.schema import Fault, InputError, LoadIssue, Trajectory
from dagmath_viz.text import short_repr, step_name

__all__ = [
    "MAX_COMPANION_BYTES",
    "MAX_ID_CHARS",
    "FileContext",
    "FileLoad",
    "answer_text",
    "as_read",
    "companion_refusal",
    "difficulty",
    "domain_text",
    "fault",
    "file_failure",
    "head_bytes",
    "first_str",
    "is_sample_id",
    "json_type",
    "text_field",
    "without_file",
]

#: Longest step id or parent kept verbatim when it is not an integer (see :func:`as_read`).
MAX_ID_CHARS = 64


#: The largest companion file read (a Thought Anchors ``base_solution.json`` holds the whole
#: chain twice: a few hundred KB in the published data; an lm-eval results file, tens of KB).
MAX_COMPANION_BYTES = 64 * 2**20


def companion_refusal(path: Path, cap: int = MAX_COMPANION_BYTES) -> str | None:
    """Why the companion file ``path`` (read beside a data file, never on its own) is not
    to be opened, or None when it may be: only a regular file of its own folder of at most
    ``cap`` bytes is. A link (which may lead anywhere: out of the folder, to ``/dev/zero``),
    a FIFO (which would block the reader), a socket or a device is refused unopened;
    ``jsonio.NO_SUCH_FILE`` when there is none. Checked with ``lstat``, before any open.
    """
    try:
        info = path.lstat()
    except FileNotFoundError:
        return jsonio.NO_SUCH_FILE
    except OSError as exc:
        return f"cannot read ({exc.strerror or exc})"
    if stat.S_ISLNK(info.st_mode):
        return "refused: a link (companions are read only as regular files in their own folder)"
    if not stat.S_ISREG(info.st_mode):
        return "skipped: not a regular file"
    if info.st_size > cap:
        return f"skipped: {info.st_size} bytes, over the {cap} read"
    return None


class FileLoad(NamedTuple):
    """What one file holds: trajectories, pre-scored records, and the issues met."""

    trajectories: list[Trajectory]
    scored: list[dict]
    issues: list[LoadIssue]


@dataclass(frozen=True, slots=True)
class FileContext:
    """What a file's place tells about its records (model, dataset, problem)."""

    file: str
    model: str | None  # from the official layout's grandparent folder
    dataset: str
    problem_id: str | None  # from the file name


def file_failure(path: Path, exc: InputError) -> FileLoad:
    """The load of a file that could not be read at all: one issue at ``file``."""
    return FileLoad([], [], [LoadIssue(str(path), "file", without_file(exc, path))])


def text_field(
    item: dict, names: tuple[str, str], sid: Any, faults: list[Fault], position: int
) -> str:
    """The first of ``names`` present in ``item`` as text; a non-text value is a fault."""
    for name in names:
        value = item.get(name)
        if value is None:
            continue
        if isinstance(value, str):
            return value
        message = f"{step_name(sid)}: field '{name}' is {json_type(value)}, expected text"
        faults.append(fault(sid, message, position))
        return short_repr(value, 1000)
    return ""


def as_read(value: Any) -> Any:
    """A step id or parent as read, when it is a JSON scalar; else a short text naming it.

    Ids that are not integers make the trajectory illegal whatever they are, but a nested
    list (JSON allows 1,000 levels) or a megabyte of text would then travel through every
    message, record and page: keep a bounded description instead.
    """
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str) and len(value) <= MAX_ID_CHARS:
        return value
    return short_repr(value, MAX_ID_CHARS)


def fault(step_id: Any, message: str, position: int | None = None) -> Fault:
    """A fault found while reading (kind ``record``), at ``position`` in the steps kept."""
    return Fault(step_id, "record", message, () if position is None else (position,))


def first_str(*values: Any) -> str | None:
    """The first value that is non-blank text, stripped."""
    for value in values:
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def head_bytes(path: Path, limit: int) -> bytes | None:
    """The first ``limit`` bytes of ``path``, without a BOM or leading white space, for a
    format's claim to look at; None when the file cannot be opened (its reader says why)."""
    try:
        with open(path, "rb") as handle:
            return jsonio.strip_bom(handle.read(limit)).lstrip()
    except OSError:
        return None


def domain_text(value: Any) -> str | None:
    """A record's domain as text: a string, or a list of them joined with ``"; "`` (the
    gold benchmark writes Omni-MATH's ``["Mathematics -> Algebra -> ..."]``).

    >>> domain_text(["Mathematics -> Algebra", " ", "Mathematics -> Geometry"])
    'Mathematics -> Algebra; Mathematics -> Geometry'
    >>> domain_text(3) is None
    True
    """
    if isinstance(value, list):
        return "; ".join(s for s in (first_str(v) for v in value) if s) or None
    return first_str(value)


def answer_text(value: Any) -> str | None:
    """An answer as text (``12.0`` is ``12``); None for anything that is not a scalar.

    GSM8K's answers are the worked solution, then ``#### <number>`` (and lm-eval's own
    gsm8k task logs that whole text as the target): such an answer is the text after its
    last ``####``, as ``dagmath generate`` reads a problem file.

    >>> answer_text("48/2 = <<48/2=24>>24\\n#### 72"), answer_text(12.0)
    ('72', '12')
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str) and GSM8K_MARK in value:
        return value.rsplit(GSM8K_MARK, 1)[1].strip()
    if isinstance(value, str | int | float):
        return str(value).strip()
    return None


#: What ends a GSM8K answer's worked solution: the final answer follows it.
GSM8K_MARK = "####"


def difficulty(value: Any) -> float | None:
    """A finite number, or None."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def is_sample_id(value: Any) -> bool:
    """An integer that fits a 64-bit signed column (tables and the app's keys hold them)."""
    return type(value) is int and -(2**63) <= value < 2**63


def json_type(value: Any) -> str:
    """The type of a JSON value as messages name it (``null`` for None)."""
    return "null" if value is None else type(value).__name__


def without_file(exc: InputError, path: Path) -> str:
    """An error's message without the leading ``<path>: `` (the issue names the file)."""
    return str(exc).removeprefix(f"{path}: ")
