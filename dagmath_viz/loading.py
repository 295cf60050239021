"""Read trajectories from files: the official layouts, JSONL, scored JSONL and answer keys.

Every problem met is recorded as a :class:`LoadIssue` naming the file and the place; a bad
file never stops the others from loading, and a bad record never stops its file.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from dagmath_viz.schema import CLASSES, InputError, LoadIssue, Step, Trajectory
from dagmath_viz.text import short_repr
from dagmath_viz.validation import step_name

__all__ = [
    "ANSWER_FILE_NAMES",
    "AnswerKey",
    "LoadResult",
    "load_answer_key",
    "load_paths",
    "parse_record",
]

ANSWER_FILE_NAMES = ("answers.json", "answers.jsonl", "answers.csv")
DATA_SUFFIXES = (".json", ".jsonl")
_OFFICIAL = re.compile(r"^problem_(.+)_all_samples\.jsonl?$")
_GOLD_NAME = re.compile(r"^problem_(.+)\.jsonl?$")
#: Fields that mark a record written by ``dagmath score`` (a valid app input too).
SCORED_FIELDS = frozenset({"n_nodes", "dead_ends", "closeness_rate", "class"})
#: Longest step id or parent kept verbatim when it is not an integer (see ``_as_read``).
MAX_ID_CHARS = 64


@dataclass(frozen=True, slots=True)
class AnswerEntry:
    answer: str | None
    difficulty: float | None


@dataclass(slots=True)
class AnswerKey:
    """Reference answers by (dataset, problem_id); dataset ``None`` matches any dataset."""

    entries: dict[tuple[str | None, str], AnswerEntry] = field(default_factory=dict)

    def lookup(self, dataset: str, problem_id: str) -> AnswerEntry | None:
        return self.entries.get((dataset, problem_id)) or self.entries.get((None, problem_id))

    def __len__(self) -> int:
        return len(self.entries)


@dataclass(frozen=True, slots=True)
class LoadResult:
    """What a load produced: trajectories, pre-scored records, and every issue met."""

    trajectories: tuple[Trajectory, ...]
    issues: tuple[LoadIssue, ...]
    files_read: int
    scored_records: tuple[dict, ...] = ()

    @property
    def errors(self) -> tuple[LoadIssue, ...]:
        return tuple(i for i in self.issues if i.severity == "error")

    @property
    def unreadable_files(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(i.file for i in self.issues if i.location == "file"))


# --------------------------------------------------------------------------- JSON reading


def _decode_error(exc: orjson.JSONDecodeError, data: bytes) -> str:
    # orjson's message already says what failed; lineno/colno say where. Invalid UTF-8 is
    # checked before parsing, so orjson then says "line 1, column 1": find the byte instead.
    bad_byte = _utf8_fault(data)
    if bad_byte:
        return bad_byte
    msg = str(exc).split(": line ")[0]
    return f"line {exc.lineno}, column {exc.colno}: invalid JSON ({msg})"


def _utf8_fault(data: bytes, first_line: int = 1) -> str | None:
    """Where ``data`` stops being UTF-8 (line, column, the byte), or None when it is UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = first_line + data.count(b"\n", 0, exc.start)
        column = len(data[line_start : exc.start].decode("utf-8", "replace")) + 1
        return (
            f"line {line}, column {column}: invalid JSON (not UTF-8: byte 0x{data[exc.start]:02x})"
        )
    return None


def _json_type(value: Any) -> str:
    """The type of a JSON value as messages name it (``null`` for None)."""
    return "null" if value is None else type(value).__name__


def read_json_documents(path: Path, data: bytes) -> Iterator[tuple[str, Any]]:
    """Yield (location, value) per JSON document: one for .json, one per line for .jsonl.

    Raises:
        InputError: the file (or one JSONL line, reported and skipped by the caller) is
            not valid JSON; the message carries the line and column.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]  # a UTF-8 byte-order mark is harmless; strip it
    if path.suffix.lower() == ".jsonl":
        for lineno, line in enumerate(data.split(b"\n"), start=1):
            if line.strip():
                try:
                    yield f"line {lineno}", orjson.loads(line)
                except orjson.JSONDecodeError as exc:
                    message = _utf8_fault(line, first_line=lineno) or (
                        f"line {lineno}, column {exc.colno}: invalid JSON "
                        f"({str(exc).split(': line ')[0]})"
                    )
                    yield f"line {lineno}", InputError(message)
        return
    try:
        yield "", orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(_decode_error(exc, data)) from None


# --------------------------------------------------------------------------- answer keys


def _answer_text(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str | int | float):
        return str(value).strip()
    return None


def _difficulty(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def load_answer_key(path: str | Path) -> AnswerKey:
    """Read an answers file: a JSON object, JSON/JSONL records, or a CSV.

    Raises:
        InputError: the file cannot be read or has none of the accepted shapes.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read answers file ({exc.strerror})") from None
    key = AnswerKey()
    if path.suffix.lower() == ".csv":
        rows: Iterable[Any] = _csv_rows(path, data)
    else:
        rows = []
        try:
            documents = list(read_json_documents(path, data))
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
        entry = AnswerEntry(_answer_text(row.get("answer")), _difficulty(row.get("difficulty")))
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
    rows = list(csv.DictReader(io.StringIO(text)))
    if rows and ("problem_id" not in rows[0] or "answer" not in rows[0]):
        raise InputError(f"{path}: line 1: the CSV needs the columns problem_id and answer")
    return rows


