"""A loaded, scored data source: what the app holds once per source (read-only).

A :class:`Corpus` pairs the scored table with the trajectories behind its rows (``None``
for rows read from pre-scored JSONL, which carry no steps) and every load issue.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from dagmath_viz.answers import AnswerChecker
from dagmath_viz.loading import AnswerKey, load_paths
from dagmath_viz.pipeline import gc_paused
from dagmath_viz.schema import LoadIssue, Trajectory
from dagmath_viz.scoring import records_frame, score_records

__all__ = ["Corpus", "load_corpus"]

Key = tuple[str, str, str, int]


@dataclass(frozen=True)
class Corpus:
    """Scored rows (``scored``, index 0..n-1) and the trajectory behind each row."""

    label: str
    scored: pd.DataFrame
    trajectories: tuple[Trajectory | None, ...]
    issues: tuple[LoadIssue, ...] = ()
    files_read: int = 0
    _rows: dict[Key, int] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        s = self.scored
        keys = list(
            zip(
                s["model"].astype(str).tolist(),
                s["dataset"].astype(str).tolist(),
                s["problem_id"].astype(str).tolist(),
                s["sample_id"].astype("int64").tolist(),
                strict=True,
            )
        )
        # built back to front, so that a key seen twice keeps its first row
        self._rows.update(zip(reversed(keys), range(len(keys) - 1, -1, -1), strict=True))

    def __len__(self) -> int:
        return len(self.scored)

    def row_of(self, model: str, dataset: str, problem_id: str, sample_id: int) -> int | None:
        """Row of a trajectory by its key, or None."""
        return self._rows.get((model, dataset, str(problem_id), int(sample_id)))

    def trajectory(self, row: int) -> Trajectory | None:
        """The trajectory behind a row (None for a pre-scored record)."""
        return self.trajectories[row]

    def problems(self, model: str, dataset: str) -> list[str]:
        """Problem ids of a model × dataset, in natural order (2 before 10)."""
        s = self.scored
        ids = s.loc[(s["model"] == model) & (s["dataset"] == dataset), "problem_id"].unique()
        return sorted(map(str, ids), key=natural_key)

    def issue_table(self) -> pd.DataFrame:
        """Load issues and per-trajectory structural errors, one row each."""
        rows = [
            {"file": i.file, "where": i.location, "severity": i.severity, "problem": i.message}
            for i in self.issues
        ]
        for errors in self.scored["errors"]:
            for e in errors or ():
                file, _, rest = e.partition(": ")
                rows.append({"file": file, "where": "", "severity": "illegal", "problem": rest})
        return pd.DataFrame(rows, columns=["file", "where", "severity", "problem"])


def natural_key(text: str) -> tuple:
    """Sort key putting "problem 2" before "problem 10"."""
    import re

    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text))


def load_corpus(
    paths: Sequence[str | Path],
    answers: str | Path | AnswerKey | None = None,
    label: str | None = None,
    checker: AnswerChecker | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Corpus:
    """Load and score everything under ``paths`` (official layouts or scored JSONL)."""
    with gc_paused():  # a 100,000-record load is millions of fresh objects: see gc_paused
        result = load_paths(paths, answers=answers)
        records = score_records(result.trajectories, checker=checker, progress=progress)
        trajectories: list[Trajectory | None] = list(result.trajectories)
        records.extend(result.scored_records)
        trajectories.extend([None] * len(result.scored_records))
        frame = records_frame(records) if records else records_frame([])
    return Corpus(
        label=label or ", ".join(map(str, paths)),
        scored=frame,
        trajectories=tuple(trajectories),
        issues=result.issues,
        files_read=result.files_read,
    )
