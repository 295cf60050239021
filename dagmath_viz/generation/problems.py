"""Read the problems to send to a model: JSONL, JSON or CSV, validated before any request.

Accepted fields: ``problem_id`` (or ``id``), ``problem`` (or ``problem_text``), and the
optional ``answer``, ``difficulty`` and ``solution`` (the reference solution ``dagmath gold``
needs). Every fault is reported with the file and the place (line or record), so a run
never starts on input it would trip over halfway.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dagmath_viz import jsonio
from dagmath_viz.schema import InputError

__all__ = ["Problem", "read_problems", "safe_name"]

#: Longest problem id accepted: it becomes part of a file name.
MAX_ID_CHARS = 100
# Problem ids go into file names (problem_<id>_all_samples.json): no separators, no
# control characters, nothing that could climb out of the folder.
_BAD_ID = re.compile(r"[/\\\x00-\x1f\x7f]")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._+=-]+")


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem: its id as read (int or str), statement, and optional reference data."""

    problem_id: int | str
    text: str
    answer: str | None = None
    difficulty: float | None = None
    solution: str | None = None

    @property
    def key(self) -> str:
        """The id as a string: how file names and answer keys spell it."""
        return str(self.problem_id)


def safe_name(name: str) -> str:
    """A folder name for a model or data-set name (``org/model`` -> ``org_model``).

    Anything but letters, digits and ``._+=-`` becomes ``_``; a leading dot is replaced
    too, so the folder is never hidden (``dagmath score`` skips dot-folders).

    >>> safe_name("meta-llama/Llama-3.1-8B-Instruct")
    'meta-llama_Llama-3.1-8B-Instruct'
    >>> safe_name("../x")
    '_x'
    """
    return _UNSAFE_NAME.sub("_", name.strip()).lstrip(".") or "_"


def read_problems(path: str | Path) -> list[Problem]:
    """Every problem in ``path`` (``.jsonl``, ``.json`` or ``.csv``), validated.

    Raises:
        InputError: the file cannot be read, or a record is malformed (the message names
            the file and the line or record), or two records share an id.
    """
    path = Path(path)
    data = jsonio.read_bytes(path)  # the project's one wording for a missing file
    suffix = path.suffix.lower()
    if suffix == ".csv":
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: byte {exc.start}: not valid UTF-8") from None
        rows = _csv_rows(path, text)
    elif suffix == ".jsonl":
        rows = _jsonl_rows(path, data)
    elif suffix == ".json":
        rows = _json_rows(path, data)
    else:
        raise InputError(f"{path}: expected a .jsonl, .json or .csv file of problems")
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    for where, row in rows:
        problem = _problem(path, where, row)
        if problem.key in seen:
            raise InputError(
                f"{path}: {where}: problem id {problem.key!r} repeats the one at "
                f"{seen[problem.key]}"
            )
        seen[problem.key] = where
        problems.append(problem)
    if not problems:
        raise InputError(f"{path}: no problems found")
    return problems


def _jsonl_rows(path: Path, data: bytes) -> list[tuple[str, Any]]:
    rows = []
    for where, value in jsonio.parse_lines(data):
        if isinstance(value, InputError):  # stop at the first bad line: nothing is sent
            raise InputError(f"{path}: {value}")
        rows.append((where, value))
    return rows


def _json_rows(path: Path, data: bytes) -> list[tuple[str, Any]]:
    try:
        doc = jsonio.parse(data)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    if isinstance(doc, dict) and isinstance(doc.get("problems"), list):
        doc = doc["problems"]
    if not isinstance(doc, list):
        raise InputError(f"{path}: expected a JSON list of problems (or {{'problems': [...]}})")
    return [(f"record {i}", row) for i, row in enumerate(doc, start=1)]


def _csv_rows(path: Path, text: str) -> list[tuple[str, Any]]:
    reader = csv.DictReader(io.StringIO(text))
    fields = set(reader.fieldnames or ())
    if not fields & {"problem_id", "id"} or not fields & {"problem", "problem_text"}:
        raise InputError(
            f"{path}: line 1: the CSV needs the columns problem_id (or id) and problem "
            "(or problem_text)"
        )
    # reader.line_num is the physical line the row ended on (quoted newlines included)
    return [(f"line {reader.line_num}", row) for row in reader]


def _problem(path: Path, where: str, row: Any) -> Problem:
    def fail(message: str) -> InputError:
        return InputError(f"{path}: {where}: {message}")

    if not isinstance(row, dict):
        raise fail(f"expected an object, found {type(row).__name__}")
    pid = row.get("problem_id", row.get("id"))
    if pid is None or pid == "":
        raise fail("no problem_id (or id)")
    if isinstance(pid, bool) or not isinstance(pid, int | str):
        raise fail(f"problem_id must be a string or an integer, found {type(pid).__name__}")
    if isinstance(pid, str):
        pid = pid.strip()
        if _BAD_ID.search(pid) or len(pid) > MAX_ID_CHARS or pid in {".", ".."}:
            raise fail(
                f"problem_id {pid[:40]!r} cannot name a file (no slashes or control "
                f"characters, at most {MAX_ID_CHARS} characters)"
            )
    text = row.get("problem", row.get("problem_text"))
    if not isinstance(text, str) or not text.strip():
        raise fail("no problem text (field 'problem' or 'problem_text')")
    answer = row.get("answer")
    if isinstance(answer, bool) or not (answer is None or isinstance(answer, str | int | float)):
        raise fail(f"answer must be text or a number, found {type(answer).__name__}")
    if isinstance(answer, float) and answer.is_integer():
        answer = int(answer)
    answer = None if answer is None or str(answer).strip() == "" else str(answer).strip()
    solution = row.get("solution")
    if solution is not None and not isinstance(solution, str):
        raise fail(f"solution must be text, found {type(solution).__name__}")
    return Problem(
        problem_id=pid,
        text=text,
        answer=answer,
        difficulty=_difficulty(row.get("difficulty"), fail),
        solution=solution.strip() if solution and solution.strip() else None,
    )


def _difficulty(value: Any, fail) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise fail("difficulty must be a number")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise fail(f"difficulty {str(value)[:40]!r} is not a number") from None
    if not math.isfinite(number):
        raise fail("difficulty must be a finite number")
    return number