# --------------------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class _Context:
    """What a file's place tells about its records."""

    file: str
    model: str | None  # from the official layout's grandparent folder
    dataset: str
    problem_id: str | None  # from the file name


def _context(path: Path) -> _Context:
    official = _OFFICIAL.match(path.name)
    gold = _GOLD_NAME.match(path.name)
    pid = official.group(1) if official else (gold.group(1) if gold else None)
    return _Context(
        file=str(path),
        model=path.parent.parent.name if official and path.parent.parent.name else None,
        dataset=path.parent.name or "default",
        problem_id=pid,
    )


def _parse_steps(raw: Any, faults: list[str]) -> tuple[tuple[Step, ...], bool]:
    """Steps as read, and whether they use the gold spelling (``node``/``edge``)."""
    if raw is None:
        faults.append("field 'steps' is missing")
        return (), False
    if not isinstance(raw, list):
        faults.append(f"field 'steps' is {type(raw).__name__}, expected a list")
        return (), False
    steps = []
    gold = False
    for i, item in enumerate(raw, start=1):
        if not isinstance(item, dict):
            faults.append(f"step at position {i}: is {_json_type(item)}, expected an object")
            continue
        gold = gold or "node" in item
        sid = _as_read(item.get("step_id"))
        parents = item.get("direct_dependent_steps")
        if parents is None:
            parents = ()
        elif isinstance(parents, list):
            parents = tuple(_as_read(p) for p in parents)
        else:
            faults.append(
                f"{step_name(sid)}: direct_dependent_steps is {_json_type(parents)}, "
                "expected a list or null"
            )
            parents = (_as_read(parents),) if isinstance(parents, int | str) else ()
        text = _text_field(item, ("text", "node"), sid, faults)
        why = _text_field(item, ("thinking", "edge"), sid, faults)
        steps.append(Step(step_id=sid, parents=parents, text=text, justification=why))
    return tuple(steps), gold


def _as_read(value: Any) -> Any:
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


def _text_field(item: dict, names: tuple[str, str], sid: Any, faults: list[str]) -> str:
    for name in names:
        value = item.get(name)
        if value is None:
            continue
        if isinstance(value, str):
            return value
        faults.append(f"{step_name(sid)}: field '{name}' is {_json_type(value)}, expected text")
        return short_repr(value, 1000)
    return ""


def parse_record(
    obj: Any, ctx_file: str, location: str, position: int, *, context: _Context | None = None
) -> tuple[Trajectory | None, list[LoadIssue]]:
    """One JSON record -> a Trajectory (kept even when faulty) and the issues it raised."""
    ctx = context or _Context(file=ctx_file, model=None, dataset="default", problem_id=None)
    where = location or f"record {position + 1}"
    if not isinstance(obj, dict):
        return None, [
            LoadIssue(
                ctx_file, where, f"record is {_json_type(obj)}, expected an object with 'steps'"
            )
        ]
    issues: list[LoadIssue] = []
    faults: list[str] = []
    steps, gold = _parse_steps(obj.get("steps"), faults)
    pid = obj.get("problem_id", ctx.problem_id)
    if pid is None or isinstance(pid, dict | list):
        pid = ctx.problem_id or Path(ctx_file).stem
    sid = obj.get("sample_id", position)
    if type(sid) is not int:
        issues.append(
            LoadIssue(
                ctx_file,
                where,
                f"sample_id {short_repr(sid)} is not an integer; using its position {position}",
                "warning",
            )
        )
        sid = position
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    model = _first_str(meta.get("model"), obj.get("model")) or ctx.model
    model = model or ("gold" if gold else Path(ctx_file).stem)
    reference = _answer_text(obj.get("answer", obj.get("gold_answer")))
    if reference is None and gold:
        reference = _answer_text(obj.get("final_answer"))
    traj = Trajectory(
        model=model,
        dataset=_first_str(obj.get("dataset")) or ctx.dataset,
        problem_id=str(pid),
        sample_id=sid,
        steps=steps,
        problem_text=_first_str(obj.get("problem_text"), obj.get("problem")) or "",
        reference_answer=reference,
        difficulty=_difficulty(obj.get("difficulty")),
        domain=_first_str(obj.get("domain")),
        source=f"{ctx_file}{'[' + str(position) + ']' if not location else ':' + location}",
        load_errors=tuple(faults),
    )
    return traj, issues


