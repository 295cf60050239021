"""Trajectory records in JSON: how one record becomes a :class:`Trajectory`, and how a file
of them is read, whatever holds the records (one JSON document, JSON Lines, a compressed
or columnar file: each format module says how its bytes become documents).

A record is an object with ``steps`` in either spelling: model output (``step_id``,
``direct_dependent_steps``, ``text``, ``thinking``) or gold (``node``, ``edge``). A file
may also hold scored records (``dagmath score`` output, :mod:`dagmath_viz.formats.scored`).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from dagmath_viz import jsonio
from dagmath_viz.formats.common import (
    FileContext,
    FileLoad,
    answer_text,
    as_read,
    difficulty,
    domain_text,
    fault,
    file_failure,
    first_str,
    is_sample_id,
    json_type,
    text_field,
)
from dagmath_viz.formats.fieldmap import FieldMap
from dagmath_viz.formats.scored import is_scored, parse_scored_jsonl, scored_fault
from dagmath_viz.schema import Fault, InputError, LoadIssue, Step, Trajectory
from dagmath_viz.text import short_repr, step_name

__all__ = [
    "DOCUMENT",
    "LINES",
    "LOGIC_MARKERS",
    "RECORD_MARKERS",
    "TEXT_PROBLEMS",
    "TEXT_PROOFS",
    "efficiency_text_kind",
    "is_logic_program_file",
    "ROWS",
    "Documents",
    "FREE_FORM",
    "FREE_FORM_LEAD",
    "REPLY_FIELDS",
    "is_free_form",
    "by_suffix",
    "documents_by_suffix",
    "line_documents",
    "one_document",
    "parse_record",
    "plain_context",
    "read_records",
]

#: How a file holds its records (:meth:`dagmath_viz.formats.registry.Format.record_form`):
#: one JSON document (a list of samples or one object: the fast scorer may read it), plain
#: JSON Lines text (it may be scored JSONL, read a slice at a time), or rows of another
#: container (compressed or columnar), read only through the format's ``documents``.
DOCUMENT, LINES, ROWS = "document", "lines", "rows"
#: Fields of which a trajectory record has at least one (a file of objects with none of
#: them is some other JSON: a config, a problem statement, a chunk list).
RECORD_MARKERS = frozenset({"steps", "problem_id", "sample_id"})
#: Fields of the logic-program problem and proof records (``dagmath gsm generate|solve``),
#: which carry a ``problem_id`` but are no trajectories.
LOGIC_MARKERS = frozenset({"axioms", "theorems"})
#: How a file's bytes become its documents; raises :class:`InputError` (no file name) when
#: the whole file is unreadable, yields a bad line as a document whose value is the error.
Documents = Callable[[Path, bytes], Iterable[jsonio.Document]]
#: Fields that hold a reply as free text (a chain of thought not split into steps); not
#: ``text``, which problem files use for the problem (the efficiency lens's, for one).
REPLY_FIELDS = (
    "solution", "response", "output", "completion", "generation", "reasoning", "cot",
    "chain_of_thought", "messages",
)  # fmt: skip
#: The one issue a file raises for its replies without DAG-MATH steps (:func:`is_free_form`).
#: How the one line of a file of free-form replies starts (pages look for it).
FREE_FORM_LEAD = "free-form chain of thought"
FREE_FORM = (
    FREE_FORM_LEAD + ": no numbered steps; convert it with `dagmath depends` "
    "({n} record{s} not read as trajectories)"
)


def one_document(path: Path, data: bytes) -> list[jsonio.Document]:
    """The file is one JSON document."""
    return [jsonio.Document("", jsonio.parse(data))]


def line_documents(path: Path, data: bytes) -> Iterable[jsonio.Document]:
    """The file is JSON Lines (``line N``)."""
    return jsonio.parse_lines(data)


def by_suffix(jsonl: str) -> Callable[[Path], str]:
    """A record form by suffix: JSON Lines for names ending in ``jsonl``, one document else."""
    return lambda path: LINES if path.name.lower().endswith(jsonl) else DOCUMENT


def documents_by_suffix(jsonl: str) -> Documents:
    """Documents by suffix: lines for names ending in ``jsonl``, one document otherwise."""
    form = by_suffix(jsonl)
    return lambda path, data: (
        line_documents(path, data) if form(path) == LINES else one_document(path, data)
    )


def plain_context(path: Path) -> FileContext:
    """The context of a file whose name says nothing: its folder is the dataset."""
    folder = path.absolute().parent  # the same name from whichever folder it is named
    return FileContext(str(path), None, folder.name or "default", None)


def read_records(
    path: Path,
    documents: Documents,
    context: FileContext,
    *,
    lines: bool,
    fields: FieldMap | None = None,
) -> FileLoad:
    """A file of JSON records: a list of samples, one object, lines, or scored records.

    ``lines``: the bytes are plain JSON Lines text, which may be scored JSONL read in one
    parse. ``fields`` renames a record's fields before it is read (:class:`FieldMap`);
    with it, every file that can be read and parsed is checked against the map (a warning
    per mapped field none of its records has, :meth:`FieldMap.file_warning`), and a file
    that cannot is one issue at ``file`` (what :meth:`FieldMap.summarised`'s callers count
    on to know the files read through the map).
    """
    try:  # JSON Lines: one line past the cap is this file's error, never held in memory
        data = jsonio.read_lines_bytes(path) if lines else jsonio.read_bytes(path)
    except InputError as exc:
        return file_failure(path, exc)
    if lines and fields is None:
        records = parse_scored_jsonl(data)
        if records is not None:  # the app reads what `dagmath score` wrote: one parse
            return FileLoad([], records, [])
    try:
        docs = list(documents(path, data))
    except InputError as exc:
        return FileLoad([], [], [LoadIssue(str(path), "file", str(exc))])
    del data
    unmatched = []
    if fields is not None:  # every file read this far is checked against the map
        lacked = fields.unmatched([d for _, d in docs])  # (a generator would call back)
        unmatched = [fields.file_warning(str(path), pair) for pair in lacked]
        docs = [jsonio.Document(where, fields.apply_all(doc)) for where, doc in docs]
    if is_logic_program_file([doc for _where, doc in docs]):
        return FileLoad([], [], [*unmatched, _logic_program_file(path)])
    if _unrecognised(docs):
        kind = efficiency_text_kind([doc for _where, doc in docs])
        if kind is not None:
            return FileLoad([], [], [*unmatched, _efficiency_text_file(path, kind)])
        return FileLoad([], [], [*unmatched, _not_a_trajectory_file(path)])
    load = _read_documents(path, docs, context)
    return FileLoad(load.trajectories, load.scored, [*unmatched, *load.issues])


def _read_documents(path: Path, docs: list[jsonio.Document], ctx: FileContext) -> FileLoad:
    trajectories: list[Trajectory] = []
    scored: list[dict] = []
    issues: list[LoadIssue] = []
    position = 0
    free = 0
    for location, doc in docs:
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
                    f"JSON {json_type(doc)} found, expected a list of "
                    "samples or an object with 'steps'",
                )
            )
            continue
        for where, record in records:
            if is_scored(record):
                found_fault = scored_fault(record)
                if found_fault:
                    issues.append(LoadIssue(str(path), where or "record", found_fault))
                else:
                    scored.append(record)
                continue
            if is_free_form(record):
                free += 1  # said once for the file, below: not one illegal trajectory each
                continue
            traj, found = parse_record(record, str(path), where, position, context=ctx)
            issues.extend(found)
            position += 1
            if traj is not None:
                trajectories.append(traj)
    if free:
        message = FREE_FORM.format(n=free, s="" if free == 1 else "s")
        issues.append(LoadIssue(str(path), "", message))
    return FileLoad(trajectories, scored, issues)


def is_free_form(record: Any) -> bool:
    """A record that holds a reply as text (:data:`REPLY_FIELDS`) and no ``steps``: a
    free-form chain of thought, which ``dagmath depends`` turns into steps."""
    return (
        isinstance(record, dict)
        and "steps" not in record
        and any(isinstance(record.get(name), str | list) for name in REPLY_FIELDS)
    )


def _unrecognised(documents: list[jsonio.Document]) -> bool:
    """True when every document is an object (or a list of objects) and none of those
    objects looks like a trajectory record or a scored record."""
    objects = []
    for _location, doc in documents:
        items = doc if isinstance(doc, list) else [doc]
        if not all(isinstance(item, dict) for item in items):
            return False
        objects.extend(items)
    return bool(objects) and not any(
        RECORD_MARKERS & item.keys() or is_free_form(item) for item in objects
    )


def _model_from_path(path: Path, problem_id: Any) -> str:
    """The model of a record that names none: the file's name (``llama-3.jsonl``), unless
    the name is the problem's numeric id (the DAG-MATH authors' runner writes
    ``<model>/<dataset>/<id>.json``), when it is the folder above the dataset's.

    >>> _model_from_path(Path("runs/llama-3/math500/7.json"), 7)
    'llama-3'
    >>> _model_from_path(Path("runs/llama-3.jsonl"), 7)
    'llama-3'
    """
    if not path.stem.isdigit() or path.stem != str(problem_id):
        return path.stem
    folder = path.absolute().parent
    return folder.parent.name or folder.name or path.stem


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


#: What :func:`efficiency_text_kind` answers: the efficiency lens's word problems given as
#: text, and the same with a proof of each (the paper's Appendix D examples).
TEXT_PROBLEMS, TEXT_PROOFS = "problems", "proofs"


def efficiency_text_kind(documents: list) -> str | None:
    """:data:`TEXT_PROOFS` when every record is a word problem with its proof as text
    (``{"id", "text", "proof"}``: ``dagmath gsm score-proofs`` input, as in
    ``../shared/data/efficiency-paper-examples``), :data:`TEXT_PROBLEMS` when every record
    is a word problem as text (``{"id", "text"}``: ``dagmath gsm solve --text`` input, as
    the authors' generator writes them in ``../shared/data/mathgap-sample``), else None.

    >>> efficiency_text_kind([{"id": 1, "text": "Ann has 3 kites. How many?", "answer": 3}])
    'problems'
    >>> efficiency_text_kind([[{"id": 1, "text": "...", "proof": "1. Ann has 3 kites."}]])
    'proofs'
    >>> efficiency_text_kind([{"id": 1, "text": "..."}, {"id": 2, "steps": []}]) is None
    True
    """
    items = [i for d in documents for i in (d if isinstance(d, list) else [d])]
    if not items or not all(
        isinstance(i, dict)
        and "id" in i
        and isinstance(i.get("text"), str)
        and not (RECORD_MARKERS | LOGIC_MARKERS) & i.keys()
        for i in items
    ):
        return None
    return TEXT_PROOFS if all(isinstance(i.get("proof"), str) for i in items) else TEXT_PROBLEMS


def _efficiency_text_file(path: Path, kind: str) -> LoadIssue:
    """A warning naming the command that reads the file: it is the efficiency lens's data,
    not a trajectory file, so nothing of a trajectory is lost (as :func:`_logic_program_file`)."""
    if kind == TEXT_PROOFS:
        what = 'word problems with proofs ({"id", "text", "proof"})'
        command = "dagmath gsm score-proofs"
    else:
        what = 'word problems as text ({"id", "text"})'
        command = "dagmath gsm solve --text"
    note = (
        f"skipped: the efficiency lens's {what}, not trajectories: read them with "
        f"`{command} {shlex.quote(str(path))} -o OUT.jsonl` (or on the app's Efficiency page)"
    )
    return LoadIssue(str(path), "", note, "warning")


def _not_a_trajectory_file(path: Path) -> LoadIssue:
    """The one issue a file in no known layout raises: nothing is read from it, and it
    counts as no trajectory (neither loaded nor illegal)."""
    return LoadIssue(str(path), "top level", "not a trajectory file: layout not recognised")


# --------------------------------------------------------------------------- one record


def parse_record(
    obj: Any, ctx_file: str, location: str, position: int, *, context: FileContext | None = None
) -> tuple[Trajectory | None, list[LoadIssue]]:
    """One JSON record -> a Trajectory (kept even when faulty) and the issues it raised."""
    ctx = context or FileContext(file=ctx_file, model=None, dataset="default", problem_id=None)
    where = location or f"record {position + 1}"
    if not isinstance(obj, dict):
        return None, [
            LoadIssue(
                ctx_file, where, f"record is {json_type(obj)}, expected an object with 'steps'"
            )
        ]
    issues: list[LoadIssue] = []
    faults: list[Fault] = []
    steps, gold = _parse_steps(obj.get("steps"), faults)
    pid = obj.get("problem_id", ctx.problem_id)
    if pid is None or isinstance(pid, dict | list):
        pid = ctx.problem_id or Path(ctx_file).stem
    sid = obj.get("sample_id", position)
    if not is_sample_id(sid):
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
    meta = given if isinstance(given := obj.get("metadata"), dict) else {}
    model = first_str(meta.get("model"), obj.get("model")) or ctx.model
    model = model or ("gold" if gold else _model_from_path(Path(ctx_file), pid))
    reference = answer_text(obj.get("answer", obj.get("gold_answer")))
    if reference is None and gold:
        reference = answer_text(obj.get("final_answer"))
    traj = Trajectory(
        model=model,
        dataset=first_str(obj.get("dataset")) or ctx.dataset,
        problem_id=str(pid),
        sample_id=sid,
        steps=steps,
        problem_text=first_str(obj.get("problem_text"), obj.get("problem")) or "",
        reference_answer=reference,
        difficulty=difficulty(obj.get("difficulty")),
        domain=domain_text(obj.get("domain")),
        source=f"{ctx_file}{'[' + str(position) + ']' if not location else ':' + location}",
        load_errors=tuple(faults),
    )
    return traj, issues


def _parse_steps(raw: Any, faults: list[Fault]) -> tuple[tuple[Step, ...], bool]:
    """Steps as read, and whether they use the gold spelling (``node``/``edge``)."""
    if raw is None:
        faults.append(fault(None, "field 'steps' is missing"))
        return (), False
    if not isinstance(raw, list):
        faults.append(fault(None, f"field 'steps' is {type(raw).__name__}, expected a list"))
        return (), False
    steps: list[Step] = []
    gold = False
    for i, item in enumerate(raw, start=1):
        if not isinstance(item, dict):
            # not kept as a step, so the fault names no position
            faults.append(
                fault(None, f"step at position {i}: is {json_type(item)}, expected an object")
            )
            continue
        gold = gold or "node" in item
        sid = as_read(item.get("step_id"))
        parents = item.get("direct_dependent_steps")
        if parents is None:
            parents = ()
        elif isinstance(parents, list):
            parents = tuple(as_read(p) for p in parents)
        else:
            message = (
                f"{step_name(sid)}: direct_dependent_steps is {json_type(parents)}, "
                "expected a list or null"
            )
            faults.append(fault(sid, message, len(steps)))
            parents = (as_read(parents),) if isinstance(parents, int | str) else ()
        text = text_field(item, ("text", "node"), sid, faults, len(steps))
        why = text_field(item, ("thinking", "edge"), sid, faults, len(steps))
        steps.append(Step(step_id=sid, parents=parents, text=text, justification=why))
    return tuple(steps), gold
