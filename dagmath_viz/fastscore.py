"""The fast path of scoring: clean records measured straight from their parsed JSON.

**This module must stay byte-identical to the reference path** (:mod:`dagmath_viz.loading`
-> :mod:`dagmath_viz.validation` -> :mod:`dagmath_viz.scoring`): for every record it
accepts, the scored JSON line it leads to is the one the reference path writes, byte for
byte. ``tests/test_fastscore.py`` is the oracle that holds the two to it; change both
paths together or neither.

The clean common case (a JSON array of model-output samples with integer step ids and
parents that point backwards) is measured from the dicts, without building steps,
trajectories or graphs. A record with anything unusual in it goes through
:func:`dagmath_viz.loading.parse_record` and the reference path, so faults read exactly as
they do there; any other file (JSONL, one object, invalid JSON, pre-scored records, a
layout that is not JSON records) is declined (None) and the caller loads it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import chain, compress, repeat
from operator import itemgetter, lt
from pathlib import Path
from types import NoneType
from typing import NamedTuple

import orjson

from dagmath_viz import graph as g
from dagmath_viz import jsonio, loading
from dagmath_viz.loading import AnswerKeys
from dagmath_viz.schema import InputError, LoadIssue, Trajectory
from dagmath_viz.scoring import (
    AwaitingVerdict,
    awaiting_verdict_of,
    read_answer,
    step_id_order,
)

__all__ = ["CleanMeasures", "FastFile", "measure_clean_steps", "score_clean_file"]


_STR_OR_NULL = frozenset({str, NoneType})
_INT = {int}
_LIST_OR_NULL = frozenset({list, NoneType})


def score_clean_file(path: Path, answers: AnswerKeys) -> FastFile | None:
    """Every record of a JSON array of samples, each clean one measured from its dict, any
    other through ``parse_record`` and the reference path; None (any other file) sends
    the file to :func:`dagmath_viz.loading.load_file`."""
    layout = loading.layout_of(path)
    if layout is None or not layout.records or path.suffix.lower() == ".jsonl":
        return None
    data = _plain_bytes(path)
    if data is None:
        return None
    try:
        doc = jsonio.parse(data)
    except InputError:
        return None  # loading reports it
    if type(doc) is not list:
        return None
    if any(loading.is_scored(r) for r in doc):
        return None
    if doc and not any(type(r) is dict and loading.RECORD_MARKERS & r.keys() for r in doc):
        if all(type(r) is dict for r in doc):
            return None  # no record looks like a trajectory: loading names the file
    keys = answers.for_file(path)
    ctx = loading.file_context(path)
    file = str(path)
    filled: dict[tuple, tuple] = {}  # (dataset, problem, own answer, own difficulty?) -> keys'
    records: list[AwaitingVerdict] = []
    issues: list[LoadIssue] = []
    for i, rec in enumerate(doc):
        # the location and position load_file gives the i-th item of a top-level array
        where = f"item {i + 1}"
        measured = (
            measure_clean_steps(rec["steps"]) if type(rec) is dict and "steps" in rec else None
        )
        if measured is not None:
            # the record's own fields exactly as loading reads them (steps measured above)
            traj, found = loading.parse_record({**rec, "steps": []}, file, where, i, context=ctx)
            if traj.load_errors:  # loading objects to something beyond the steps
                measured = None
        if measured is None:  # a fault somewhere, or an unusual shape: the reference path
            traj, found = loading.parse_record(rec, file, where, i, context=ctx)
            issues.extend(found)
            if traj is not None:
                records.append(awaiting_verdict_of(answers.apply(traj, keys)))
            continue
        issues.extend(found)
        # what answers.apply fills in depends on these alone (and a record's own difficulty
        # wins), so each problem's lookups are done once per file, not once per sample
        own = (traj.dataset, traj.problem_id, traj.reference_answer, traj.difficulty is None)
        reference, difficulty = filled.get(own) or filled.setdefault(
            own, _filled_in(answers.apply(traj, keys))
        )
        if traj.difficulty is not None:
            difficulty = traj.difficulty
        records.append(_clean_record(traj, measured, reference, difficulty))
    return FastFile(records, issues)


def _filled_in(traj: Trajectory) -> tuple[str | None, float | None]:
    return traj.reference_answer, traj.difficulty


def _plain_bytes(path: Path) -> bytes | None:
    """A file's bytes for the fast path; None (unreadable, or a BOM) leaves it to loading."""
    try:
        data = jsonio.read_bytes(path)
    except InputError:
        return None
    return None if data.startswith(jsonio.BOM) else data


