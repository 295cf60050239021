"""A loaded, scored data source: what the app holds once per source (read-only).

A :class:`Corpus` pairs the scored table with the trajectories behind its rows (``None``
for rows read from pre-scored JSONL, which carry no steps) and every load issue.

The scored table is columnar (a DataFrame), and scored JSONL becomes columns a slice of
lines at a time (:data:`SCORED_SLICE` bytes): 100,000 records never exist as dicts at
once. As dicts they took about 2.5 KB each and, freed, left the process hundreds of MB
larger than the frame it keeps (about 45 MB for 100,000 records);
``benchmarks/memory_scored.py`` measures it. Once parsed, a scored JSONL file's frame is
kept as a Parquet copy (:mod:`dagmath_viz.store.frames`) that later loads read instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from dagmath_viz import jsonio
from dagmath_viz.answers.check import AnswerChecker, kept_checker
from dagmath_viz.formats.answer_keys import AnswerKey
from dagmath_viz.formats.discovery import discover
from dagmath_viz.formats.fieldmap import FieldMap
from dagmath_viz.formats.records import LINES
from dagmath_viz.formats.registry import record_form
from dagmath_viz.formats.scored import parse_scored_jsonl
from dagmath_viz.run.pool import gc_paused, unsettled_issues
from dagmath_viz.schema import InputError, LoadIssue, Trajectory
from dagmath_viz.score.reference import SCORED_SLICE, concat_frames, records_frame, score_records
from dagmath_viz.store import frames as colcache
from dagmath_viz.store.uploads import is_uploaded
from dagmath_viz.text import natural_key

__all__ = ["SCORED_SLICE", "Corpus", "load_corpus", "scored_jsonl_frames"]

#: Bytes of a JSONL file's first line read to tell scored records from trajectories.
_FIRST_LINE_BYTES = 1 << 24


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
        """
        rows = [
            {"file": i.file, "where": i.location, "severity": i.severity, "problem": i.message}
            for i in self.issues
        ]
        columns = ["errors", "source", "problem_id", "sample_id"]
        for errors, source, pid, sid in self.scored[columns].itertuples(index=False):
            for e in errors if isinstance(errors, list | tuple) else ():
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

    Reads what :func:`dagmath_viz.formats.discovery.load_paths` reads, file by file through the same
    :meth:`~dagmath_viz.formats.discovery.Discovery.read`, with the same issues; a file of valid
    scored records only becomes frames slice by slice (:func:`scored_jsonl_frames`).
    Rows: loaded trajectories first, then scored records, each in file order.

    From ``stream_bytes`` of raw trajectory data (default
    :func:`dagmath_viz.run.streamed.stream_bytes`: 16 MB, or ``$DAGMATH_STREAM_BYTES``) the
    data are scored by the streaming pool of ``dagmath score`` instead, and no trajectory
    is kept (every :meth:`Corpus.trajectory` is None; pages read steps back from
    ``source``): same rows, values and issues, in a fraction of the memory
    (:mod:`dagmath_viz.run.streamed`).
    ``progress(done, total)`` counts files on both paths. Smaller data stay in memory:
    there a pool costs more time than it saves, and the steps are few.

    ``keep_verdicts`` (the app sets it; ignored when ``checker`` is given): answers are
    checked by :func:`dagmath_viz.answers.check.kept_checker`, which reads and adds to the
    verdicts ``dagmath score`` keeps on disk, so data checked once by either are never
    sent to math-verify again. Uploaded
    files never are: their answers are not written to a file that outlives them.

    ``partial(frame, files_done, files_total)``: on the streamed path, called every few
    seconds while the folder is scored, with the scored rows of what is scored so far (a sample
    of every model and data set; see :func:`dagmath_viz.run.streamed.streamed_parts`).
    """
    if keep_verdicts and checker is None and not any(map(is_uploaded, paths)):
        checker = kept_checker()
        try:
            return load_corpus(
                paths, answers, label, checker, progress, stream_bytes, partial=partial
            )
        finally:
            checker.save()
    from dagmath_viz.run import streamed

    with gc_paused():  # a 100,000-record load is millions of fresh objects: see gc_paused
        found = discover(paths, answers, fields=fields)
        threshold = streamed.stream_bytes() if stream_bytes is None else stream_bytes
        if found.data_files and streamed.raw_bytes(found, _starts_scored) >= threshold:
            frame, issues, files_read, run_copy = streamed.cached_parts(
                paths, answers, found, checker=checker, progress=progress, partial=partial
            )
            return Corpus(
                label=label or ", ".join(map(str, paths)),
                scored=frame,
                trajectories=(None,) * len(frame),
                issues=tuple(issues),
                files_read=files_read,
                run_copy=run_copy,
            )
        issues = list(found.issues)
        loaded_trajectories: list[Trajectory] = []
        files_of: list[tuple[int, Path]] = []  # each trajectory's file, to name a timeout
        scored_parts: list[pd.DataFrame] = []
        for done, f in enumerate(found.data_files, start=1):
            if progress:
                progress(done - 1, len(found.data_files))
            frames = scored_jsonl_frames(f)
            if frames is not None:
                scored_parts.extend(frames)
                continue
            loaded = found.read(f)
            issues.extend(loaded.issues)
            if loaded.scored:
                scored_parts.append(records_frame(loaded.scored))
            loaded_trajectories.extend(loaded.trajectories)
            files_of.extend([(done - 1, f)] * len(loaded.trajectories))
        records = score_records(loaded_trajectories, checker=checker)
        issues.extend(_unsettled(records, files_of))
        if progress:
            progress(len(found.data_files), len(found.data_files))
        parts = [records_frame(records)] if records else []
        del records
        n_scored = sum(len(p) for p in scored_parts)
        frame = concat_frames(parts + scored_parts)
        del parts, scored_parts
    trajectories: list[Trajectory | None] = list(loaded_trajectories)
    trajectories.extend([None] * n_scored)
    return Corpus(
        label=label or ", ".join(map(str, paths)),
        scored=frame,
        trajectories=tuple(trajectories),
        issues=tuple(issues),
        files_read=found.files_read,
    )


def _unsettled(records: list[dict], files_of: list[tuple[int, Path]]) -> list:
    """The warnings :func:`dagmath_viz.run.pool.score_paths` gives for answer checks that
    timed out or failed, from scored records (the in-memory path says what the pool says)."""
    met: dict[tuple[str, str], list] = {}
    reasons: dict[tuple[str, str], str | None] = {}
    for rec, (index, file) in zip(records, files_of, strict=True):
        if rec["reference_answer"] is None:
            continue
        pair = (rec["reference_answer"], rec["predicted_answer"] or "")
        met.setdefault(pair, [index, file, 0])[2] += 1
        reasons.setdefault(pair, rec["answer_check"])
    return unsettled_issues(met, reasons.get)


def scored_jsonl_frames(path: Path, cache_dir: Path | None = None) -> list[pd.DataFrame] | None:
    """A scored JSONL file as one frame (:func:`records_frame`), parsed a slice of lines
    at a time, or read back from its columnar copy (:mod:`dagmath_viz.store.frames`).

    None unless :func:`dagmath_viz.formats.registry.load_file` would read the file in one parse of
    valid scored records (its fast path): then every slice parses as such. Otherwise the
    caller reads the file with ``load_file``, which names every bad line. Only a file
    read this way is cached, so a cached file has no load issues to repeat. ``cache_dir``:
    where the copies are (default :func:`dagmath_viz.store.frames.cache_dir`).
    """
    path = Path(path)
    if record_form(path) != LINES:
        return None  # read by another format's reader, or not plain JSON Lines
    cached = colcache.read(path, cache_dir)
    if cached is not None:
        return [cached]
    try:
        stat = path.stat()  # before reading: a file changed meanwhile is not cached
    except OSError:
        return None  # load_file says why
    frames = _parsed_scored_jsonl(path)
    if frames is None:
        return None
    frame = concat_frames(frames)
    del frames
    colcache.write(path, frame, stat, cache_dir)
    return [frame]


def _parsed_scored_jsonl(path: Path) -> list[pd.DataFrame] | None:
    """The frames of a scored JSONL file's slices (None: load_file reads it instead)."""
    if not _starts_scored(path):
        return None  # trajectories as JSONL: load_file reads them, and the file only once
    try:
        data = jsonio.strip_bom(jsonio.read_lines_bytes(path))
    except InputError:
        return None  # load_file says why
    frames: list[pd.DataFrame] = []
    start, end = 0, len(data)
    while start < end:
        cut = data.find(b"\n", min(start + SCORED_SLICE, end))
        stop = end if cut < 0 else cut + 1
        piece = data[start:stop]
        start = stop
        if not piece.strip():
            continue
        if piece.startswith(jsonio.BOM):  # one parse of the whole file would fail here
            return None
        records = parse_scored_jsonl(piece)
        if records is None:
            return None
        frames.append(records_frame(records))
    return frames or None


def _starts_scored(path: Path) -> bool:
    """Whether the file's first line is a valid scored record: only then is the whole file
    read here, so a JSONL of trajectories is not read twice (here, then by load_file)."""
    try:
        with open(path, "rb") as handle:
            head = jsonio.strip_bom(handle.readline(_FIRST_LINE_BYTES))
    except OSError:
        return False  # load_file says why
    return bool(head.strip()) and parse_scored_jsonl(head) is not None
