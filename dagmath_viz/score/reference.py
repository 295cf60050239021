"""Score trajectories: one trajectory -> :class:`Score`; a corpus -> a scored DataFrame.

This is the reference path: every number of DEFINITIONS.md §1 and §3, computed from a
loaded :class:`Trajectory` through :func:`dagmath_viz.score.validation.validate` and
:mod:`dagmath_viz.score.graph`. The fast path (:mod:`dagmath_viz.score.fast`) must write what
this path writes, byte for byte.

The scored record's fields are a public contract (``dagmath score`` writes them, the app
reads them back), held in :mod:`dagmath_viz.score.record`: a record is built there
(:func:`~dagmath_viz.score.record.ordered`, :func:`~dagmath_viz.score.record.split`) from
the values computed here. A record is written in three parts
(:class:`AwaitingVerdict`): what is known before the answer check, the verdict's fields,
and what follows them, so the answer checks of a whole run can be settled at once.

The module reads top down, each function before the ones it calls: the pipeline's two
calls (:func:`awaiting_verdict_of`, :func:`finish_lines`), scoring a corpus in memory, then
the pieces of one trajectory's score.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from dagmath_viz.answers.check import AnswerChecker, Verdict, default_checker, extract_boxed
from dagmath_viz.schema import Score, Trajectory
from dagmath_viz.score import graph as g
from dagmath_viz.score.record import (
    graph_metrics,
    ordered,
    records_frame,
    split,
)
from dagmath_viz.score.validation import Validation, validate

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Answer",
    "SOURCE_GRADE",
    "AwaitingVerdict",
    "given_answer",
    "given_verdict",
    "StructuralScore",
    "answer_pair",
    "awaiting_verdict",
    "awaiting_verdict_of",
    "classify",
    "finish_lines",
    "finish_score",
    "read_answer",
    "score_corpus",
    "score_records",
    "score_trajectory",
    "step_id_order",
    "structural_score",
    "to_record",
]


#: The ``answer_check`` of a grade the source gives its own answer (Thought Anchors'
#: ``is_correct``): taken as it is, not checked again.
SOURCE_GRADE = "source"


# --------------------------------------------------------------------------- for the pipeline


def awaiting_verdict_of(traj: Trajectory) -> AwaitingVerdict:
    """A trajectory scored by the reference path, waiting for its verdict."""
    structural = structural_score(traj)
    record = to_record(traj, finish_score(traj, structural, None), None)
    closed = structural.legal and not structural.dead_ends
    pair = answer_pair(traj, structural)
    return awaiting_verdict(record, pair, structural.legal, closed, traj.answer_correct)


def finish_lines(
    records: Iterable[AwaitingVerdict], verdicts: dict[tuple[str, str], Verdict]
) -> Iterator[bytes]:
    """The scored JSON lines of records awaiting verdicts, given the verdict of each pair."""
    mids: dict[tuple, bytes] = {}
    for rec in records:
        verdict: Verdict | None
        if rec.pair is not None:
            verdict = verdicts[rec.pair]
        else:
            verdict = None if rec.given is None else Verdict(rec.given, SOURCE_GRADE)
        key = (rec.legal, rec.closed, verdict)
        mid = mids.get(key)
        if mid is None:
            correct = None if verdict is None else verdict.equivalent
            fields = {
                "final_correct": correct,
                "perfect": None if correct is None else (rec.closed and correct),
                "class": classify(rec.legal, rec.closed, correct),
                "answer_check": None if verdict is None else verdict.reason,
            }
            mid = mids[key] = b"," + orjson.dumps(fields)[1:-1]
        yield rec.head + mid + rec.tail + b"\n"


# --------------------------------------------------------------------------- a corpus


def score_corpus(
    trajectories: Sequence[Trajectory],
    checker: AnswerChecker | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """Score every trajectory; one row per trajectory, in the input order."""
    return records_frame(score_records(trajectories, checker, progress))


def score_records(
    trajectories: Sequence[Trajectory],
    checker: AnswerChecker | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict]:
    """Scored records (dicts with :data:`RECORD_FIELDS`), one per trajectory, in order.

    Each distinct (reference, prediction) pair is checked once.
    """
    structures = []
    for i, traj in enumerate(trajectories):
        structures.append(structural_score(traj))
        if progress and i % 500 == 0:
            progress(i, len(trajectories))
    pairs = [answer_pair(t, s) for t, s in zip(trajectories, structures, strict=True)]
    verdicts = (checker or default_checker()).check_many(p for p in pairs if p is not None)
    records = []
    for traj, structural, pair in zip(trajectories, structures, pairs, strict=True):
        verdict = given_verdict(traj) if pair is None else verdicts[pair]
        records.append(to_record(traj, finish_score(traj, structural, verdict), verdict))
    if progress:
        progress(len(trajectories), len(trajectories))
    return records


def score_trajectory(traj: Trajectory, checker: AnswerChecker | None = None) -> Score:
    """Score one trajectory (DEFINITIONS.md §1 and §3)."""
    structural = structural_score(traj)
    pair = answer_pair(traj, structural)
    verdict = given_verdict(traj) if pair is None else (checker or default_checker()).check(*pair)
    return finish_score(traj, structural, verdict)


# --------------------------------------------------------------------------- one trajectory


def structural_score(traj: Trajectory) -> StructuralScore:
    """Validate and measure a trajectory's graph (no answer check)."""
    val = validate(traj)
    graph = val.graph
    dead_pos = g.dead_end_positions(graph)
    dead = tuple(sorted((graph.ids[p] for p in dead_pos), key=step_id_order))
    n = graph.n_nodes
    share = (len(g.ancestors(graph, n - 1)) + 1) / n if n else 0.0
    answer = given_answer(traj) or read_answer([s.text for s in traj.steps])
    prefix = f"{traj.source}: problem {traj.problem_id} sample {traj.sample_id}: "
    return StructuralScore(
        validation=val,
        stats=g.graph_stats(graph),
        dead_ends=dead,
        closeness_rate=g.closeness_rate(n, len(dead_pos)),
        ancestor_share=share,
        predicted_answer=answer.text,
        answer_step=None if answer.position is None else traj.steps[answer.position].step_id,
        errors=tuple(prefix + f.message for f in val.faults),
        metrics=tuple(graph_metrics(graph).items()),
    )


