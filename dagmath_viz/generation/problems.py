"""Read the problems to send to a model, validated before any request: JSONL, JSON, CSV, and
the Hugging Face file forms (``Dataset.to_json()``'s JSON Lines in a ``.json`` file,
``.ndjson``, ``.jsonl.gz``, ``.parquet``: GSM8K is published as Parquet), each read as the
format registry reads it.

Accepted fields: ``problem_id`` (or ``id``), ``problem`` (or ``problem_text``), and the
optional ``answer``, ``difficulty`` and ``solution`` (the reference solution ``dagmath gold``
needs). Every fault is reported with the file and the place (line or record), so a run
never starts on input it would trip over halfway.

Files whose columns are named otherwise are read through a field map (``--map
problem_id=unique_id,problem_text=problem`` for MATH-500): each of our fields it names is
read from that column. With a map that names no ``problem_id``, a record without
``problem_id`` or ``id`` gets its 0-based position among the file's records (GSM8K has no
ids). An answer holding ``####`` is the text after its last ``####`` (GSM8K writes the
worked solution, then ``#### 72``).
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dagmath_viz import jsonio
from dagmath_viz.formats.records import LINES
from dagmath_viz.formats.registry import documents_of, record_form
from dagmath_viz.schema import InputError

__all__ = [
    "FIELDS",
    "PROBLEM_FILES",
    "Problem",
    "file_stem",
    "parse_field_map",
    "read_problems",
    "safe_name",
]

#: Longest problem id accepted: it becomes part of a file name.
MAX_ID_CHARS = 100
# Problem ids go into file names (problem_<id>_all_samples.json): no control characters,
# and separators become '_' in the name (MATH-500's ids are paths: test/algebra/1.json).
_BAD_ID = re.compile(r"[\x00-\x1f\x7f]")
_SEPARATOR = re.compile(r"[/\\]")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._+=-]+")
#: Our fields a field map may name, each with the names read when it names none.
FIELDS: dict[str, tuple[str, ...]] = {
    "problem_id": ("problem_id", "id"),
    "problem_text": ("problem", "problem_text"),
    "answer": ("answer",),
    "difficulty": ("difficulty",),
    "solution": ("solution",),
}
_FIELD_ALIASES = {"problem": "problem_text", "id": "problem_id"}
#: Problem files read a record a line (or a row) through the format registry.
_ROW_FILES = (".ndjson", ".jsonl.gz", ".parquet")
#: What a problems file may be, in words.
PROBLEM_FILES = ".jsonl, .json, .csv, .ndjson, .jsonl.gz or .parquet"


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
        """The id as a string: how the journal and answer keys spell it."""
        return str(self.problem_id)

    @property
    def file_key(self) -> str:
        """The id as file names spell it: separators become ``_``."""
        return _SEPARATOR.sub("_", self.key)


def parse_field_map(text: str, fields: Iterable[str] = FIELDS) -> dict[str, str]:
    """``problem_id=unique_id,problem_text=problem`` -> our field: the file's column.

    ``fields`` are the names a map may set (``dagmath depends`` has its own).

    >>> parse_field_map("problem_id=unique_id, problem=question")
    {'problem_id': 'unique_id', 'problem_text': 'question'}

    Raises:
        ValueError: an entry is not ``FIELD=COLUMN``, names an unknown field, or repeats one.
    """
    out: dict[str, str] = {}
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        field, sep, column = (part.strip() for part in entry.partition("="))
        if not sep or not field or not column:
            raise ValueError(f"{entry!r} is not FIELD=COLUMN")
        field = _FIELD_ALIASES.get(field, field)
        if field not in fields:
            raise ValueError(f"{field!r} is not one of {', '.join(fields)}")
        if field in out:
            raise ValueError(f"{field!r} is mapped twice")
        out[field] = column
    if not out:
        raise ValueError("no FIELD=COLUMN entry")
    return out


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


def file_stem(path: str | Path) -> str:
    """A file's name without its ending, ``.jsonl.gz`` whole: the default data-set name.

    >>> file_stem("data/gsm8k_test.jsonl.gz"), file_stem("math500.jsonl")
    ('gsm8k_test', 'math500')
    """
    name = Path(path).name
    gz = next((e for e in _ROW_FILES if "." in e[1:] and name.lower().endswith(e)), None)
    return name[: -len(gz)] if gz else Path(name).stem


def read_problems(path: str | Path, field_map: dict[str, str] | None = None) -> list[Problem]:
    """Every problem in ``path`` (see :data:`PROBLEM_FILES`), validated.

    ``field_map`` (from :func:`parse_field_map`) names the columns our fields are read from.

    Raises:
        InputError: the file cannot be read, or a record is malformed (the message names
            the file and the line or record), or two records share an id (or a file name).
    """
    path = Path(path)
    columns = _columns(field_map)
    index_ids = field_map is not None and "problem_id" not in field_map
    data = jsonio.read_bytes(path)  # the project's one wording for a missing file
    suffix = path.suffix.lower()
    if suffix == ".csv":
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: byte {exc.start}: not valid UTF-8") from None
        rows = _csv_rows(path, text, columns, index_ids)
    elif suffix == ".jsonl" or (suffix == ".json" and record_form(path) == LINES):
        rows = _jsonl_rows(path, data)  # Dataset.to_json() writes JSON Lines in a .json file
    elif suffix == ".json":
        rows = _json_rows(path, data)
    elif path.name.lower().endswith(_ROW_FILES):
        rows = _document_rows(path, data)
    else:
        raise InputError(f"{path}: expected a {PROBLEM_FILES} file of problems")
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    files: dict[str, tuple[str, str]] = {}
    for index, (where, row) in enumerate(rows):
        problem = _problem(path, where, row, columns, index if index_ids else None)
        if problem.key in seen:
            raise InputError(
                f"{path}: {where}: problem id {problem.key!r} repeats the one at "
                f"{seen[problem.key]}"
            )
        other = files.get(problem.file_key)
        if other is not None:
            raise InputError(
                f"{path}: {where}: problem ids {problem.key!r} and {other[0]!r} (at "
                f"{other[1]}) make the same file name"
            )
        seen[problem.key] = where
        files[problem.file_key] = (problem.key, where)
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


def _document_rows(path: Path, data: bytes) -> list[tuple[str, Any]]:
    """The records of a file the registry reads a record a line or row (``line N``,
    ``row N``), stopping at the first bad one (nothing is sent)."""
    rows = []
    try:
        for where, value in documents_of(path, data):
            if isinstance(value, InputError):
                raise value
            rows.append((where or "record 1", value))
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
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


def _columns(field_map: dict[str, str] | None) -> dict[str, tuple[str, ...]]:
    """The column names each of our fields is read from (the map's, else the defaults)."""
    return {f: (field_map[f],) if field_map and f in field_map else d for f, d in FIELDS.items()}


def _csv_rows(
    path: Path, text: str, columns: dict[str, tuple[str, ...]], ids_optional: bool
) -> list[tuple[str, Any]]:
    reader = csv.DictReader(io.StringIO(text))
    fields = set(reader.fieldnames or ())
    lacking = [
        f
        for f in ("problem_id", "problem_text")
        if not fields & set(columns[f]) and not (f == "problem_id" and ids_optional)
    ]
    if lacking:
        wanted = " and ".join(_either(columns[f]) for f in lacking)
        raise InputError(f"{path}: line 1: the CSV needs the columns {wanted}")
    # reader.line_num is the physical line the row ended on (quoted newlines included)
    return [(f"line {reader.line_num}", row) for row in reader]


def _either(names: tuple[str, ...]) -> str:
    """``problem_id (or id)``."""
    return names[0] + "".join(f" (or {n})" for n in names[1:])


def _get(row: dict, names: tuple[str, ...]) -> Any:
    for name in names:
        if name in row:
            return row[name]
    return None


def _problem(
    path: Path,
    where: str,
    row: Any,
    columns: dict[str, tuple[str, ...]],
    index: int | None = None,
) -> Problem:
    def fail(message: str) -> InputError:
        return InputError(f"{path}: {where}: {message}")

    if not isinstance(row, dict):
        raise fail(f"expected an object, found {type(row).__name__}")
    pid = _get(row, columns["problem_id"])
    if (pid is None or pid == "") and index is not None:
        pid = index  # a map without problem_id: the record's 0-based position
    if pid is None or pid == "":
        raise fail(
            f"no {_either(columns['problem_id'])}; --map can name the id's column, or map "
            "other fields only to number the records from 0"
        )
    if isinstance(pid, bool) or not isinstance(pid, int | str):
        raise fail(f"problem_id must be a string or an integer, found {type(pid).__name__}")
    if isinstance(pid, str):
        pid = pid.strip()
        if (
            _BAD_ID.search(pid)
            or len(pid) > MAX_ID_CHARS
            or any(part in {".", ".."} for part in _SEPARATOR.split(pid))
        ):
            raise fail(
                f"problem_id {pid[:40]!r} cannot name a file (no control characters, no "
                f"'.' or '..' between slashes, at most {MAX_ID_CHARS} characters)"
            )
    text = _get(row, columns["problem_text"])
    if not isinstance(text, str) or not text.strip():
        shown = " or ".join(repr(c) for c in columns["problem_text"])
        raise fail(f"no problem text (field {shown})")
    answer = _get(row, columns["answer"])
    if isinstance(answer, bool) or not (answer is None or isinstance(answer, str | int | float)):
        raise fail(f"answer must be text or a number, found {type(answer).__name__}")
    if isinstance(answer, float) and answer.is_integer():
        answer = int(answer)
    if isinstance(answer, str) and "####" in answer:
        answer = answer.rsplit("####", 1)[1]  # GSM8K: the worked solution, then #### 72
    answer = None if answer is None or str(answer).strip() == "" else str(answer).strip()
    solution = _get(row, columns["solution"])
    if solution is not None and not isinstance(solution, str):
        raise fail(f"solution must be text, found {type(solution).__name__}")
    return Problem(
        problem_id=pid,
        text=text,
        answer=answer,
        difficulty=_difficulty(_get(row, columns["difficulty"]), fail),
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
