"""Answer keys: ``answers.json``, ``answers.jsonl`` or ``answers.csv`` beside the data.

A key gives reference answers (and difficulties) by ``(dataset, problem_id)``; the
nearest key in a record's folder or above it applies, below an explicit ``--answers``
file and the record's own answer (:func:`with_answers`). ``dagmath generate`` writes one
(:data:`WRITTEN_NAME`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dagmath_viz import jsonio
from dagmath_viz.formats.common import answer_text, difficulty
from dagmath_viz.schema import InputError, Trajectory

__all__ = [
    "FILE_NAMES",
    "WRITTEN_NAME",
    "AnswerEntry",
    "AnswerKey",
    "AnswerKeys",
    "claims",
    "load_answer_key",
    "with_answers",
]

#: The names of an answer key (any case).
FILE_NAMES = ("answers.json", "answers.jsonl", "answers.csv")
#: The one ``dagmath generate`` writes beside its samples.
WRITTEN_NAME = FILE_NAMES[1]


def claims(path: Path) -> bool:
    """An answer key is known by its name."""
    return path.name.lower() in FILE_NAMES


def _documents(path: Path, data: bytes) -> Iterator[jsonio.Document]:
    if path.suffix.lower() == ".jsonl":
        yield from jsonio.parse_lines(data)
    else:
        yield jsonio.Document("", jsonio.parse(data))


@dataclass(frozen=True)
class AnswerKeys:
    """The answer keys of a run: the explicit one and each folder's ``answers.*`` file."""

    explicit: AnswerKey | None = None
    by_folder: dict[Path, AnswerKey] = field(default_factory=dict)
    #: each folder's keys, looked up once: finding them resolves the folder's path, a
    #: system call or more per file otherwise (not part of what the keys are)
    _found: dict[Path, list[AnswerKey]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def for_file(self, path: Path) -> list[AnswerKey]:
        """Folder keys that apply to a file: its folder's first, then each folder above."""
        if not self.by_folder:
            return []
        parent = Path(path).parent
        keys = self._found.get(parent)
        if keys is None:
            folder = parent.resolve()
            keys = [self.by_folder[d] for d in (folder, *folder.parents) if d in self.by_folder]
            self._found[parent] = keys
        return keys

    def apply(self, traj: Trajectory, keys: list[AnswerKey]) -> Trajectory:
        """``traj`` with its reference answer and difficulty filled from the keys.

        Precedence: the explicit key, the record's own answer, then the nearest folder key
        (``keys``, from :meth:`for_file`); an explicit entry without an answer (difficulty
        only) does not hide the folder keys.
        """
        return with_answers(traj, self.explicit, keys)


def with_answers(
    traj: Trajectory, explicit: AnswerKey | None, folder_keys: list[AnswerKey]
) -> Trajectory:
    """``traj`` with reference answer and difficulty from the keys (see :class:`AnswerKeys`)."""
    entries = [k.lookup(traj.dataset, traj.problem_id) for k in [explicit, *folder_keys] if k]
    entries = [e for e in entries if e is not None]
    if not entries:
        return traj
    explicit_entry = explicit.lookup(traj.dataset, traj.problem_id) if explicit else None
    reference = (explicit_entry.answer if explicit_entry else None) or traj.reference_answer
    if reference is None:
        reference = next((e.answer for e in entries if e and e.answer is not None), None)
    difficulty = traj.difficulty
    if difficulty is None:
        difficulty = next((e.difficulty for e in entries if e and e.difficulty is not None), None)
    if reference == traj.reference_answer and difficulty == traj.difficulty:
        return traj
    return replace(traj, reference_answer=reference, difficulty=difficulty)


def load_answer_key(path: str | Path) -> AnswerKey:
    """Read an answers file: a JSON object, JSON/JSONL records, or a CSV.

    Raises:
        InputError: the file cannot be read or has none of the accepted shapes.
    """
    path = Path(path)
    jsonl = path.suffix.lower() == ".jsonl"
    data = jsonio.read_lines_bytes(path) if jsonl else jsonio.read_bytes(path)
    key = AnswerKey()
    if path.suffix.lower() == ".csv":
        rows: Iterable[Any] = _csv_rows(path, data)
    else:
        rows = []
        try:
            documents = list(_documents(path, data))
        except InputError as exc:  # a .json file: the message has line and column, not the file
            raise InputError(f"{path}: {exc}") from None
        for _location, doc in documents:
            if isinstance(doc, Exception):
                raise InputError(f"{path}: {doc}")
            if isinstance(doc, dict) and "problem_id" not in doc:
                rows.extend(_object_rows(doc))
            elif isinstance(doc, list):
                rows.extend(doc)
            else:
                rows.append(doc)
    for n, row in enumerate(rows, start=1):
        if not isinstance(row, dict) or "problem_id" not in row:
            raise InputError(f"{path}: record {n}: expected an object with problem_id and answer")
        dataset = row.get("dataset")
        entry = AnswerEntry(answer_text(row.get("answer")), difficulty(row.get("difficulty")))
        key.entries[(str(dataset) if dataset else None, str(row["problem_id"]))] = entry
    return key


def _object_rows(doc: dict) -> list[dict]:
    rows = []
    for pid, value in doc.items():
        if isinstance(value, dict):
            rows.append({"problem_id": pid, **value})
        else:
            rows.append({"problem_id": pid, "answer": value})
    return rows


def _csv_rows(path: Path, data: bytes) -> list[dict]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: byte {exc.start}: not valid UTF-8") from None
    reader = csv.DictReader(io.StringIO(text))
    try:
        rows = list(reader)
    except csv.Error as exc:  # e.g. a field over the csv module's 128 KB limit
        # line_num counts the lines finished; the fault is on the next one
        raise InputError(f"{path}: line {reader.line_num + 1}: {exc}") from None
    if rows and ("problem_id" not in rows[0] or "answer" not in rows[0]):
        raise InputError(f"{path}: line 1: the CSV needs the columns problem_id and answer")
    return rows


@dataclass(slots=True)
class AnswerKey:
    """Reference answers by (dataset, problem_id); dataset ``None`` matches any dataset."""

    entries: dict[tuple[str | None, str], AnswerEntry] = field(default_factory=dict)

    def lookup(self, dataset: str, problem_id: str) -> AnswerEntry | None:
        return self.entries.get((dataset, problem_id)) or self.entries.get((None, problem_id))

    def __len__(self) -> int:
        return len(self.entries)


@dataclass(frozen=True, slots=True)
class AnswerEntry:
    answer: str | None
    difficulty: float | None
