"""Thought Anchors' published layout: one folder per solution, chunks labelled with parents.

``<model>/<correct|incorrect>_base_solution/problem_<id>/`` holds ``chunks_labeled.json``
(the chain split into chunks, each with ``depends_on``), ``problem.json`` and
``base_solution.json``; the chunks file is the trajectory, the other two are its
companions, read with it and never on their own.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from dagmath_viz import jsonio
from dagmath_viz.formats.common import (
    MAX_COMPANION_BYTES,
    FileLoad,
    answer_text,
    as_read,
    companion_refusal,
    difficulty,
    fault,
    first_str,
    json_type,
    text_field,
    without_file,
)
from dagmath_viz.schema import Fault, InputError, LoadIssue, Step, Trajectory
from dagmath_viz.text import short_repr, step_name

__all__ = [
    "MAX_COMPANION_BYTES",
    "THOUGHT_ANCHORS_DATASET",
    "claims",
    "claims_companion",
    "companion_data_file",
    "read",
]


#: The dataset name of Thought Anchors trajectories (the source's problems are from MATH;
#: its folders name the model and whether the solution is correct, not a dataset).
THOUGHT_ANCHORS_DATASET = "thought-anchors"
_TA_SOLUTION = re.compile(r"^(correct|incorrect)_base_solution$")
_TA_PROBLEM = re.compile(r"^problem_(.+)$")
_TA_COMPANIONS = ("problem.json", "base_solution.json")
_LEVEL = re.compile(r"^\s*level\s+(\d+(?:\.\d+)?)\s*$", re.IGNORECASE)


def read(path: Path) -> FileLoad:
    """One Thought Anchors solution: ``chunks_labeled.json`` with its companions.

    Chunks become steps: ``step_id`` is the chunk's ``chunk_idx`` (0-based, as the source
    numbers them, so ids match its files), ``depends_on`` (indices written as text) the
    parents, ``chunk`` the text, ``function_tags`` the step's tags, and every other value
    of the chunk (importance scores, ``accuracy``, ``summary``, ...) the step's ``fields``.
    From ``problem.json``: ``gt_answer`` is the reference answer, ``Level k`` the
    difficulty k, ``type`` the domain, ``problem`` the problem text. From
    ``base_solution.json``: ``answer`` is the predicted answer and ``is_correct`` its
    grade, as the source's authors graded it (without it, the answer is read from the
    chunks and checked, with a warning). The model is the folder above the
    ``<correct|incorrect>_base_solution`` folder, the dataset :data:`THOUGHT_ANCHORS_DATASET`,
    and the sample id 0 for the correct base solution, 1 for the incorrect one.
    """
    file = str(path)
    # the companions first: one refused is named even when the chunks cannot be read (the
    # folder walk leaves naming them to this reader: see companion_data_file)
    issues: list[LoadIssue] = []
    problem = _companion(path.parent / "problem.json", issues)
    solution = _companion(path.parent / "base_solution.json", issues)
    try:
        chunks = jsonio.read_json(path)
    except InputError as exc:
        return FileLoad([], [], [LoadIssue(file, "file", without_file(exc, path)), *issues])
    if not isinstance(chunks, list):
        found = f"JSON {json_type(chunks)} found, expected a list of chunks"
        return FileLoad([], [], [LoadIssue(file, "top level", found), *issues])
    answer, correct = _solution_answer(path.parent / "base_solution.json", solution, issues)
    faults: list[Fault] = []
    steps = tuple(_ta_step(i, chunk, faults) for i, chunk in enumerate(chunks))
    level = problem.get("level")
    match = _LEVEL.match(level) if isinstance(level, str) else None
    solution_folder = path.absolute().parent.parent  # named from whichever folder
    traj = Trajectory(
        model=solution_folder.parent.name or "model",
        dataset=THOUGHT_ANCHORS_DATASET,
        problem_id=folder.group(1)
        if (folder := _TA_PROBLEM.match(path.absolute().parent.name))
        else "",
        sample_id=0 if solution_folder.name.startswith("correct") else 1,
        steps=steps,
        problem_text=first_str(problem.get("problem")) or "",
        reference_answer=answer_text(problem.get("gt_answer")),
        difficulty=float(match.group(1)) if match else difficulty(level),
        domain=first_str(problem.get("type")),
        source=file,
        load_errors=tuple(faults),
        answer=answer,
        answer_correct=correct,
    )
    return FileLoad([traj], [], issues)


def _companion(path: Path, issues: list[LoadIssue]) -> dict:
    """A companion's JSON object, or ``{}`` with the issue met.

    Only a regular file in the solution's own folder is opened: a link (which may lead
    anywhere), a FIFO (which would block the reader) or a device is refused unopened, and
    so is a file over :data:`MAX_COMPANION_BYTES` (:func:`companion_refusal`).
    """
    refusal = companion_refusal(path, MAX_COMPANION_BYTES)
    if refusal == jsonio.NO_SUCH_FILE and path.name == "base_solution.json":
        # without base_solution.json the answer is read from the chunks, said once by
        # _solution_answer; without problem.json the reference is lost
        return {}
    if refusal is not None:
        issues.append(LoadIssue(str(path), "file", refusal))
        return {}
    try:
        value = jsonio.read_json(path)
    except InputError as exc:
        issues.append(LoadIssue(str(path), "file", without_file(exc, path)))
        return {}
    if not isinstance(value, dict):
        found = f"JSON {json_type(value)} found, expected an object"
        issues.append(LoadIssue(str(path), "top level", found))
        return {}
    return value


def _solution_answer(
    path: Path, solution: dict, issues: list[LoadIssue]
) -> tuple[str | None, bool | None]:
    """``base_solution.json``'s answer and grade; (None, None) when it gives neither, with
    a warning that the answer is read from the chunks instead. The file is named once:
    when it was refused or could not be read, that issue says so too (no second one)."""
    answer = answer_text(solution.get("answer"))
    correct = solution.get("is_correct")
    correct = correct if isinstance(correct, bool) else None
    named = next((k for k, i in enumerate(issues) if i.file == str(path)), None)
    if answer is None and solution:
        issues.append(LoadIssue(str(path), "answer", _FALLBACK, "warning"))
    elif not solution and named is not None:
        issues[named] = replace(issues[named], message=f"{issues[named].message}; {_FROM_CHUNKS}")
    elif not solution:
        issues.append(LoadIssue(str(path), "", _FALLBACK, "warning"))
    return answer, correct if answer is not None else None


_FROM_CHUNKS = "the predicted answer is read from the chunks and checked"
_FALLBACK = f"no answer given: {_FROM_CHUNKS}"
#: Chunk fields that are the step's id, parents, text or tags (the rest are its fields).
_STEP_KEYS = frozenset({"chunk_idx", "depends_on", "chunk", "function_tags"})


def _ta_step(position: int, chunk: Any, faults: list[Fault]) -> Step:
    if not isinstance(chunk, dict):
        message = f"step at position {position + 1}: is {json_type(chunk)}, expected an object"
        faults.append(fault(None, message, position))
        return Step(step_id=position)
    sid = as_read(chunk.get("chunk_idx", position))
    raw = chunk.get("depends_on")
    if raw is None:
        raw = []
    elif not isinstance(raw, list):
        message = f"{step_name(sid)}: depends_on is {json_type(raw)}, expected a list"
        faults.append(fault(sid, message, position))
        raw = []
    parents = tuple(_chunk_index(p) for p in raw)
    text = text_field(chunk, ("chunk", "chunk"), sid, faults, position)
    tags = chunk.get("function_tags")
    tags = tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else ()
    fields = tuple((k, _scalar(v)) for k, v in chunk.items() if k not in _STEP_KEYS)
    return Step(step_id=sid, parents=parents, text=text, tags=tags, fields=fields)


def _scalar(value: Any) -> Any:
    """A JSON scalar as read; a list or object as a short text (a step stays hashable)."""
    return value if value is None or isinstance(value, str | int | float) else short_repr(value)


def _chunk_index(value: Any) -> Any:
    """A ``depends_on`` entry: ``"12"`` is chunk 12; anything else is kept as read (and
    validation then reports it). Digits past 64 bits are kept as read too: no step id can
    be that large, and ``int()`` refuses a string of more than 4,300 digits."""
    digits = value.strip() if isinstance(value, str) else ""
    if digits.isdigit() and digits.isascii() and len(digits) <= _MAX_INDEX_DIGITS:
        return int(digits)
    return as_read(value)


#: a ``depends_on`` index has at most this many digits (2**63 has 19)
_MAX_INDEX_DIGITS = 19


def claims(path: Path) -> bool:
    return path.name == "chunks_labeled.json" and _in_ta_folder(path)


def claims_companion(path: Path) -> bool:
    return path.name in _TA_COMPANIONS and _in_ta_folder(path)


def companion_data_file(path: Path) -> Path:
    """The chunks file whose reader reads the companion ``path`` (and names it when it is
    refused: a link, a FIFO, a device; :func:`read`), from the name alone."""
    return path.parent / "chunks_labeled.json"


def _in_ta_folder(path: Path) -> bool:
    folder = path.absolute().parent  # claimed from whichever folder it is named
    return bool(_TA_PROBLEM.match(folder.name) and _TA_SOLUTION.match(folder.parent.name))
