"""Read trajectories from files: discovery, every layout, answer keys, scored JSONL.

Loading owns the knowledge of files. :data:`LAYOUTS` says which files each layout claims
and how one is read (the official DAG-MATH layout, gold files, JSON records and JSONL,
scored JSONL, Thought Anchors, answer keys); :func:`discover` walks the given paths and
reads the answer keys; :func:`load_file` reads one file; :func:`load_paths` does both.
Bytes become JSON only through :mod:`dagmath_viz.jsonio`.

The module reads top down, each function before the ones it calls: a whole run
(:func:`load_paths`), discovery and the answer keys, one file (:func:`load_file`) and its
readers (JSON records, scored JSONL, Thought Anchors), what the readers share, and last
:data:`LAYOUTS`, which names the readers and so follows them.

Every problem met is recorded as a :class:`LoadIssue` naming the file and the place; a bad
file never stops the others from loading, and a bad record never stops its file.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

from dagmath_viz import jsonio
from dagmath_viz.schema import CLASSES, Fault, InputError, LoadIssue, Step, Trajectory
from dagmath_viz.score.validation import step_name
from dagmath_viz.text import short_repr

__all__ = [
    "ANSWER_FILE_NAMES",
    "LAYOUTS",
    "AnswerKey",
    "AnswerKeys",
    "Discovery",
    "FileContext",
    "FileLoad",
    "Layout",
    "LoadResult",
    "discover",
    "file_context",
    "is_logic_program_file",
    "is_scored",
    "layout_of",
    "load_answer_key",
    "load_file",
    "load_paths",
    "parse_record",
    "parse_scored_jsonl",
    "scored_fault",
    "with_answers",
]


ANSWER_FILE_NAMES = ("answers.json", "answers.jsonl", "answers.csv")
DATA_SUFFIXES = (".json", ".jsonl")
_OFFICIAL = re.compile(r"^problem_(.+)_all_samples\.jsonl?$")
_GOLD_NAME = re.compile(r"^problem_(.+)\.jsonl?$")
#: Fields that mark a record written by ``dagmath score`` (a valid app input too).
SCORED_FIELDS = frozenset({"n_nodes", "dead_ends", "closeness_rate", "class"})
#: Longest step id or parent kept verbatim when it is not an integer (see ``_as_read``).
MAX_ID_CHARS = 64


# --------------------------------------------------------------------------- a whole run


def load_paths(
    paths: Sequence[str | Path],
    answers: str | Path | AnswerKey | None = None,
    *,
    exclude: Sequence[str | Path] = (),
) -> LoadResult:
    """Load every trajectory under ``paths`` (files or folders, read recursively).

    Reference answers come, in order of precedence, from ``answers``, from the record's
    ``answer``/``gold_answer`` field, from a gold file's ``final_answer``, and from the
    nearest ``answers.json|jsonl|csv`` in the record's folder or above it (within the
    given folder). Difficulty from an answer key fills records that lack one.

    Raises:
        InputError: the explicit ``answers`` file cannot be read.
    """
    found = discover(paths, answers, exclude=exclude)
    issues = list(found.issues)
    trajectories: list[Trajectory] = []
    scored: list[dict] = []
    for f in found.data_files:
        loaded = found.read(f)
        issues.extend(loaded.issues)
        scored.extend(loaded.scored)
        trajectories.extend(loaded.trajectories)
    return LoadResult(
        trajectories=tuple(trajectories),
        issues=tuple(issues),
        files_read=found.files_read,
        scored_records=tuple(scored),
    )


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


# --------------------------------------------------------------------------- discovery


def discover(
    paths: Sequence[str | Path],
    answers: str | Path | AnswerKey | None = None,
    *,
    exclude: Sequence[str | Path] = (),
) -> Discovery:
    """Find the data files and read the answer keys under ``paths``.

    Files are claimed by :data:`LAYOUTS`; inside a folder, names starting with a dot
    (files and folders: a generator's journal, an editor's backup) are skipped, and a link
    leading outside the folder is refused. ``exclude`` names files never to read (the
    run's own output): one met is skipped with a warning.

    Raises:
        InputError: the explicit ``answers`` file cannot be read.
    """
    explicit = load_answer_key(answers) if isinstance(answers, str | Path) else answers
    excluded = {Path(os.path.realpath(p)) for p in exclude if str(p) != "-"}
    data_files: list[Path] = []
    answer_files: list[Path] = []
    issues: list[LoadIssue] = []
    for raw in paths:
        root = Path(raw)
        if not root.exists():
            issues.append(LoadIssue(str(root), "file", jsonio.NO_SUCH_FILE))
            continue
        if root.is_file():
            layout = layout_of(root)
            if layout is None or layout.kind == "companion":
                issues.append(LoadIssue(str(root), "file", "skipped: not a .json or .jsonl file"))
                continue
            candidates = [(root, layout)]
        else:
            found, refused = _walk(root)
            issues.extend(LoadIssue(str(p), "file", reason) for p, reason in refused)
            candidates = [(p, layout_of(p)) for p in found]
        for p, layout in candidates:
            if layout is None or layout.kind == "companion":
                continue
            if excluded and Path(os.path.realpath(p)) in excluded:
                issues.append(LoadIssue(str(p), "", "skipped: the output of this run", "warning"))
                continue
            (answer_files if layout.kind == "answers" else data_files).append(p)
    by_folder: dict[Path, AnswerKey] = {}
    for f in answer_files:
        try:
            by_folder[f.parent.resolve()] = load_answer_key(f)
        except InputError as exc:
            issues.append(LoadIssue(str(f), "file", _without_file(exc, f)))
    return Discovery(
        data_files=data_files,
        answers=AnswerKeys(explicit, by_folder),
        issues=issues,
        files_read=len(data_files) + len(answer_files),
    )


@dataclass(frozen=True)
class Discovery:
    """What a run reads: its data files in order, answer keys, issues met, files read."""

    data_files: list[Path]
    answers: AnswerKeys
    issues: list[LoadIssue]
    files_read: int

    def read(self, path: Path) -> FileLoad:
        """One of the data files, read (:func:`load_file`), its trajectories given the
        reference answers and difficulties of the answer keys that cover it."""
        loaded = load_file(path)
        keys = self.answers.for_file(path)
        return loaded._replace(
            trajectories=[self.answers.apply(t, keys) for t in loaded.trajectories]
        )


def _walk(root: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Regular files under ``root`` (sorted), and what was refused or skipped, with why.

    Names starting with a dot are skipped, with everything under them. Links are never
    followed: one leading outside the folder is refused and named; one that stays inside
    adds nothing its target does not already hold (the target is read once, by its own
    name); a link to nothing is ignored like any broken link; a loop is named. A folder
    that cannot be listed, and anything that is not a regular file (a FIFO, a socket, a
    device), is named and skipped.
    """
    root_resolved = root.resolve()
    found: list[Path] = []
    refused: list[tuple[Path, str]] = []

    def unlistable(exc: OSError) -> None:
        refused.append((Path(exc.filename), f"skipped: cannot list the folder ({exc.strerror})"))

    for folder, dirs, files in os.walk(root, onerror=unlistable):
        # dot-files and dot-folders are private state (a generate run's journal, temporary
        # files, editor and VCS folders), never results
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        base = Path(folder)
        for name in [*dirs, *files]:
            p = base / name
            if name.startswith("."):
                continue
            if p.is_symlink():
                reason = _link_refusal(p, root, root_resolved)
                if reason:
                    refused.append((p, reason))
            elif name in files:
                if p.is_file():
                    found.append(p)
                else:
                    refused.append((p, "skipped: not a regular file"))
    found.sort()
    refused.sort(key=lambda item: item[0])
    return found, refused


def _link_refusal(link: Path, root: Path, root_resolved: Path) -> str | None:
    """Why a link inside a data folder is named (None: it adds nothing, silently)."""
    try:
        target = link.resolve(strict=False)
    except (OSError, RuntimeError):  # Python 3.11 raises RuntimeError on a loop
        return "refused: a link that loops"
    if not target.is_relative_to(root_resolved):
        return (
            f"refused: a link leading outside the data folder {root}" if target.exists() else None
        )
    return None


# --------------------------------------------------------------------------- answer keys


@dataclass(frozen=True)
class AnswerKeys:
    """The answer keys of a run: the explicit one and each folder's ``answers.*`` file."""

    explicit: AnswerKey | None = None
    by_folder: dict[Path, AnswerKey] = field(default_factory=dict)

    def for_file(self, path: Path) -> list[AnswerKey]:
        """Folder keys that apply to a file: its folder's first, then each folder above."""
        if not self.by_folder:
            return []
        folder = Path(path).parent.resolve()
        return [self.by_folder[d] for d in (folder, *folder.parents) if d in self.by_folder]

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
        reference = next((e.answer for e in entries if e.answer is not None), None)
    difficulty = traj.difficulty
    if difficulty is None:
        difficulty = next((e.difficulty for e in entries if e.difficulty is not None), None)
    if reference == traj.reference_answer and difficulty == traj.difficulty:
        return traj
    return replace(traj, reference_answer=reference, difficulty=difficulty)


def load_answer_key(path: str | Path) -> AnswerKey:
    """Read an answers file: a JSON object, JSON/JSONL records, or a CSV.

    Raises:
        InputError: the file cannot be read or has none of the accepted shapes.
    """
    path = Path(path)
    data = jsonio.read_bytes(path)
    key = AnswerKey()
    if path.suffix.lower() == ".csv":
        rows: Iterable[Any] = _csv_rows(path, data)
    else:
        rows = []
        try:
            documents = list(jsonio.documents(path, data))
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


# --------------------------------------------------------------------------- one file


def load_file(path: Path) -> FileLoad:
    """Every trajectory (and pre-scored record) in one file, with the issues met.

    The file is read as its layout says (see :data:`LAYOUTS`); a file no layout claims is
    read as JSON records.
    """
    path = Path(path)
    layout = layout_of(path)
    reader = layout.read if layout is not None and layout.read is not None else _read_records
    return reader(path)


def layout_of(path: Path) -> Layout | None:
    """The layout that claims ``path``, or None (not a file this package reads)."""
    return next((layout for layout in LAYOUTS if layout.claims(path)), None)


def _read_records(path: Path) -> FileLoad:
    """A file of JSON records: a list of samples, one object, JSONL, or scored JSONL."""
    try:
        data = jsonio.read_bytes(path)
    except InputError as exc:
        return FileLoad([], [], [LoadIssue(str(path), "file", _without_file(exc, path))])
    if path.suffix.lower() == ".jsonl":
        records = parse_scored_jsonl(data)
        if records is not None:  # the app reads what `dagmath score` wrote: one parse
            return FileLoad([], records, [])
    try:
        documents = list(jsonio.documents(path, data))
    except InputError as exc:
        return FileLoad([], [], [LoadIssue(str(path), "file", str(exc))])
    if is_logic_program_file([doc for _where, doc in documents]):
        return FileLoad([], [], [_logic_program_file(path)])
    if _unrecognised(documents):
        return FileLoad([], [], [_not_a_trajectory_file(path)])
    ctx = file_context(path)
    trajectories: list[Trajectory] = []
    scored: list[dict] = []
    issues: list[LoadIssue] = []
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
            if is_scored(record):
                fault = scored_fault(record)
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
    return FileLoad(trajectories, scored, issues)


#: Fields of which a trajectory record has at least one (a file of objects with none of
#: them is some other JSON: a config, a problem statement, a chunk list).
RECORD_MARKERS = frozenset({"steps", "problem_id", "sample_id"})
#: Fields of the logic-program problem and proof records (``dagmath gsm generate|solve``),
#: which carry a ``problem_id`` but are no trajectories.
LOGIC_MARKERS = frozenset({"axioms", "theorems"})


def _unrecognised(documents: list[jsonio.Document]) -> bool:
    """True when every document is an object (or a list of objects) and none of those
    objects looks like a trajectory record or a scored record."""
    objects = []
    for _location, doc in documents:
        items = doc if isinstance(doc, list) else [doc]
        if not all(isinstance(item, dict) for item in items):
            return False
        objects.extend(items)
    return bool(objects) and not any(RECORD_MARKERS & item.keys() for item in objects)


def is_logic_program_file(documents: list) -> bool:
    """True when every record is a logic-program problem or proof (``axioms`` or
    ``theorems``, no ``steps``): the other lens's data, as in ``sample_data/gsm/``."""
    items = [i for d in documents for i in (d if isinstance(d, list) else [d])]
    return bool(items) and all(
        isinstance(i, dict) and LOGIC_MARKERS & i.keys() and "steps" not in i for i in items
    )


def _logic_program_file(path: Path) -> LoadIssue:
    """Only a warning: nothing of a trajectory is lost, so scoring a folder that holds
    both lenses' data (``sample_data/``) is complete."""
    note = "skipped: logic-program records (read by dagmath gsm and the Efficiency page)"
    return LoadIssue(str(path), "", note, "warning")


def _not_a_trajectory_file(path: Path) -> LoadIssue:
    """The one issue a file in no known layout raises: nothing is read from it, and it
    counts as no trajectory (neither loaded nor illegal)."""
    return LoadIssue(str(path), "top level", "not a trajectory file: layout not recognised")


# --------------------------------------------------------------------------- scored records


def is_scored(record: Any) -> bool:
    """True for a record written by ``dagmath score`` (it has :data:`SCORED_FIELDS`)."""
    return isinstance(record, dict) and SCORED_FIELDS <= record.keys()


def parse_scored_jsonl(data: bytes) -> list[dict] | None:
    """Every record of JSONL data made of valid scored records only (parsed in one go,
    several times faster than line by line), else None: the file is read line by line."""
    lines = [line for line in jsonio.strip_bom(data).split(b"\n") if line.strip()]
    if not lines:
        return None
    try:
        records = jsonio.parse(b"[" + b",".join(lines) + b"]")
    except InputError:
        return None
    # one object per line (a line holding two values would make the counts differ)
    if len(records) != len(lines):
        return None
    for record in records:
        if type(record) is not dict or not SCORED_FIELDS <= record.keys():
            return None
        if scored_fault(record) is not None:
            return None
    return records


_SCORED_NUMBERS = (
    "n_nodes", "n_edges", "density", "max_in_degree", "max_out_degree", "closeness_rate",
)  # fmt: skip


def scored_fault(record: dict) -> str | None:
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
    # the key of a row in the app and in tables: text names, a 64-bit sample id
    for name in ("model", "dataset"):
        if not isinstance(record[name], str):
            return f"scored record: '{name}' is {short_repr(record[name])}, expected text"
    if not isinstance(record["problem_id"], str | int) or isinstance(record["problem_id"], bool):
        found = short_repr(record["problem_id"])
        return f"scored record: 'problem_id' is {found}, expected text or an integer"
    if not _is_sample_id(record.get("sample_id")):
        found = short_repr(record.get("sample_id"))
        return f"scored record: 'sample_id' is {found}, expected a 64-bit integer"
    return None


# --------------------------------------------------------------------------- records


def file_context(path: Path) -> FileContext:
    """The context of a record file: the official and gold names carry the problem id, the
    official layout's grandparent folder the model, the parent folder the dataset."""
    official = _OFFICIAL.match(path.name)
    gold = _GOLD_NAME.match(path.name)
    pid = official.group(1) if official else (gold.group(1) if gold else None)
    return FileContext(
        file=str(path),
        model=path.parent.parent.name if official and path.parent.parent.name else None,
        dataset=path.parent.name or "default",
        problem_id=pid,
    )


def parse_record(
    obj: Any, ctx_file: str, location: str, position: int, *, context: FileContext | None = None
) -> tuple[Trajectory | None, list[LoadIssue]]:
    """One JSON record -> a Trajectory (kept even when faulty) and the issues it raised."""
    ctx = context or FileContext(file=ctx_file, model=None, dataset="default", problem_id=None)
    where = location or f"record {position + 1}"
    if not isinstance(obj, dict):
        return None, [
            LoadIssue(
                ctx_file, where, f"record is {_json_type(obj)}, expected an object with 'steps'"
            )
        ]
    issues: list[LoadIssue] = []
    faults: list[Fault] = []
    steps, gold = _parse_steps(obj.get("steps"), faults)
    pid = obj.get("problem_id", ctx.problem_id)
    if pid is None or isinstance(pid, dict | list):
        pid = ctx.problem_id or Path(ctx_file).stem
    sid = obj.get("sample_id", position)
    if not _is_sample_id(sid):
        what = "is not an integer" if type(sid) is not int else "is out of range (64-bit)"
        issues.append(
            LoadIssue(
                ctx_file,
                where,
                f"sample_id {short_repr(sid)} {what}; using its position {position}",
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


@dataclass(frozen=True, slots=True)
class FileContext:
    """What a file's place tells about its records (model, dataset, problem)."""

    file: str
    model: str | None  # from the official layout's grandparent folder
    dataset: str
    problem_id: str | None  # from the file name


def _parse_steps(raw: Any, faults: list[Fault]) -> tuple[tuple[Step, ...], bool]:
    """Steps as read, and whether they use the gold spelling (``node``/``edge``)."""
    if raw is None:
        faults.append(_fault(None, "field 'steps' is missing"))
        return (), False
    if not isinstance(raw, list):
        faults.append(_fault(None, f"field 'steps' is {type(raw).__name__}, expected a list"))
        return (), False
    steps = []
    gold = False
    for i, item in enumerate(raw, start=1):
        if not isinstance(item, dict):
            # not kept as a step, so the fault names no position
            faults.append(
                _fault(None, f"step at position {i}: is {_json_type(item)}, expected an object")
            )
            continue
        gold = gold or "node" in item
        sid = _as_read(item.get("step_id"))
        parents = item.get("direct_dependent_steps")
        if parents is None:
            parents = ()
        elif isinstance(parents, list):
            parents = tuple(_as_read(p) for p in parents)
        else:
            message = (
                f"{step_name(sid)}: direct_dependent_steps is {_json_type(parents)}, "
                "expected a list or null"
            )
            faults.append(_fault(sid, message, len(steps)))
            parents = (_as_read(parents),) if isinstance(parents, int | str) else ()
        text = _text_field(item, ("text", "node"), sid, faults, len(steps))
        why = _text_field(item, ("thinking", "edge"), sid, faults, len(steps))
        steps.append(Step(step_id=sid, parents=parents, text=text, justification=why))
    return tuple(steps), gold


def _is_sample_id(value: Any) -> bool:
    """An integer that fits a 64-bit signed column (tables and the app's keys hold them)."""
    return type(value) is int and -(2**63) <= value < 2**63


# --------------------------------------------------------------------------- Thought Anchors


#: The dataset name of Thought Anchors trajectories (the source's problems are from MATH;
#: its folders name the model and whether the solution is correct, not a dataset).
THOUGHT_ANCHORS_DATASET = "thought-anchors"
_TA_SOLUTION = re.compile(r"^(correct|incorrect)_base_solution$")
_TA_PROBLEM = re.compile(r"^problem_(.+)$")
_TA_COMPANIONS = ("problem.json", "base_solution.json")
_LEVEL = re.compile(r"^\s*level\s+(\d+(?:\.\d+)?)\s*$", re.IGNORECASE)


def _read_thought_anchors(path: Path) -> FileLoad:
    """One Thought Anchors solution: ``chunks_labeled.json`` plus its ``problem.json``.

    Chunks become steps: ``step_id`` is the chunk's ``chunk_idx`` (0-based, as the source
    numbers them, so ids match its files), ``depends_on`` (indices written as text) the
    parents, ``chunk`` the text, ``function_tags`` the step's tags. From ``problem.json``:
    ``gt_answer`` is the reference answer, ``Level k`` the difficulty k, ``type`` the
    domain, ``problem`` the problem text. The model is the folder above the
    ``<correct|incorrect>_base_solution`` folder, the dataset :data:`THOUGHT_ANCHORS_DATASET`,
    and the sample id 0 for the correct base solution, 1 for the incorrect one.
    ``base_solution.json`` (the whole chain as one string) adds nothing the chunks lack.
    """
    file = str(path)
    try:
        chunks = jsonio.read_json(path)
    except InputError as exc:
        return FileLoad([], [], [LoadIssue(file, "file", _without_file(exc, path))])
    if not isinstance(chunks, list):
        found = f"JSON {_json_type(chunks)} found, expected a list of chunks"
        return FileLoad([], [], [LoadIssue(file, "top level", found)])
    issues: list[LoadIssue] = []
    problem: Any = {}
    problem_file = path.parent / "problem.json"
    try:
        problem = jsonio.read_json(problem_file)
    except InputError as exc:
        issues.append(LoadIssue(str(problem_file), "file", _without_file(exc, problem_file)))
    if not isinstance(problem, dict):
        found = f"JSON {_json_type(problem)} found, expected an object"
        issues.append(LoadIssue(str(problem_file), "top level", found))
        problem = {}
    faults: list[Fault] = []
    steps = tuple(_ta_step(i, chunk, faults) for i, chunk in enumerate(chunks))
    level = problem.get("level")
    match = _LEVEL.match(level) if isinstance(level, str) else None
    traj = Trajectory(
        model=path.parent.parent.parent.name or "model",
        dataset=THOUGHT_ANCHORS_DATASET,
        problem_id=_TA_PROBLEM.match(path.parent.name).group(1),
        sample_id=0 if path.parent.parent.name.startswith("correct") else 1,
        steps=steps,
        problem_text=_first_str(problem.get("problem")) or "",
        reference_answer=_answer_text(problem.get("gt_answer")),
        difficulty=float(match.group(1)) if match else _difficulty(level),
        domain=_first_str(problem.get("type")),
        source=file,
        load_errors=tuple(faults),
    )
    return FileLoad([traj], [], issues)


def _ta_step(position: int, chunk: Any, faults: list[Fault]) -> Step:
    if not isinstance(chunk, dict):
        message = f"step at position {position + 1}: is {_json_type(chunk)}, expected an object"
        faults.append(_fault(None, message, position))
        return Step(step_id=position)
    sid = _as_read(chunk.get("chunk_idx", position))
    raw = chunk.get("depends_on")
    if raw is None:
        raw = []
    elif not isinstance(raw, list):
        message = f"{step_name(sid)}: depends_on is {_json_type(raw)}, expected a list"
        faults.append(_fault(sid, message, position))
        raw = []
    parents = tuple(_chunk_index(p) for p in raw)
    text = _text_field(chunk, ("chunk", "chunk"), sid, faults, position)
    tags = chunk.get("function_tags")
    tags = tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else ()
    return Step(step_id=sid, parents=parents, text=text, tags=tags)


def _chunk_index(value: Any) -> Any:
    """A ``depends_on`` entry: ``"12"`` is chunk 12; anything else is kept as read (and
    validation then reports it)."""
    if isinstance(value, str) and value.strip().isdigit() and value.strip().isascii():
        return int(value.strip())
    return _as_read(value)


def _is_ta_chunks(path: Path) -> bool:
    return path.name == "chunks_labeled.json" and _in_ta_folder(path)


def _is_ta_companion(path: Path) -> bool:
    return path.name in _TA_COMPANIONS and _in_ta_folder(path)


def _in_ta_folder(path: Path) -> bool:
    return bool(_TA_PROBLEM.match(path.parent.name) and _TA_SOLUTION.match(path.parent.parent.name))


# --------------------------------------------------------------------------- what the readers share


class FileLoad(NamedTuple):
    """What one file holds: trajectories, pre-scored records, and the issues met."""

    trajectories: list[Trajectory]
    scored: list[dict]
    issues: list[LoadIssue]


def _text_field(
    item: dict, names: tuple[str, str], sid: Any, faults: list[Fault], position: int
) -> str:
    for name in names:
        value = item.get(name)
        if value is None:
            continue
        if isinstance(value, str):
            return value
        message = f"{step_name(sid)}: field '{name}' is {_json_type(value)}, expected text"
        faults.append(_fault(sid, message, position))
        return short_repr(value, 1000)
    return ""


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


def _fault(step_id: Any, message: str, position: int | None = None) -> Fault:
    """A fault found while reading (kind ``record``), at ``position`` in the steps kept."""
    return Fault(step_id, "record", message, () if position is None else (position,))


def _first_str(*values: Any) -> str | None:
    for value in values:
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


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


def _json_type(value: Any) -> str:
    """The type of a JSON value as messages name it (``null`` for None)."""
    return "null" if value is None else type(value).__name__


def _without_file(exc: InputError, path: Path) -> str:
    return str(exc).removeprefix(f"{path}: ")


# --------------------------------------------------------------------------- layouts


@dataclass(frozen=True, slots=True)
class Layout:
    """One way files are laid out: which files it claims and how one of them is read.

    ``kind`` is ``trajectories`` (``read`` gives a :class:`FileLoad`), ``answers`` (an
    answer key, see :func:`load_answer_key`) or ``companion`` (read as part of another
    file of the layout, never on its own). ``records`` marks files of JSON trajectory
    records, which the scoring fast path may read itself.
    """

    name: str
    kind: str
    claims: Callable[[Path], bool]
    read: Callable[[Path], FileLoad] | None = None
    records: bool = False


def _has_data_suffix(path: Path) -> bool:
    return path.suffix.lower() in DATA_SUFFIXES


#: Every known layout, most specific first; a new layout is one entry here.
LAYOUTS: tuple[Layout, ...] = (
    Layout("answer key", "answers", lambda p: p.name.lower() in ANSWER_FILE_NAMES),
    Layout("thought-anchors", "trajectories", _is_ta_chunks, _read_thought_anchors),
    Layout("thought-anchors companion", "companion", _is_ta_companion),
    Layout(
        "official",  # <model>/<dataset>/problem_<id>_all_samples.json
        "trajectories",
        lambda p: bool(_OFFICIAL.match(p.name)),
        _read_records,
        records=True,
    ),
    Layout(
        "gold",  # <dataset>/problem_<id>.json
        "trajectories",
        lambda p: bool(_GOLD_NAME.match(p.name)),
        _read_records,
        records=True,
    ),
    Layout(
        "JSON records",  # a list of samples, one object, JSONL, or scored JSONL
        "trajectories",
        _has_data_suffix,
        _read_records,
        records=True,
    ),
)
