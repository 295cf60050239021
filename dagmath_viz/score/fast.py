"""The fast path of scoring: clean records measured straight from their parsed JSON.

**This module must stay byte-identical to the reference path** (:mod:`dagmath_viz.formats.records`
-> :mod:`dagmath_viz.score.validation` -> :mod:`dagmath_viz.score.reference`): for every record it
accepts, the scored JSON line it leads to is the one the reference path writes, byte for
byte. ``tests/test_fastscore.py`` is the oracle that holds the two to it; change both
paths together or neither.

The clean common case (a JSON array of model-output samples with integer step ids and
parents that point backwards) is measured from the parsed records, without building steps,
trajectories or graphs. A file made only of the fields loading reads, each of the plain
type, is decoded by msgspec into small typed records (see "the typed decoder" below: it
takes a file only where its values are exactly orjson's); any other by orjson into dicts.
``tests/test_fastscore_typed.py`` holds the typed decoder to orjson. A record with
anything unusual in it goes through :func:`dagmath_viz.formats.records.parse_record` and the
reference path, so faults read exactly as they do there; any other file (JSONL, one
object, invalid JSON, pre-scored records, a layout that is not JSON records) is declined
(None) and the caller loads it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import chain, compress, repeat
from operator import attrgetter, itemgetter, lt, not_
from pathlib import Path
from types import NoneType
from typing import NamedTuple

try:
    import msgspec
except ImportError:  # pragma: no cover - a dependency; the typed decoder is only a speed-up
    msgspec = None

from dagmath_viz import jsonio
from dagmath_viz.formats import registry
from dagmath_viz.formats.answer_keys import AnswerKeys
from dagmath_viz.formats.records import (
    DOCUMENT,
    RECORD_MARKERS,
    is_logic_program_file,
    parse_record,
)
from dagmath_viz.formats.scored import is_scored
from dagmath_viz.schema import InputError, LoadIssue, Trajectory
from dagmath_viz.score import graph as g
from dagmath_viz.score.record import GRAPH_METRICS, graph_metrics, split
from dagmath_viz.score.reference import (
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
    the file to :func:`dagmath_viz.formats.registry.load_file`."""
    if registry.record_form(path) != DOCUMENT:
        return None
    data = _plain_bytes(path)
    if data is None:
        return None
    typed = _typed_records(data)
    if typed is not None:
        try:
            return _score_records(path, answers, typed, _typed_measures(typed))
        except _Untyped:
            pass  # a value orjson reads otherwise: as below
    try:
        doc = jsonio.parse(data)
    except InputError:
        return None  # loading reports it
    if type(doc) is not list:
        return None
    if any(is_scored(r) for r in doc) or is_logic_program_file([doc]):
        return None
    if doc and not any(type(r) is dict and RECORD_MARKERS & r.keys() for r in doc):
        if all(type(r) is dict for r in doc):
            return None  # no record looks like a trajectory: loading names the file
    measures = [
        measure_clean_steps(rec["steps"]) if type(rec) is dict and "steps" in rec else None
        for rec in doc
    ]
    return _score_records(path, answers, doc, measures)


def _score_records(
    path: Path,
    answers: AnswerKeys,
    doc: list,
    measures: list[CleanMeasures | None],
) -> FastFile:
    """Each record of the array ``doc`` (dicts as parsed, or typed records) scored: by its
    ``measures`` where it has them, else by ``parse_record`` and the reference path."""
    keys = answers.for_file(path)
    ctx = registry.file_context(path)
    file = str(path)
    filled: dict[tuple, tuple] = {}  # (dataset, problem, own answer, own difficulty?) -> keys'
    records: list[AwaitingVerdict] = []
    issues: list[LoadIssue] = []
    for i, (rec, measured) in enumerate(zip(doc, measures, strict=True)):
        # the location and position load_file gives the i-th item of a top-level array
        where = f"item {i + 1}"
        if measured is not None:
            # the record's own fields exactly as loading reads them (steps measured above)
            own = {**rec, "steps": []} if type(rec) is dict else rec.fields()
            traj, found = parse_record(own, file, where, i, context=ctx)
            if traj.load_errors:  # loading objects to something beyond the steps
                measured = None
        if measured is None:  # a fault somewhere, or an unusual shape: the reference path
            if type(rec) is _Record:
                rec = rec.as_parsed()
            traj, found = parse_record(rec, file, where, i, context=ctx)
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


# --------------------------------------------------------------------------- the typed decoder
#
# msgspec decodes a file of clean records straight into the few small objects scoring
# reads: its C decoder checks every field's type as it reads (so the checks
# measure_clean_steps makes on dicts are done), and the records are far smaller than the
# dicts orjson builds, which is most of the time after parsing (the measuring is
# memory-bound). It takes a file only if every byte of it is JSON that orjson would parse to
# exactly these values: every field a record may hold is named, with the one type of each
# that reads the same in both (``forbid_unknown_fields``: a field it does not know, which it
# would skip without checking its bytes, refuses the file), and the integers, which orjson
# reads as floats outside 64 bits, are checked here. Any other file (a field of another
# type, an unknown field, a gold step, invalid JSON, no msgspec installed) is parsed by
# orjson and read as before; a clean file whose records are faulty still takes this path,
# each faulty record handed to the reference path as the dict orjson would have made.

