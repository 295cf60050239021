"""A loaded, scored data source: what the app holds once per source (read-only).

A :class:`Corpus` pairs the scored table with the trajectories behind its rows (``None``
for rows read from pre-scored JSONL, which carry no steps, and for every row of a streamed
load) and every load issue. :func:`load_corpus` decides how the source is loaded, once,
and :mod:`dagmath_viz.run.streamed` loads it that way.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from dagmath_viz.answers.check import AnswerChecker, kept_checker
from dagmath_viz.formats.answer_keys import AnswerKey
from dagmath_viz.formats.discovery import discover
from dagmath_viz.formats.fieldmap import FieldMap
from dagmath_viz.run import streamed
from dagmath_viz.run.pool import IN_PROCESS_BYTES
from dagmath_viz.schema import DagMathError, LoadIssue, Trajectory
from dagmath_viz.store.uploads import is_uploaded
from dagmath_viz.text import natural_key

__all__ = [
    "STREAM_BYTES",
    "STREAM_BYTES_ENV",
    "Corpus",
    "load_corpus",
    "stream_threshold",
]


@dataclass(frozen=True)
class Corpus:
    """Scored rows (``scored``, index 0..n-1) and the trajectory behind each row."""

    label: str
    scored: pd.DataFrame
    trajectories: tuple[Trajectory | None, ...]
    issues: tuple[LoadIssue, ...] = ()
    files_read: int = 0
    #: ``(identity, key)`` of the columnar copy of a streamed raw folder that ``scored`` was
    #: read from or kept as (:func:`dagmath_viz.run.streamed.cached_parts`); None when there is
    #: none. What derives from the frame alone is cached on it (:mod:`dagmath_viz.store.views`).
    run_copy: tuple[str, str] | None = field(default=None, compare=False)
    _keys: pd.MultiIndex | None = field(default=None, repr=False, compare=False)
    _key_rows: np.ndarray | None = field(default=None, repr=False, compare=False)
    _issues_frame: pd.DataFrame | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        # (model, dataset, problem, sample) of each row, as codes into the distinct values:
        # a few bytes a row, where a dict of key tuples took ~400 (100,000 rows: ~37 MB)
        s = self.scored
        keys = pd.MultiIndex.from_arrays(
            [
                s["model"].astype(str),
                s["dataset"].astype(str),
                s["problem_id"].astype(str),
                s["sample_id"].astype("int64"),
            ]
        )
        first = ~keys.duplicated(keep="first")  # a key seen twice keeps its first row
        object.__setattr__(self, "_keys", keys[first])
        object.__setattr__(self, "_key_rows", np.flatnonzero(first))

    def __len__(self) -> int:
        return len(self.scored)

    def row_of(self, model: str, dataset: str, problem_id: str, sample_id: int) -> int | None:
        """Row of a trajectory by its key, or None."""
        try:
            key = (str(model), str(dataset), str(problem_id), int(sample_id))
        except (TypeError, ValueError):
            return None
        at = self._keys.get_indexer([key])[0]
        return None if at < 0 else int(self._key_rows[at])

    def trajectory(self, row: int) -> Trajectory | None:
        """The trajectory behind a row (None for a pre-scored record)."""
        return self.trajectories[row]

    def problems(self, model: str, dataset: str) -> list[str]:
        """Problem ids of a model × dataset, in natural order (2 before 10)."""
        s = self.scored
        ids = s.loc[(s["model"] == model) & (s["dataset"] == dataset), "problem_id"].unique()
        return sorted(map(str, ids), key=natural_key)

    def issue_table(self) -> pd.DataFrame:
        """Load issues and per-trajectory structural errors, one row each.

        A structural error reads ``<source>: problem P sample S: <fault>``; its row names
        the file alone, the record in ``where`` (``item 13: problem 101 sample 12``) and
        the fault in ``problem``, so that no ``where`` is left empty.

        Made once per corpus (every page draws it on every rerun; a walk of 100,000 rows
        each time cost a page half a second); each call returns its own copy.
        """
        if self._issues_frame is None:
            object.__setattr__(self, "_issues_frame", self._issues())
        return self._issues_frame.copy()  # type: ignore[union-attr]

    def _issues(self) -> pd.DataFrame:
        rows = [
            {"file": i.file, "where": i.location, "severity": i.severity, "problem": i.message}
            for i in self.issues
        ]
        s = self.scored
        faulty = [row for row, errors in enumerate(s["errors"])
                  if isinstance(errors, list | tuple) and errors]  # fmt: skip
        for row in faulty:
            source, pid, sid = (
                s["source"].iat[row],
                s["problem_id"].iat[row],
                s["sample_id"].iat[row],
            )
            for e in s["errors"].iat[row]:
                file, where, fault = _fault_parts(str(e), str(source), pid, sid)
                rows.append({"file": file, "where": where, "severity": "illegal", "problem": fault})
        return pd.DataFrame(rows, columns=["file", "where", "severity", "problem"])

    def n_illegal(self) -> int:
        """Trajectories with at least one structural fault (class ``illegal``)."""
        return int((self.scored["class"] == "illegal").sum())


#: A record's place at the end of its ``source``: ``:item 13``, ``:line 4`` or ``[0]``.
_PLACE = re.compile(r"^(?P<file>.+?)(?::(?P<named>(?:item|line) \d+)|(?P<index>\[\d+\]))$")


def _fault_parts(error: str, source: str, problem_id, sample_id) -> tuple[str, str, str]:
    """(file, where, fault) of one structural error of the record read from ``source``."""
    record = f"problem {problem_id} sample {sample_id}"
    prefix = f"{source}: {record}: "
    if not error.startswith(prefix):  # written by something else: keep it whole
        file, _, rest = error.partition(": ")
        return file, record, rest
    fault = error[len(prefix) :]
    match = _PLACE.match(source)
    if match is None:
        return source, record, fault
    place = match["named"] or match["index"]
    return match["file"], f"{place}: {record}", fault


def load_corpus(
    paths: Sequence[str | Path],
    answers: str | Path | AnswerKey | None = None,
    label: str | None = None,
    checker: AnswerChecker | None = None,
    progress: Callable[[int, int], None] | None = None,
    stream_bytes: int | None = None,
    keep_verdicts: bool = False,
    partial: Callable[[pd.DataFrame, int, int], None] | None = None,
    fields: FieldMap | None = None,
) -> Corpus:
    """Load and score everything under ``paths`` (official layouts or scored JSONL).

    The strategy is decided once, here, from what the source is (:func:`discover`'s
    files), and :func:`dagmath_viz.run.streamed.cached_parts` loads it that way (one
    implementation for both): from ``stream_bytes`` of raw trajectory data (default
    :func:`stream_threshold`: 16 MB, or ``$DAGMATH_STREAM_BYTES``) the data are scored by
    the streaming pool of ``dagmath score`` and no trajectory is kept (every
    :meth:`Corpus.trajectory` is None; pages read steps back from ``source``): same rows,
    values and issues, in a fraction of the memory. Smaller data are scored in this
    process with every trajectory kept: there a pool costs more time than it saves, and
    the steps are few. Rows: loaded trajectories first, then scored records, each in file
    order. ``progress(done, total)`` counts files on both paths.

    ``keep_verdicts`` (the app sets it; ignored when ``checker`` is given): answers are
    checked by :func:`dagmath_viz.answers.check.kept_checker`, which reads and adds to the
    verdicts ``dagmath score`` keeps on disk, so data checked once by either are never
    sent to math-verify again. Uploaded files never are: their answers are not written to
    a file that outlives them.

    ``partial(frame, files_done, files_total)``: on the streamed path, called every few
    seconds while the folder is scored, with the scored rows of what is scored so far (a sample
    of every model and data set; see :func:`dagmath_viz.run.streamed.streamed_parts`).
    """
    kept = keep_verdicts and checker is None and not any(map(is_uploaded, paths))
    if kept:
        checker = kept_checker()
    label = label or ", ".join(map(str, paths))
    try:
        found = discover(paths, answers, fields=fields)
        threshold = stream_threshold() if stream_bytes is None else stream_bytes
        stream = bool(found.data_files) and found.raw_bytes >= threshold
        parts, run_copy = streamed.cached_parts(
            paths, answers, found, keep_steps=not stream, checker=checker,
            progress=progress, partial=partial if stream else None,
        )  # fmt: skip
    finally:
        if kept:
            checker.save()  # type: ignore[union-attr]
    frame, trajectories, issues, files_read = parts
    return Corpus(label, frame, trajectories, tuple(issues), files_read, run_copy)


#: Raw trajectory bytes from which :func:`load_corpus` scores through the pool and keeps no
#: steps. Below it (the bundled sample, most uploads) the in-memory path is faster than
#: starting a pool (~0.5 s) and its trajectories cost little; it is also the size from
#: which ``score_paths`` itself starts a pool.
STREAM_BYTES = IN_PROCESS_BYTES
#: Environment variable overriding :data:`STREAM_BYTES` (bytes; 0 streams every folder),
#: e.g. to compare both paths on one server.
STREAM_BYTES_ENV = "DAGMATH_STREAM_BYTES"


def stream_threshold() -> int:
    """The threshold in force: ``$DAGMATH_STREAM_BYTES`` when set, else :data:`STREAM_BYTES`.

    Raises:
        DagMathError: the variable is set but is not a whole number of bytes >= 0.
    """
    raw = os.environ.get(STREAM_BYTES_ENV, "").strip()
    if not raw:
        return STREAM_BYTES
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise DagMathError(f"${STREAM_BYTES_ENV}={raw!r}: not a number of bytes (0 or more)")
    return value