def _first_str(*values: Any) -> str | None:
    for value in values:
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


# --------------------------------------------------------------------------- files and folders


def load_file(path: Path) -> tuple[list[Trajectory], list[dict], list[LoadIssue]]:
    """Every trajectory (and pre-scored record) in one file, with the issues met."""
    ctx = _context(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return [], [], [LoadIssue(str(path), "file", f"cannot read ({exc.strerror})")]
    trajectories: list[Trajectory] = []
    scored: list[dict] = []
    issues: list[LoadIssue] = []
    try:
        documents = list(read_json_documents(path, data))
    except InputError as exc:
        return [], [], [LoadIssue(str(path), "file", str(exc))]
    position = 0
    for location, doc in documents:
        if isinstance(doc, InputError):
            # keep the column: "line 3" is the location, "column 7: invalid JSON" the message
            issues.append(LoadIssue(str(path), location, str(doc).removeprefix(f"{location}, ")))
            continue
        if isinstance(doc, list):
            records = [
                (f"{location + ', ' if location else ''}item {i + 1}", r) for i, r in enumerate(doc)
            ]
        elif isinstance(doc, dict):
            records = [(location, doc)]
        else:
            issues.append(
                LoadIssue(
                    str(path),
                    location or "top level",
                    f"JSON {_json_type(doc)} found, expected a list of "
                    "samples or an object with 'steps'",
                )
            )
            continue
        for where, record in records:
            if isinstance(record, dict) and SCORED_FIELDS <= record.keys():
                fault = _scored_fault(record)
                if fault:
                    issues.append(LoadIssue(str(path), where or "record", fault))
                else:
                    scored.append(record)
                continue
            traj, found = parse_record(record, str(path), where, position, context=ctx)
            issues.extend(found)
            position += 1
            if traj is not None:
                trajectories.append(traj)
    return trajectories, scored, issues


_SCORED_NUMBERS = (
    "n_nodes", "n_edges", "density", "max_in_degree", "max_out_degree", "closeness_rate",
)  # fmt: skip


def _scored_fault(record: dict) -> str | None:
    """Why a pre-scored record cannot be aggregated (validated here, once, at the edge)."""
    for name in ("model", "dataset", "problem_id"):
        if record.get(name) is None:
            return f"scored record lacks '{name}'"
    for name in _SCORED_NUMBERS:
        value = record.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
            return f"scored record: '{name}' is {short_repr(value)}, expected a number"
    if record.get("class") not in CLASSES:
        return f"scored record: unknown class {short_repr(record.get('class'))}"
    closed = record.get("closed")
    if not isinstance(closed, bool):
        return f"scored record: 'closed' is {short_repr(closed)}, expected true or false"
    for name in ("final_correct", "perfect"):
        value = record.get(name)
        if value is not None and not isinstance(value, bool):
            return f"scored record: '{name}' is {short_repr(value)}, expected true, false or null"
    if not isinstance(record.get("dead_ends"), list):
        return "scored record: 'dead_ends' is not a list"
    return None


def _discover(paths: Sequence[str | Path]) -> tuple[list[Path], list[Path], list[LoadIssue]]:
    """Data files and answer files under the given paths; refuses links leading outside.

    A path given by name is the user's choice and read wherever it leads (a link
    included); inside a folder, a link (to a file or a folder) that leads out of that
    folder is refused and reported, so a results folder cannot make us read elsewhere.
    """
    data_files: list[Path] = []
    answer_files: list[Path] = []
    issues: list[LoadIssue] = []
    for raw in paths:
        root = Path(raw)
        if not root.exists():
            issues.append(LoadIssue(str(root), "file", "no such file or folder"))
            continue
        if root.is_file():
            if root.name.lower() in ANSWER_FILE_NAMES:
                answer_files.append(root)
            elif root.suffix.lower() in DATA_SUFFIXES:
                data_files.append(root)
            else:
                issues.append(LoadIssue(str(root), "file", "skipped: not a .json or .jsonl file"))
            continue
        found, refused = _walk(root)
        issues.extend(LoadIssue(str(p), "file", reason) for p, reason in refused)
        for p in found:
            if p.name.lower() in ANSWER_FILE_NAMES:
                answer_files.append(p)
            elif p.suffix.lower() in DATA_SUFFIXES:
                data_files.append(p)
    return data_files, answer_files, issues


def _walk(root: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Regular files under ``root`` (sorted), and the links in it refused with the reason.

    Anything whose name, or a folder's name on the way, starts with ``.`` is skipped.

    Links to folders are not followed (``rglob`` skips them); one that leads outside is
    refused, one that stays inside adds nothing its target does not already hold. A link
    that leads outside to nothing is ignored like any broken link; a loop is reported.
    """
    root_resolved = root.resolve()
    found: list[Path] = []
    refused: list[tuple[Path, str]] = []
    for p in sorted(root.rglob("*")):
        # dot-files and dot-folders are private state (a generate run's journal, temporary
        # files, editor and VCS folders), never results
        if any(part.startswith(".") for part in p.relative_to(root).parts):
            continue
        if p.is_symlink():
            try:
                target = p.resolve()
            except (OSError, RuntimeError):  # Python 3.11 raises RuntimeError on a loop
                refused.append((p, "refused: a link that loops"))
                continue
            if not target.is_relative_to(root_resolved):
                if target.exists():
                    refused.append((p, f"refused: a link leading outside the data folder {root}"))
                continue
        if p.is_file():
            found.append(p)
    return found, refused


def load_paths(
    paths: Sequence[str | Path], answers: str | Path | AnswerKey | None = None
) -> LoadResult:
    """Load every trajectory under ``paths`` (files or folders, read recursively).

    Reference answers come, in order of precedence, from ``answers``, from the record's
    ``answer``/``gold_answer`` field, from a gold file's ``final_answer``, and from the
    nearest ``answers.json|jsonl|csv`` in the record's folder or above it (within the
    given folder). Difficulty from an answer key fills records that lack one.

    Raises:
        InputError: the explicit ``answers`` file cannot be read.
    """
    explicit = load_answer_key(answers) if isinstance(answers, str | Path) else answers
    data_files, answer_files, issues = _discover(paths)
    folder_keys: dict[Path, AnswerKey] = {}
    for f in answer_files:
        try:
            folder_keys[f.parent.resolve()] = load_answer_key(f)
        except InputError as exc:
            issues.append(LoadIssue(str(f), "file", str(exc).removeprefix(f"{f}: ")))
    trajectories: list[Trajectory] = []
    scored: list[dict] = []
    for f in data_files:
        found, found_scored, found_issues = load_file(f)
        issues.extend(found_issues)
        scored.extend(found_scored)
        keys = _keys_for(f, folder_keys)
        trajectories.extend(_with_answers(t, explicit, keys) for t in found)
    return LoadResult(
        trajectories=tuple(trajectories),
        issues=tuple(issues),
        files_read=len(data_files) + len(answer_files),
        scored_records=tuple(scored),
    )


def _keys_for(path: Path, folder_keys: dict[Path, AnswerKey]) -> list[AnswerKey]:
    """Answer keys that apply to a file: its folder's first, then each folder above."""
    if not folder_keys:
        return []
    folder = path.parent.resolve()
    return [folder_keys[d] for d in (folder, *folder.parents) if d in folder_keys]


def _with_answers(
    traj: Trajectory, explicit: AnswerKey | None, folder_keys: list[AnswerKey]
) -> Trajectory:
    entries = [k.lookup(traj.dataset, traj.problem_id) for k in [explicit, *folder_keys] if k]
    entries = [e for e in entries if e is not None]
    if not entries:
        return traj
    explicit_entry = explicit.lookup(traj.dataset, traj.problem_id) if explicit else None
    # the explicit file, then the record's own answer, then the nearest folder key; an
    # explicit entry without an answer (difficulty only) does not hide the folder keys
    reference = (explicit_entry.answer if explicit_entry else None) or traj.reference_answer
    if reference is None:
        reference = next((e.answer for e in entries if e.answer is not None), None)
    difficulty = traj.difficulty
    if difficulty is None:
        difficulty = next((e.difficulty for e in entries if e.difficulty is not None), None)
    if reference == traj.reference_answer and difficulty == traj.difficulty:
        return traj
    from dataclasses import replace

    return replace(traj, reference_answer=reference, difficulty=difficulty)