#: The integers orjson reads as integers (outside: floats, or an error past a double's range).
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1


class _Untyped(Exception):
    """The typed records hold a value orjson reads otherwise: parse the file with orjson."""


if msgspec is not None:
    _UNSET: object = msgspec.UNSET
    _Scalar = str | int | float | bool | None

    class _Step(msgspec.Struct, forbid_unknown_fields=True, gc=False):
        """A step of the clean shape (a missing field reads as loading reads it: null, and
        a missing text as ""; a null text refuses the file, so texts need no check)."""

        step_id: int
        direct_dependent_steps: list[int] | None = None
        text: str = ""
        thinking: str | None = None

    class _Record(msgspec.Struct, forbid_unknown_fields=True, gc=False):
        """A record of the clean shape: the fields loading reads, each absent (UNSET) or of
        a type both parsers read alike (no nested values but ``metadata``'s one level)."""

        steps: list[_Step]
        problem_id: int | str | None = msgspec.UNSET
        sample_id: int | None = msgspec.UNSET
        problem_text: str | None = msgspec.UNSET
        problem: str | None = msgspec.UNSET
        final_answer: str | None = msgspec.UNSET
        metadata: dict[str, _Scalar] | None = msgspec.UNSET
        model: str | None = msgspec.UNSET
        dataset: str | None = msgspec.UNSET
        domain: str | None = msgspec.UNSET
        difficulty: _Scalar = msgspec.UNSET
        answer: _Scalar = msgspec.UNSET
        gold_answer: _Scalar = msgspec.UNSET

        def fields(self) -> dict:
            """The record's own fields as orjson parses them, and no steps."""
            own = {"steps": []}
            for name in _RECORD_FIELDS:
                value = getattr(self, name)
                if value is not _UNSET:
                    if type(value) is int and not _INT_MIN <= value <= _INT_MAX:
                        raise _Untyped
                    own[name] = value
            if type(self.metadata) is dict:
                values = self.metadata.values()
                if any(type(v) is int and not _INT_MIN <= v <= _INT_MAX for v in values):
                    raise _Untyped
            return own

        def as_parsed(self) -> dict:
            """The record as orjson parses it (the reference path reads it)."""
            own = self.fields()
            steps = self.steps
            ids = [s.step_id for s in steps]
            parents = list(chain.from_iterable(filter(None, map(_PARENTS, steps))))
            for values in (ids, parents):
                if values and (min(values) < _INT_MIN or max(values) > _INT_MAX):
                    raise _Untyped
            own["steps"] = [
                {
                    "step_id": s.step_id,
                    "direct_dependent_steps": s.direct_dependent_steps,
                    "text": s.text,
                    "thinking": s.thinking,
                }
                for s in steps
            ]
            return own

    _RECORD_FIELDS = tuple(f for f in _Record.__struct_fields__ if f != "steps")
    _DECODER = msgspec.json.Decoder(list[_Record])
    _TYPED_FAULTS: tuple[type[BaseException], ...] = (
        msgspec.DecodeError,  # ValidationError too: a field of another type or unknown
        UnicodeDecodeError,  # msgspec 0.18's word for text that is not UTF-8
        RecursionError,
    )
    _SID = attrgetter("step_id")
    _PARENTS = attrgetter("direct_dependent_steps")
else:  # pragma: no cover - msgspec is a dependency; without it every file is parsed by orjson
    _DECODER = None

    class _Record:  # never made
        pass


def _typed_records(data: bytes) -> list | None:
    """The file's records typed, or None: it is not made of clean records (or holds a value
    read otherwise than by orjson), and orjson parses it."""
    if _DECODER is None:
        return None
    try:
        return _DECODER.decode(data)
    except _TYPED_FAULTS:
        return None


def _typed_measures(records: list) -> list[CleanMeasures | None]:
    """Each typed record's measures (None: the reference path reads it)."""
    return [_measure_typed(r.steps) for r in records]


def _measure_typed(steps: list) -> CleanMeasures | None:
    """:func:`measure_clean_steps` for typed steps: their types are checked already."""
    if not steps:
        return None
    measured = _measure_numbered(steps)
    if measured is not _OTHER_NUMBERING:
        return measured
    ids = tuple(map(_SID, steps))
    raws = list(map(_PARENTS, steps))
    if min(ids) < _INT_MIN or max(ids) > _INT_MAX:
        return None  # orjson reads these as floats (a clean step's parents are its ids)
    listed = list(filter(None, raws))
    flat = list(chain.from_iterable(listed))
    return _measure(ids, raws, _Texts(steps), False, listed, flat)