@dataclass(frozen=True, slots=True)
class StructuralScore:
    """The answer-independent part of a score (graph, dead ends, faults)."""

    validation: Validation
    stats: g.GraphStats
    dead_ends: tuple
    closeness_rate: float
    ancestor_share: float
    predicted_answer: str | None
    errors: tuple[str, ...]
    answer_step: Any = None  # the id of the step the predicted answer was read from
    metrics: tuple = ()  # the record contract's graph metrics, (name, value) pairs

    @property
    def legal(self) -> bool:
        return self.validation.legal


def read_answer(texts: Sequence[str]) -> Answer:
    """The predicted answer by DEFINITIONS.md §1, from the steps' texts in order.

    The last ``\boxed{}`` of the final step; if it has none, the last ``\boxed{}`` of the
    latest earlier step that has one; with none anywhere, the final step's whole text.
    Each text is read at most once, from the end (linear in the text).
    """
    for position in range(len(texts) - 1, -1, -1):
        boxed = extract_boxed(texts[position])
        if boxed is not None:
            return Answer(boxed or None, position)
    if not texts:
        return Answer(None, None)
    return Answer(texts[-1].strip() or None, None)


class Answer(NamedTuple):
    """The predicted answer of a trajectory and the position of the step that held it."""

    text: str | None
    position: int | None  # None: no step has a \boxed{}, the final step's text is the answer


def given_answer(traj: Trajectory) -> Answer | None:
    """The source's own answer (:attr:`Trajectory.answer`), at the step that holds it when
    the steps' own reading agrees, else at none; None when the source gives no answer."""
    if traj.answer is None:
        return None
    read = read_answer([s.text for s in traj.steps])
    return Answer(traj.answer, read.position if read.text == traj.answer else None)


