"""Score trajectories: one trajectory -> :class:`Score`; a corpus -> a scored DataFrame.

The scored record's field names are a public contract (``dagmath score`` writes them, the
app reads them back): see :data:`RECORD_FIELDS`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dagmath_viz import graph as g
from dagmath_viz.answers import AnswerChecker, Verdict, default_checker, predicted_answer
from dagmath_viz.schema import Score, Trajectory
from dagmath_viz.validation import Validation, validate

if TYPE_CHECKING:  # pandas is imported where a frame is built: `dagmath score` never needs it
    import pandas as pd

__all__ = [
    "RECORD_FIELDS",
    "Structure",
    "classify",
    "score_corpus",
    "score_records",
    "score_trajectory",
    "structure_of",
]

#: Columns of a scored record, in order (the ``dagmath score`` JSONL contract, plus extras).
RECORD_FIELDS = (
    "model", "dataset", "problem_id", "sample_id", "difficulty", "domain",
    "n_nodes", "n_edges", "density", "max_in_degree", "max_out_degree",
    "dead_ends", "closeness_rate", "closed", "ancestor_share",
    "predicted_answer", "reference_answer", "final_correct", "perfect", "class",
    "answer_check", "errors", "source",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Structure:
    """The answer-independent part of a score (graph, dead ends, faults)."""

    validation: Validation
    stats: g.GraphStats
    dead_ends: tuple
    closeness_rate: float
    ancestor_share: float
    predicted_answer: str | None
    errors: tuple[str, ...]

    @property
    def legal(self) -> bool:
        return self.validation.legal


def structure_of(traj: Trajectory) -> Structure:
    """Validate and measure a trajectory's graph (no answer check)."""
    val = validate(traj)
    graph = val.graph
    dead_pos = g.dead_end_positions(graph)
    dead = tuple(sorted((graph.ids[p] for p in dead_pos), key=_id_order))
    n = graph.n_nodes
    share = (len(g.ancestors(graph, n - 1)) + 1) / n if n else 0.0
    pred = predicted_answer(traj.steps[-1].text) if traj.steps else None
    prefix = f"{traj.source}: problem {traj.problem_id} sample {traj.sample_id}: "
    return Structure(
        validation=val,
        stats=g.graph_stats(graph),
        dead_ends=dead,
        closeness_rate=g.closeness_rate(n, len(dead_pos)),
        ancestor_share=share,
        predicted_answer=pred or None,
        errors=tuple(prefix + f for f in val.faults),
    )


def _id_order(step_id) -> tuple[int, str]:
    return (0, f"{step_id:020d}") if type(step_id) is int and step_id >= 0 else (1, repr(step_id))


def classify(legal: bool, closed: bool, final_correct: bool | None) -> str:
    """The exclusive class of DEFINITIONS.md §1 (``illegal`` wins, then ``unscored``)."""
    if not legal:
        return "illegal"
    if final_correct is None:
        return "unscored"
    if not final_correct:
        return "incorrect"
    return "perfect" if closed else "imperfect"


def _finish(traj: Trajectory, st: Structure, verdict: Verdict | None) -> Score:
    closed = st.legal and not st.dead_ends
    final_correct = None if verdict is None else verdict.equivalent
    return Score(
        n_nodes=st.stats.n_nodes,
        n_edges=st.stats.n_edges,
        density=st.stats.density,
        max_in_degree=st.stats.max_in_degree,
        max_out_degree=st.stats.max_out_degree,
        dead_ends=st.dead_ends,
        closeness_rate=st.closeness_rate,
        closed=closed,
        predicted_answer=st.predicted_answer,
        reference_answer=traj.reference_answer,
        final_correct=final_correct,
        perfect=None if final_correct is None else (closed and final_correct),
        cls=classify(st.legal, closed, final_correct),
        errors=st.errors,
        ancestor_share=st.ancestor_share,
    )


def _pair(traj: Trajectory, st: Structure) -> tuple[str, str] | None:
    if traj.reference_answer is None:
        return None
    return (traj.reference_answer, st.predicted_answer or "")


def score_trajectory(traj: Trajectory, checker: AnswerChecker | None = None) -> Score:
    """Score one trajectory (DEFINITIONS.md §1 and §3)."""
    st = structure_of(traj)
    pair = _pair(traj, st)
    verdict = None if pair is None else (checker or default_checker()).check(*pair)
    return _finish(traj, st, verdict)


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
        structures.append(structure_of(traj))
        if progress and i % 500 == 0:
            progress(i, len(trajectories))
    pairs = [_pair(t, s) for t, s in zip(trajectories, structures, strict=True)]
    verdicts = (checker or default_checker()).check_many(p for p in pairs if p is not None)
    records = []
    for traj, st, pair in zip(trajectories, structures, pairs, strict=True):
        verdict = None if pair is None else verdicts[pair]
        records.append(to_record(traj, _finish(traj, st, verdict), verdict))
    if progress:
        progress(len(trajectories), len(trajectories))
    return records


def to_record(traj: Trajectory, score: Score, verdict: Verdict | None = None) -> dict:
    """The public scored-record dict of one trajectory."""
    return {
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
        "class": score.cls,
        "answer_check": None if verdict is None else verdict.reason,
        "errors": list(score.errors),
        "source": traj.source,
    }


def records_frame(records: Iterable[dict]) -> pd.DataFrame:
    """A scored DataFrame with the columns of :data:`RECORD_FIELDS` (missing ones empty)."""
    import pandas as pd

    frame = pd.DataFrame.from_records(list(records))
    for col in RECORD_FIELDS:
        if col not in frame.columns:
            frame[col] = None
    frame["problem_id"] = frame["problem_id"].astype(str)
    frame["difficulty"] = pd.to_numeric(frame["difficulty"], errors="coerce")
    return frame


def score_corpus(
    trajectories: Sequence[Trajectory],
    checker: AnswerChecker | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """Score every trajectory; one row per trajectory, in the input order."""
    return records_frame(score_records(trajectories, checker, progress))
