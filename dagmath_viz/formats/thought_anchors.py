"""Thought Anchors' published layout: one folder per solution, chunks labelled with parents.

``<model>/<correct|incorrect>_base_solution/problem_<id>/`` holds ``chunks_labeled.json``
(the chain split into chunks, each with ``depends_on``), ``problem.json`` and
``base_solution.json``; the chunks file is the trajectory, the other two are its
companions, read with it and never on their own.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from dagmath_viz import jsonio
from dagmath_viz.formats.common import (
    FileLoad,
    answer_text,
    as_read,
    difficulty,
    fault,
    first_str,
    json_type,
    text_field,
    without_file,
)
from dagmath_viz.schema import Fault, InputError, LoadIssue, Step, Trajectory
from dagmath_viz.score.validation import step_name

__all__ = ["THOUGHT_ANCHORS_DATASET", "claims", "claims_companion", "read"]


#: The dataset name of Thought Anchors trajectories (the source's problems are from MATH;
#: its folders name the model and whether the solution is correct, not a dataset).
THOUGHT_ANCHORS_DATASET = "thought-anchors"
_TA_SOLUTION = re.compile(r"^(correct|incorrect)_base_solution$")
_TA_PROBLEM = re.compile(r"^problem_(.+)$")
_TA_COMPANIONS = ("problem.json", "base_solution.json")
_LEVEL = re.compile(r"^\s*level\s+(\d+(?:\.\d+)?)\s*$", re.IGNORECASE)


def read(path: Path) -> FileLoad:
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
        return FileLoad([], [], [LoadIssue(file, "file", without_file(exc, path))])
    if not isinstance(chunks, list):
        found = f"JSON {json_type(chunks)} found, expected a list of chunks"
        return FileLoad([], [], [LoadIssue(file, "top level", found)])
    issues: list[LoadIssue] = []
    problem: Any = {}
    problem_file = path.parent / "problem.json"
    try:
        problem = jsonio.read_json(problem_file)
    except InputError as exc:
        issues.append(LoadIssue(str(problem_file), "file", without_file(exc, problem_file)))
    if not isinstance(problem, dict):
        found = f"JSON {json_type(problem)} found, expected an object"
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
        problem_text=first_str(problem.get("problem")) or "",
        reference_answer=answer_text(problem.get("gt_answer")),
        difficulty=float(match.group(1)) if match else difficulty(level),
        domain=first_str(problem.get("type")),
        source=file,
        load_errors=tuple(faults),
    )
    return FileLoad([traj], [], issues)


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
    return Step(step_id=sid, parents=parents, text=text, tags=tags)


def _chunk_index(value: Any) -> Any:
    """A ``depends_on`` entry: ``"12"`` is chunk 12; anything else is kept as read (and
    validation then reports it)."""
    if isinstance(value, str) and value.strip().isdigit() and value.strip().isascii():
        return int(value.strip())
    return as_read(value)


def claims(path: Path) -> bool:
    return path.name == "chunks_labeled.json" and _in_ta_folder(path)


def claims_companion(path: Path) -> bool:
    return path.name in _TA_COMPANIONS and _in_ta_folder(path)


def _in_ta_folder(path: Path) -> bool:
    return bool(_TA_PROBLEM.match(path.parent.name) and _TA_SOLUTION.match(path.parent.parent.name))