def given_verdict(traj: Trajectory) -> Verdict | None:
    """The source's own grade of its answer (``answer_check`` ``source``), or None."""
    return None if traj.answer_correct is None else Verdict(traj.answer_correct, SOURCE_GRADE)


def step_id_order(step_id: Any) -> tuple[int, str]:
    """Sort key of step ids: integers ascending (non-negative first), then the others."""
    return (0, f"{step_id:020d}") if type(step_id) is int and step_id >= 0 else (1, repr(step_id))


def answer_pair(traj: Trajectory, structural: StructuralScore) -> tuple[str, str] | None:
    """(reference, prediction) to check, or None without a reference answer or when the
    source grades its own answer (:func:`given_verdict`)."""
    if traj.reference_answer is None or traj.answer_correct is not None:
        return None
    return (traj.reference_answer, structural.predicted_answer or "")


def finish_score(traj: Trajectory, structural: StructuralScore, verdict: Verdict | None) -> Score:
    """The full score, given the verdict on the final answer (None: no reference)."""
    s = structural
    closed = s.legal and not s.dead_ends
    final_correct = None if verdict is None else verdict.equivalent
    return Score(
        n_nodes=s.stats.n_nodes,
        n_edges=s.stats.n_edges,
        density=s.stats.density,
        max_in_degree=s.stats.max_in_degree,
        max_out_degree=s.stats.max_out_degree,
        dead_ends=s.dead_ends,
        closeness_rate=s.closeness_rate,
        closed=closed,
        predicted_answer=s.predicted_answer,
        answer_step=s.answer_step,
        reference_answer=traj.reference_answer,
        final_correct=final_correct,
        perfect=None if final_correct is None else (closed and final_correct),
        trajectory_class=classify(s.legal, closed, final_correct),
        errors=s.errors,
        ancestor_share=s.ancestor_share,
        metrics=s.metrics,
    )


def classify(legal: bool, closed: bool, final_correct: bool | None) -> str:
    """The exclusive class of DEFINITIONS.md §1 (``illegal`` wins, then ``unscored``)."""
    if not legal:
        return "illegal"
    if final_correct is None:
        return "unscored"
    if not final_correct:
        return "incorrect"
    return "perfect" if closed else "imperfect"


def to_record(traj: Trajectory, score: Score, verdict: Verdict | None = None) -> dict:
    """The public scored-record dict of one trajectory (fields in contract order)."""
    return ordered(
        {
            "model": traj.model,
            "dataset": traj.dataset,
            "problem_id": traj.problem_id,
            "sample_id": traj.sample_id,
            "difficulty": traj.difficulty,
            "domain": traj.domain,
            "n_nodes": score.n_nodes,
            "n_edges": score.n_edges,
            "density": score.density,
            "max_in_degree": score.max_in_degree,
            "max_out_degree": score.max_out_degree,
            "dead_ends": list(score.dead_ends),
            "closeness_rate": score.closeness_rate,
            "closed": score.closed,
            "ancestor_share": score.ancestor_share,
            "predicted_answer": score.predicted_answer,
            "reference_answer": score.reference_answer,
            "final_correct": score.final_correct,
            "perfect": score.perfect,
            "class": score.trajectory_class,
            "answer_check": None if verdict is None else verdict.reason,
            "errors": list(score.errors),
            "source": traj.source,
            "answer_step": score.answer_step,
            **dict(score.metrics),
        }
    )


def awaiting_verdict(
    record: dict,
    pair: tuple[str, str] | None,
    legal: bool,
    closed: bool,
    given: bool | None = None,
) -> AwaitingVerdict:
    """Split a scored record (its verdict fields unset) around the verdict."""
    head, tail = split(record)
    return AwaitingVerdict(head, pair, legal, closed, tail, given)


class AwaitingVerdict(NamedTuple):
    """One scored record waiting for its verdict: its JSON before and after the verdict."""

    head: bytes  # '{"model":...,"reference_answer":...' (no closing brace)
    pair: tuple[str, str] | None  # (reference, prediction); None without a reference
    legal: bool
    closed: bool
    tail: bytes  # ',"errors":[...],"source":"..."}'
    given: bool | None = None  # the source's own grade (no pair then): see given_verdict
