"""A data source scored into the app's frame: one implementation, streamed or in memory.

``load_corpus`` decides the strategy (from the bytes of raw data, see
:data:`dagmath_viz.run.corpus.STREAM_BYTES`) and comes here with it, once
(:func:`cached_parts`). Both strategies are the same run, as polars' ``read_*`` is
``scan_*().collect()``: every scored JSONL file of valid records becomes its frame a slice
of lines at a time, or is read back from its columnar copy (:func:`scored_jsonl_frame`,
:mod:`dagmath_viz.store.frames`); every other file is scored by the pool of ``dagmath
score`` (:class:`dagmath_viz.run.pool.Scoring`, iterated here) and its JSON lines become
the scored frame a slice at a time while the files are scored
(:data:`dagmath_viz.score.record.SCORED_SLICE` bytes of lines), so neither every
trajectory nor every record dict exists at once.

- **Streamed** (large raw data; ``keep_steps=False``): the pool's workers score the files
  and no trajectory leaves them (100,000 kept took 2.6 GB and half a minute). Every row's
  trajectory is ``None``, as for rows read from scored JSONL: a page reads one
  trajectory's steps back from its ``source`` when it needs them
  (:class:`dagmath_viz.formats.sources.SourceReader`). The frame is kept as a columnar
  copy of the run, read back while the run is unchanged (:func:`run_key`).
- **In memory** (``keep_steps=True``): the same run in this process, each file read by the
  reference path with its trajectories kept, one per trajectory row.

Rows are the trajectories' in file order, then pre-scored records in file order; the
column values and issues do not depend on the strategy (``tests/test_streamed.py``
compares the two).
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, replace
from itertools import chain
from multiprocessing import spawn
from pathlib import Path
from typing import NamedTuple

import numpy as np
import orjson
import pandas as pd

from dagmath_viz import jsonio
from dagmath_viz.answers.check import AnswerChecker
from dagmath_viz.formats.answer_keys import AnswerKey
from dagmath_viz.formats.discovery import Discovery, discover
from dagmath_viz.formats.scored import parse_scored_jsonl
from dagmath_viz.run.pool import FileScore, Scoring, gc_paused
from dagmath_viz.schema import InputError, LoadIssue, Trajectory
from dagmath_viz.score.record import SCORED_SLICE, concat_frames, records_frame
from dagmath_viz.store import frames as colcache
from dagmath_viz.store.keys import cache_key
from dagmath_viz.store.uploads import is_uploaded

__all__ = [
    "PARTIAL_EVERY",
    "Parts",
    "cached_parts",
    "main_script_hidden",
    "read_back",
    "run_key",
    "scored_frame_of_lines",
    "scored_jsonl_frame",
    "streamed_parts",
    "dead_ends_read_back",
    "tag_counts_read_back",
]

#: Least seconds between two frames of what is scored so far (``streamed_parts(partial=
#: ...)``); the gap grows to half the time scored so far, so a long load does not spend
#: its CPU on them (100,000 trajectories: about 6 frames; each costs ~0.1-0.3 s).
PARTIAL_EVERY = 2.0

#: ``partial(frame, files_done, files_total)``: the records scored so far, as a frame.
Partial = Callable[[pd.DataFrame, int, int], None]


class Parts(NamedTuple):
    """A data source scored: the frame (index 0..n-1), the trajectory behind each row
    (None when not kept, and for a pre-scored record), the issues, the files read."""

    frame: pd.DataFrame
    trajectories: tuple[Trajectory | None, ...]
    issues: list[LoadIssue]
    files_read: int


def cached_parts(
    paths: Sequence[str | Path],
    answers: str | Path | AnswerKey | None,
    found: Discovery,
    *,
    keep_steps: bool = False,
    checker: AnswerChecker | None = None,
    progress: Callable[[int, int], None] | None = None,
    partial: Partial | None = None,
) -> tuple[Parts, tuple[str, str] | None]:
    """:func:`streamed_parts` (``keep_steps``: in memory), and, when no steps are kept,
    the run kept as a columnar copy (:func:`dagmath_viz.store.frames.write_run`) and read
    back instead while the run is unchanged (:func:`run_key`); with the copy's
    ``(identity, key)`` when the frame is the one kept (read back, or just written; None
    otherwise), on which the derived values of :mod:`dagmath_viz.store.views` are keyed.

    Scoring 100,000 trajectories takes tens of seconds each time the app opens the folder;
    reading the copy back takes a fraction of one. A copy holds no steps, so a load that
    keeps them is never read from or kept as one. A run that changed while it was scored
    is not kept; an uploaded run never is (its copy would outlive the session); nor is a
    run in which an answer check timed out or failed: that verdict says how busy the
    machine was, so kept it would show the trajectory incorrect on every later open.
    """
    identity = orjson.dumps([_resolved(p) for p in paths]).decode()
    key = None if keep_steps or any(map(is_uploaded, paths)) else run_key(found)
    cached = None if key is None else colcache.read_run(identity, key)
    if cached is not None:
        frame, extra = cached
        if progress:
            progress(len(found.data_files), len(found.data_files))
        issues = [LoadIssue(**i) for i in extra["issues"]]
        return Parts(frame, (None,) * len(frame), issues, extra["files_read"]), (identity, key)
    with gc_paused():  # a 100,000-record load is millions of fresh objects: see gc_paused
        parts = streamed_parts(
            paths, answers, checker=checker, progress=progress, found=found, partial=partial,
            keep_steps=keep_steps,
        )  # fmt: skip
    kept = None
    if key is not None and run_key(found) == key and _verdicts_settled(parts.frame):
        extra = {"issues": [asdict(i) for i in parts.issues], "files_read": parts.files_read}
        if colcache.write_run(identity, key, parts.frame, extra) is not None:
            kept = (identity, key)
    return parts, kept


def _verdicts_settled(frame: pd.DataFrame) -> bool:
    """No answer check of the frame timed out or failed (``answer_check`` ``timeout`` or
    ``error: ...``; None, for no reference answer, is settled)."""
    if "answer_check" not in frame.columns or not len(frame):
        return True
    checks = frame["answer_check"].dropna().astype(str)
    return not (checks.eq("timeout") | checks.str.startswith("error")).any()


def run_key(found: Discovery) -> str | None:
    """What must be unchanged for a kept copy of a run to be its scores: every data file's
    and companion's path, size, modification and change times and inode (a file rewritten
    in place has a new change time; a companion replaced by a link is no longer met), the
    answer keys, what discovery met, and the code and libraries that derived them
    (:func:`dagmath_viz.store.keys.cache_key`). None if a file cannot be looked at."""
    try:
        files = []
        for f in (*found.data_files, *found.companions):
            st = f.stat()
            files.append((_resolved(f), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    except OSError:
        return None
    read_as = found.answers if found.fields is None else (found.answers, found.fields)
    answers = hashlib.blake2b(repr(read_as).encode(), digest_size=16).hexdigest()
    issues = [asdict(i) for i in found.issues]
    return cache_key("run", answers, issues, files, found.files_read)


def _resolved(path: str | Path) -> str:
    return str(Path(path).expanduser().resolve())


def streamed_parts(
    paths: Sequence[str | Path],
    answers: str | Path | AnswerKey | None = None,
    *,
    checker: AnswerChecker | None = None,
    progress: Callable[[int, int], None] | None = None,
    workers: int | None = None,
    found: Discovery | None = None,
    partial: Partial | None = None,
    partial_every: float | None = None,
    keep_steps: bool = False,
) -> Parts:
    """``paths`` scored: each scored JSONL file of valid records read as its frame
    (:func:`scored_jsonl_frame`), every other file scored by the pool of
    :func:`dagmath_viz.run.pool.score_paths` (its :class:`~dagmath_viz.run.pool.Scoring`,
    iterated here); ``keep_steps``: in this process, each trajectory kept.

    ``progress(done, total)`` counts files, as ``dagmath score`` does. The run (its records
    awaiting verdicts are small: no steps) is dropped once its lines are columns.
    ``found``: the folder's discovery, when the caller made it (it is not walked again).

    ``partial(frame, files_done, files_total)`` is called after ``partial_every`` seconds
    (default :data:`PARTIAL_EVERY`), then every ``partial_every`` seconds or half the time
    scored so far, whichever is longer (``0``: after every file),
    while the folder is scored, with the records of the files scored so far (those whose
    answers are all checked; in the order they were scored, not file order). Files are
    then scored one folder after another in turn, so the frame holds every model and data
    set early on. The returned frame does not depend on it.
    """
    if found is None:
        found = discover(paths, answers)
    every = PARTIAL_EVERY if partial_every is None else partial_every
    files = found.data_files
    frames = _Frames(partial, every, progress, len(files))
    pooled = []  # the files the pool scores, by their place in file order
    for index, f in enumerate(files):
        # a field map renames the fields of every record read, scored ones too (load_file)
        read = found.fields is None and f in found.scored_files
        frame = scored_jsonl_frame(f) if read else None
        if frame is None:
            pooled.append(index)
        else:
            frames.add_read(frame, index)
    with main_script_hidden():
        scoring = Scoring(
            paths, answers, workers=workers, checker=checker,
            found=replace(found, data_files=[files[i] for i in pooled]),
            interleave=partial is not None, keep_trajectory_lines=False,
            keep_trajectories=keep_steps,
        )  # fmt: skip
        for done, (score, verdicts, index) in enumerate(scoring, start=1):
            frames.progress(done, len(pooled))  # counted here: the pool calls nothing back
            frames.add(score, verdicts, pooled[index])
    run = scoring.run
    issues, files_read = list(run.issues), run.files_read
    # the lines of the trajectories come first (one frame); pre-scored records then make
    # one frame per file, so a field a file's records all lack is None there, not NaN
    with run:
        parts = [frames.finish(run.verdicts)]
    parts += [frames.scored[i] for i in sorted(frames.scored)]
    frame = concat_frames([f for f in parts if len(f)] or parts[:1])
    kept = tuple(chain.from_iterable(frames.trajectories[i] for i in sorted(frames.trajectories)))
    return Parts(frame, (*kept, *(None,) * (len(frame) - len(kept))), issues, files_read)


class _Frames:
    """The trajectories' scored frame, made while the
    folder is scored (a slice of :data:`dagmath_viz.score.record.SCORED_SLICE` bytes of lines at
    a time, as :func:`scored_frame_of_lines` makes it) rather than from every line once the
    pool is done, which was a second of one core alone at 100,000 trajectories.

    A file waits until its answers are all checked (the rest when :meth:`finish` has every
    verdict). Its rows are put back in file order at the end: files may be scored in
    another order (``interleave``).

    Each file's pre-scored records are one frame (:attr:`scored`, by file), and its
    trajectories, when kept, are kept by file (:attr:`trajectories`).

    With ``partial``, the rows of the files scored so far (and their pre-scored records)
    are handed to it as one frame after ``every`` seconds, then after gaps of ``every``
    seconds or half the time since the start, whichever is longer (``0``: after every
    file).
    """

    def __init__(
        self,
        partial: Partial | None,
        every: float,
        progress: Callable[[int, int], None] | None,
        n_files: int,
    ) -> None:

        self.partial, self.every, self._progress = partial, every, progress
        self.slice = SCORED_SLICE
        self.parts: list[pd.DataFrame] = []  # the trajectories' rows, in scoring order
        self.files: list[int] = []  # per row of parts: its file's place in file order
        self.scored: dict[int, pd.DataFrame] = {}  # file -> its pre-scored records
        self.trajectories: dict[int, Sequence[Trajectory]] = {}  # file -> its kept ones
        self.n_files = n_files
        self.n_read = 0  # files read as frames of scored records, before the pool
        self.pre_scored: list[pd.DataFrame] = []  # only for partial: the final reads its own
        self.waiting: list[tuple[int, FileScore]] = []  # answers still being checked
        self.lines: list[bytes] = []  # finished lines not yet a frame, and their files
        self.line_files: list[int] = []
        self.size = 0
        self.done = self.total = 0
        self.start = time.monotonic()
        self.next_at = self.start + every

    def progress(self, done: int, total: int) -> None:
        """``done`` of the pool's ``total`` files scored (before each is added), passed on
        counting the files read before the pool too."""
        self.total = total + self.n_read
        if self._progress:
            self._progress(done + self.n_read, self.n_files)

    def add_read(self, frame: pd.DataFrame, index: int) -> None:
        """A file of scored records read as its frame (before the pool starts)."""
        self.scored[index] = frame
        self.n_read += 1
        self.done += 1
        if self.partial is not None:
            self.pre_scored.append(frame)
        if self._progress:
            self._progress(self.n_read, self.n_files)

    #: Files between two looks at the files still waiting for verdicts (a look at every
    #: file would make a cold run, with hundreds of files waiting, quadratic).
    RECHECK_EVERY = 64

    def add(self, score: FileScore, verdicts: dict, index: int) -> None:
        """One file scored (:class:`dagmath_viz.run.pool.Scoring` yields it)."""
        self.done += 1
        if score.scored_lines:
            self.scored[index] = scored_frame_of_lines(score.scored_lines)
            if self.partial is not None:
                self.pre_scored.append(self.scored[index])
        if score.trajectories:
            self.trajectories[index] = score.trajectories
        if score.settled(verdicts):
            self._add(index, score.lines(verdicts))
        else:
            self.waiting.append((index, score))
        if self.waiting and self.done % self.RECHECK_EVERY == 0:
            self._take_settled(verdicts)
        if self.size >= self.slice:
            self._make_frame()
        if self.partial is not None and time.monotonic() >= self.next_at:
            self._take_settled(verdicts)
            self._show()
            now = time.monotonic()
            gap = max(self.every, (now - self.start) / 2) if self.every > 0 else 0.0
            self.next_at = now + gap

    def _take_settled(self, verdicts: dict) -> None:
        still = []
        for index, score in self.waiting:
            if score.settled(verdicts):
                self._add(index, score.lines(verdicts))
            else:
                still.append((index, score))
        self.waiting = still

    def _add(self, index: int, lines: list[bytes]) -> None:
        self.lines.extend(lines)
        self.line_files.extend([index] * len(lines))
        self.size += sum(map(len, lines))

    def _make_frame(self) -> None:
        if self.lines:
            self.parts.append(_slice_frame(self.lines))
            self.files.extend(self.line_files)
        self.lines, self.line_files, self.size = [], [], 0

    def _show(self) -> None:

        self._make_frame()
        if len(self.parts) > 1:  # joined once here, so the next show joins two frames
            self.parts = [concat_frames(self.parts)]
        shown = self.parts + self.pre_scored
        if shown:
            self.pre_scored = [concat_frames(self.pre_scored)] if self.pre_scored else []
            self.partial(concat_frames(shown), self.done, self.total)

    def finish(self, verdicts: dict) -> pd.DataFrame:
        """Every trajectory's row, in file order (``verdicts``: the run's, all known)."""

        for index, score in self.waiting:
            self._add(index, score.lines(verdicts))
        self.waiting = []
        self._make_frame()
        frame = concat_frames(self.parts or [records_frame([])])
        self.parts = []
        files = np.asarray(self.files, dtype=np.int64)
        if len(files) > 1 and (np.diff(files) < 0).any():  # scored out of file order
            frame = frame.take(np.argsort(files, kind="stable")).reset_index(drop=True)
        return frame


@contextmanager
def main_script_hidden() -> Iterator[None]:
    """Keep the script that runs as ``__main__`` from running again in every worker.

    Streamlit runs the app's script as a module it installs as ``sys.modules["__main__"]``
    (with the script's ``__file__`` and no ``__spec__``), anew for every script run. A
    process started by a fork server or by spawn, as the pool's workers are in a threaded
    server, imports that file first, as multiprocessing does for a script's own functions:
    each worker ran the whole app again (loading the data source in bare mode), which made
    a streamed load in the server several times slower than the same load in a script.
    While this is active, the processes started leave ``__main__`` alone: nothing the
    workers run lives in the script. It holds for every process started meanwhile, also
    after a script run has put its module back as ``__main__`` (a worker the pool starts
    again when one died, say on a SIGTERM to the server's whole process group: those
    imported the app and the server hung on its way out). A ``__main__`` with a spec
    (``python -m``) is imported by name and left alone.
    """
    global _hiding
    with _hiding_lock:
        if spawn.get_preparation_data is not _preparation_data:
            _ORIGINAL_PREPARATION.append(spawn.get_preparation_data)
            spawn.get_preparation_data = _preparation_data
        _hiding += 1
    try:
        yield
    finally:
        with _hiding_lock:
            _hiding -= 1


_hiding = 0  # main_script_hidden() contexts active (loads in several threads at once)
_hiding_lock = threading.Lock()
_ORIGINAL_PREPARATION: list[Callable[[str], dict]] = []


def _preparation_data(name: str) -> dict:
    """``multiprocessing.spawn.get_preparation_data``, without the main script's path
    while :func:`main_script_hidden` is active."""
    data = _ORIGINAL_PREPARATION[0](name)
    if _hiding:
        data.pop("init_main_from_path", None)
    return data


def scored_frame_of_lines(lines: Iterable[bytes], slice_bytes: int | None = None) -> pd.DataFrame:
    """Scored JSON lines as one frame, a slice of ``slice_bytes`` at a time.

    Each slice is parsed in one go and made a frame (:func:`records_frame`), and the slices
    are joined as ``load_corpus`` joins a scored file's, so the columns and dtypes are those
    of one frame built from every record.
    """

    limit = SCORED_SLICE if slice_bytes is None else slice_bytes
    frames: list[pd.DataFrame] = []
    piece: list[bytes] = []
    size = 0
    for line in lines:
        piece.append(line if line.endswith(b"\n") else line + b"\n")
        size += len(line)
        if size >= limit:
            frames.append(_slice_frame(piece))
            piece, size = [], 0
    if piece:
        frames.append(_slice_frame(piece))
    return concat_frames(frames)


def _slice_frame(lines: list[bytes]) -> pd.DataFrame:
    """The frame of the scorer's own JSON lines (each one object), parsed in one go: no
    check of the records as a scored file's (:func:`parse_scored_jsonl`) gets, which would
    only choose between this and parsing line by line, to the same records."""
    return records_frame(jsonio.parse(b"[" + b",".join(lines) + b"]"))


def scored_jsonl_frame(path: Path, cache_dir: Path | None = None) -> pd.DataFrame | None:
    """A scored JSONL file as one frame (:func:`records_frame`), parsed a slice of lines
    at a time, or read back from its columnar copy (:mod:`dagmath_viz.store.frames`).

    100,000 records never exist as dicts at once: as dicts they took about 2.5 KB each
    and, freed, left the process hundreds of MB larger than the frame it keeps (about
    45 MB for 100,000 records); ``benchmarks/memory_scored.py`` measures it.

    ``path`` is one of discovery's
    :attr:`~dagmath_viz.formats.discovery.Discovery.scored_files` (plain JSON Lines whose
    first line is a valid scored record). None unless every slice parses as valid scored
    records (:func:`dagmath_viz.formats.registry.load_file`'s fast path too): then the pool
    reads the file with ``load_file``, which names every bad line. Only a file read this
    way is cached, so a cached file has no load issues to repeat. ``cache_dir``: where the
    copies are (default :func:`dagmath_viz.store.frames.cache_dir`).
    """
    path = Path(path)
    cached = colcache.read(path, cache_dir)
    if cached is not None:
        return cached
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
    return frame


def _parsed_scored_jsonl(path: Path) -> list[pd.DataFrame] | None:
    """The frames of a scored JSONL file's slices (None: load_file reads it instead)."""
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


def read_back(
    records: pd.DataFrame, reader, progress: Callable[[int, int], None] | None = None
) -> Iterator[Trajectory]:
    """The trajectories behind scored ``records``, read back from their sources one at a
    time (``reader``: a :class:`~dagmath_viz.formats.sources.SourceReader`, which keeps a few
    files): a consumer that does not keep them holds one file's trajectories at a time.

    Records whose source cannot be read are skipped. ``progress(done, total)`` counts
    records, every :data:`dagmath_viz.analysis.deadends.PROGRESS_EVERY` and at the end.
    """
    part = records[["model", "dataset", "problem_id", "sample_id", "source"]]
    for _rec, traj in _each_read_back(part, reader, progress):
        if traj is not None:
            yield traj


def _each_read_back(
    part: pd.DataFrame, reader, progress: Callable[[int, int], None] | None
) -> Iterator[tuple[tuple, Trajectory | None]]:
    """Each record of ``part`` (with ``model``, ``dataset``, ``problem_id``, ``sample_id``
    and ``source``) and its trajectory read back (None when it cannot be read), one at a
    time; ``progress(done, total)`` every :data:`dagmath_viz.analysis.deadends.PROGRESS_EVERY`
    records and at the end."""
    from dagmath_viz.analysis.deadends import PROGRESS_EVERY

    total = len(part)
    for done, rec in enumerate(part.itertuples(index=False)):
        if progress and done % PROGRESS_EVERY == 0:
            progress(done, total)
        key = (rec.model, rec.dataset, str(rec.problem_id), int(rec.sample_id))
        traj, _why = reader.read(rec.source, key)
        yield rec, traj
    if progress:
        progress(total, total)


def tag_counts_read_back(
    loaded: Iterable[Trajectory | None],
    records: pd.DataFrame | None = None,
    reader=None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[pd.DataFrame, int]:
    """Dead ends by step tag (:func:`dagmath_viz.analysis.step_tags.dead_end_tag_counts`) over the
    ``loaded`` trajectories and those of ``records`` read back by ``reader``
    (:func:`read_back`), never holding the read-back ones all at once; and how many
    trajectories were counted."""
    from dagmath_viz.analysis.step_tags import dead_end_tag_counts

    counted = 0

    def every() -> Iterator[Trajectory]:
        nonlocal counted
        sources = read_back(records, reader, progress) if records is not None else ()
        for traj in chain(loaded, sources):
            if traj is not None:
                counted += 1
                yield traj

    table = dead_end_tag_counts(every())
    return table, counted


def dead_ends_read_back(
    records: pd.DataFrame,
    reader,
    loaded: Iterable[Trajectory | None] = (),
    progress: Callable[[int, int], None] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """Both dead-end tables of scored ``records``, reading each record's source once.

    Returns what :func:`dagmath_viz.analysis.deadends.scored_dead_end_table` (with ``reader``) and
    :func:`tag_counts_read_back` (over ``loaded`` and ``records``) return, with the same
    rows: the dead ends listed by the records, their text and category read from the
    sources; the dead ends by step tag; and how many trajectories were counted. Calling
    both read the sources of the records with dead ends twice; a raw folder of 100,000
    trajectories is thousands of files. ``progress(done, total)`` counts records, every
    :data:`dagmath_viz.analysis.deadends.PROGRESS_EVERY` and at the end.
    """
    from dagmath_viz.analysis.deadends import COLUMNS, UNKNOWN, categorise_dead_ends
    from dagmath_viz.analysis.step_tags import dead_end_tag_counts

    part = records[["model", "dataset", "problem_id", "sample_id", "dead_ends", "source"]]
    listed: list[tuple] = []
    counted = 0

    def every() -> Iterator[Trajectory]:
        nonlocal counted
        for traj in loaded:
            if traj is not None:
                counted += 1
                yield traj
        for rec, traj in _each_read_back(part, reader, progress):
            dead = list(rec.dead_ends or ())
            known: dict = {}
            if traj is not None and dead:
                for pos, category in categorise_dead_ends(traj):
                    step = traj.steps[pos]
                    known[step.step_id] = (step.text, category)
            for sid in dead:
                text, category = known.get(sid, ("", UNKNOWN))
                listed.append(
                    (rec.model, rec.dataset, rec.problem_id, rec.sample_id, sid, text, category)
                )
            if traj is not None:
                counted += 1
                yield traj

    by_tag = dead_end_tag_counts(every())
    return pd.DataFrame(listed, columns=COLUMNS), by_tag, counted