def measure_clean_steps(steps: object) -> CleanMeasures | None:
    """Statistics of well-formed steps, or None for anything validation would flag.

    Mirrors loading's step parsing + ``validation.validate`` + ``graph`` on the one shape
    they accept without a remark: objects with distinct integer ``step_id``s, parents a list
    (or null) of earlier ids, text fields that are strings, a final step with text. Field
    access and type checks run over all steps at once (``map`` and ``zip`` in C); Python
    walks only the steps that reach the final one, once each.
    """
    if type(steps) is not list or not steps:
        return None
    columns = _columns(steps)
    if columns is None:
        return None
    ids, raws, texts, whys = columns
    n = len(steps)
    text_types = set(map(type, texts))
    why_types = set(map(type, whys))
    if not text_types <= _STR_OR_NULL or not why_types <= _STR_OR_NULL:
        return None  # other types are faults
    if NoneType in why_types and any(
        item.get("thinking") is None and type(item.get("edge", "")) is not str for item in steps
    ):
        return None  # a null thinking falls back to 'edge', which must then be text
    if set(map(type, ids)) != _INT or not set(map(type, raws)) <= _LIST_OR_NULL:
        return None
    listed = list(filter(None, raws))  # the steps' non-empty parent lists, in order
    flat = list(chain.from_iterable(listed))
    if not set(map(type, flat)) <= _INT:
        return None  # a parent that is not an integer id
    usual = ids == tuple(range(1, n + 1))  # the usual numbering: position = id - 1
    if usual:
        # each step's parents are earlier steps: 1 <= parent < its own id
        if not all(map(lt, map(max, listed), compress(ids, raws))):
            return None
        if flat and min(flat) < 1:
            return None
    else:
        position = dict(zip(ids, range(n), strict=True))
        if len(position) != n:
            return None  # a duplicate id
        parents = list(map(position.get, flat, repeat(n)))
        children = list(chain.from_iterable(map(repeat, range(n), map(len, _or_empty(raws)))))
        if not all(map(lt, parents, children)):
            return None  # a parent that is missing, the step itself or a later step
    if NoneType in text_types:  # loading reads a null text as ""
        texts = [t or "" for t in texts]
    if not texts[-1].strip():
        return None
    if sum(map(len, map(set, listed))) != len(flat):  # a parent listed twice counts once
        listed = list(map(set, listed))
        flat = list(chain.from_iterable(listed))
    out = Counter(flat)  # children per parent id
    max_in = max(map(len, listed), default=0)
    max_out = max(out.values(), default=0)
    if len(out) == n - 1:  # every other step has a child: all paths end at the final step
        dead = []
        reached = n
    else:
        dead = [sid for sid in ids[:-1] if sid not in out]
        if not usual:  # 1..n is in order already
            dead.sort(key=step_id_order)
        reached = _ancestors_and_self(ids, raws)
    answer = read_answer(texts)
    answer_step = None if answer.position is None else ids[answer.position]
    return CleanMeasures(n, len(flat), max_in, max_out, dead, reached, answer.text, answer_step)


_FIELDS = ("step_id", "direct_dependent_steps", "text", "thinking")
_ROW = itemgetter(*_FIELDS)


def _columns(steps: list) -> tuple[tuple, tuple, tuple, tuple] | None:
    """The steps' ids, parent lists, texts and thinkings (a missing field reads as null);
    None when a step is not an object or spells a gold step (``node``), which loading
    names differently."""
    try:
        columns = tuple(zip(*map(_ROW, steps), strict=True))  # KeyError: a field left out
        if set(map(len, steps)) == {len(_FIELDS)}:
            return columns  # nothing but the four fields: no 'node' either
    except KeyError:
        pass
    except TypeError:  # a step that is not an object
        return None
    try:
        if any(map(dict.__contains__, steps, repeat("node"))):
            return None
        return tuple(tuple(map(dict.get, steps, repeat(k))) for k in _FIELDS)
    except TypeError:
        return None


def _ancestors_and_self(ids: Sequence[int], raws: Sequence[list | None]) -> int:
    """How many steps reach the final one (itself included): one backward pass, since
    every parent comes earlier; only the steps already reached are walked."""
    reached = {ids[-1]}
    for sid, parents in zip(reversed(ids), reversed(raws), strict=True):
        if parents and sid in reached:
            reached.update(parents)
    return len(reached)


def _or_empty(raws: Sequence) -> list:
    return [r or () for r in raws]


class CleanMeasures(NamedTuple):
    """What scoring needs of clean steps (see :func:`measure_clean_steps`)."""

    n_nodes: int
    n_edges: int
    max_in_degree: int
    max_out_degree: int
    dead_ends: list[int]  # sorted as the reference path sorts them
    reached: int  # the final step and its ancestors
    predicted_answer: str | None
    answer_step: int | None


def _clean_record(
    traj: Trajectory, m: CleanMeasures, reference: str | None, difficulty: float | None
) -> AwaitingVerdict:
    """The record :func:`dagmath_viz.scoring.to_record` writes, from the measures, in the
    two parts around the verdict (:func:`dagmath_viz.scoring.awaiting_verdict`), with the
    reference answer and difficulty the answer keys fill in."""
    prediction = m.predicted_answer
    n = m.n_nodes
    head = {  # HEAD_FIELDS
        "model": traj.model,
        "dataset": traj.dataset,
        "problem_id": traj.problem_id,
        "sample_id": traj.sample_id,
        "difficulty": difficulty,
        "domain": traj.domain,
        "n_nodes": n,
        "n_edges": m.n_edges,
        "density": g.density(n, m.n_edges),
        "max_in_degree": m.max_in_degree,
        "max_out_degree": m.max_out_degree,
        "dead_ends": m.dead_ends,
        "closeness_rate": g.closeness_rate(n, len(m.dead_ends)),
        "closed": not m.dead_ends,
        "ancestor_share": m.reached / n,
        "predicted_answer": prediction,
        "reference_answer": reference,
    }
    tail = {"errors": [], "source": traj.source, "answer_step": m.answer_step}  # TAIL_FIELDS
    pair = None if reference is None else (reference, prediction or "")
    return AwaitingVerdict(
        orjson.dumps(head, option=_OPTS)[:-1],
        pair,
        True,
        not m.dead_ends,
        b"," + orjson.dumps(tail, option=_OPTS)[1:],
    )


_OPTS = orjson.OPT_SERIALIZE_NUMPY  # as scoring writes records


class FastFile(NamedTuple):
    """The records of one file scored by the fast path, and the issues met."""

    records: list[AwaitingVerdict]
    issues: list[LoadIssue]