_OTHER_NUMBERING = object()


def _measure_numbered(steps: list) -> CleanMeasures | None | object:
    """:func:`_measure` for typed steps numbered 1, 2, ... n (the usual case), in one pass
    over the steps: each step's parents must then be ids from 1 to its own id - 1. The
    same measures as ``_measure``, a quarter faster here than its passes over columns
    (a step's fields are read once, while it is in the cache); :data:`_OTHER_NUMBERING`
    for any other numbering (found at the first step out of line)."""
    n = len(steps)
    children = [0] * (n + 1)  # per id: its children (a parent listed twice counts once)
    n_edges = max_in = sid = 0
    for step in steps:
        sid += 1
        if step.step_id != sid:
            return _OTHER_NUMBERING
        parents = step.direct_dependent_steps
        if parents:
            if len(parents) == 1:
                parent = parents[0]
                if not 0 < parent < sid:
                    return None  # missing, the step itself or a later one
                children[parent] += 1
                n_edges += 1
                max_in = max_in or 1
            else:
                if max(parents) >= sid or min(parents) < 1:
                    return None
                distinct = set(parents)
                for parent in distinct:
                    children[parent] += 1
                n_edges += len(distinct)
                max_in = max(max_in, len(distinct))
    if not steps[-1].text.strip():
        return None
    dead = list(compress(range(1, n), map(not_, children[1:n])))  # no child: a dead end
    reached = n  # with no dead end, every path ends at the final step
    if dead:
        ancestors = {n}
        for step in reversed(steps):
            if step.direct_dependent_steps and step.step_id in ancestors:
                ancestors.update(step.direct_dependent_steps)
        reached = len(ancestors)
    answer = read_answer(_Texts(steps))
    answer_step = None if answer.position is None else answer.position + 1
    metrics = _metrics(tuple(range(1, n + 1)), list(map(_PARENTS, steps))) if GRAPH_METRICS else ()
    return CleanMeasures(
        n, n_edges, max_in, max(children), dead, reached, answer.text, answer_step, metrics
    )


class _Texts:
    """The texts of typed steps, read only where asked: the answer is most often in the
    final step (``read_answer`` reads from the end)."""

    __slots__ = ("_steps",)

    def __init__(self, steps: list) -> None:
        self._steps = steps

    def __len__(self) -> int:
        return len(self._steps)

    def __getitem__(self, position: int) -> str:
        return self._steps[position].text


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
    return _measure(ids, raws, texts, NoneType in text_types, listed, flat)


def _measure(
    ids: tuple[int, ...],
    raws: Sequence[list[int] | None],
    texts: Sequence[str | None],
    null_text: bool,
    listed: list[list[int]],
    flat: list[int],
) -> CleanMeasures | None:
    """The measures of steps whose fields have the clean types (integer ids, parent lists
    of integers or null, texts that are strings or null), or None for anything else
    validation would flag. ``listed`` are the non-empty parent lists, ``flat`` their ids."""
    n = len(ids)
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
    if null_text:  # loading reads a null text as ""
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
    metrics = _metrics(ids, raws) if GRAPH_METRICS else ()
    return CleanMeasures(
        n, len(flat), max_in, max_out, dead, reached, answer.text, answer_step, metrics
    )


def _metrics(ids: Sequence[int], raws: Sequence[list[int] | None]) -> tuple:
    """The values of the record contract's graph metrics
    (:data:`dagmath_viz.score.record.GRAPH_METRICS`), on the graph validation builds of
    clean steps: every edge is well formed, a step's parents are its distinct parents'
    positions, sorted."""
    position = {sid: i for i, sid in enumerate(ids)}
    parents = tuple(tuple(sorted({position[p] for p in r})) if r else () for r in raws)
    return tuple(graph_metrics(g.StepGraph(tuple(ids), parents)).items())


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
    metrics: tuple = ()  # (name, value) of each graph metric of the record contract


def _clean_record(
    traj: Trajectory, m: CleanMeasures, reference: str | None, difficulty: float | None
) -> AwaitingVerdict:
    """The record :func:`dagmath_viz.score.reference.to_record` writes, from the measures, in the
    two parts around the verdict (:func:`dagmath_viz.score.record.split`, as the reference
    path splits it), with the reference answer and difficulty the answer keys fill in. The
    record contract's graph metrics come measured (:func:`_metrics`): a new one needs no
    line here."""
    prediction = m.predicted_answer
    n = m.n_nodes
    head, tail = split(
        {
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
            "errors": [],
            "source": traj.source,
            "answer_step": m.answer_step,
            **dict(m.metrics),
        }
    )
    pair = None if reference is None else (reference, prediction or "")
    return AwaitingVerdict(head, pair, True, not m.dead_ends, tail)


class FastFile(NamedTuple):
    """The records of one file scored by the fast path, and the issues met."""

    records: list[AwaitingVerdict]
    issues: list[LoadIssue]
