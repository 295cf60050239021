"""Score a whole run file by file in several processes, keeping little in memory.

What ``dagmath score`` runs. Each data file is one task: a worker reads and parses it,
validates and measures every trajectory, extracts the predicted answers, and sends back
small pieces of JSON per record plus its (reference, prediction) pair; trajectories never
leave the worker. The parent keeps the pieces in file order, checks each distinct pair once
(cached, fast path for plain numbers, the math-verify worker in a background thread that
starts when the first pair needs it, so it overlaps the parsing) and joins the pieces into
the same JSON lines, byte for byte, that scoring the loaded trajectories one by one writes.

The clean common case (a JSON array of model-output samples with integer step ids and
parents that point backwards) is measured straight from the parsed dicts. A record with
anything unusual in it goes through :func:`dagmath_viz.loading.parse_record` and
:func:`dagmath_viz.scoring.structure_of`, and any other file (JSONL, one object, invalid
JSON, pre-scored records) through :func:`dagmath_viz.loading.load_file`, so faults and
issues read exactly as they do there. ``tests/test_parallel.py`` holds the paths to the
same output, byte for byte.

Workers are forked when this process has a single thread (the command line), else started
by a fork server; as with any ``multiprocessing`` user, a script that calls
:func:`score_paths` must guard its top level with ``if __name__ == "__main__":``.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import queue
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain, compress, repeat
from operator import lt
from pathlib import Path
from types import NoneType
from typing import NamedTuple

import orjson

from dagmath_viz import graph as g
from dagmath_viz import loading
from dagmath_viz.answers import AnswerChecker, Verdict, default_checker, predicted_answer
from dagmath_viz.loading import AnswerKey
from dagmath_viz.schema import InputError, LoadIssue, Trajectory
from dagmath_viz.scoring import (
    RECORD_FIELDS,
    Structure,
    _finish,
    _id_order,
    _pair,
    classify,
    structure_of,
    to_record,
)

__all__ = [
    "AnswerContext",
    "FileScore",
    "Pending",
    "ScoredRun",
    "answer_context",
    "default_workers",
    "finish_lines",
    "gc_paused",
    "load_paths",
    "score_file",
    "score_paths",
]

#: Record fields before the verdict, the verdict's own, and after it (RECORD_FIELDS order).
HEAD_FIELDS = RECORD_FIELDS[: RECORD_FIELDS.index("final_correct")]
VERDICT_FIELDS = ("final_correct", "perfect", "class", "answer_check")
TAIL_FIELDS = RECORD_FIELDS[RECORD_FIELDS.index("answer_check") + 1 :]
assert HEAD_FIELDS + VERDICT_FIELDS + TAIL_FIELDS == RECORD_FIELDS

#: Below this many bytes of data a run is scored in this process (a pool costs ~0.5 s).
IN_PROCESS_BYTES = 16 * 2**20
_OPTS = orjson.OPT_SERIALIZE_NUMPY
_BOM = b"\xef\xbb\xbf"


def _plain_bytes(path: Path) -> bytes | None:
    """A file's bytes for a fast path; None (unreadable, or a BOM) leaves it to loading."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return None if data.startswith(_BOM) else data


_STR_OR_NULL = frozenset({str, NoneType})
_INT = {int}
_LIST_OR_NULL = frozenset({list, NoneType})


class Pending(NamedTuple):
    """One scored trajectory waiting for its verdict: JSON before and after the verdict."""

    head: bytes  # '{"model":...,"reference_answer":...' (no closing brace)
    pair: tuple[str, str] | None  # (reference, prediction); None without a reference
    legal: bool
    closed: bool
    tail: bytes  # ',"errors":[...],"source":"..."}'


class FileScore(NamedTuple):
    """What one file gives: pending records, pre-scored JSON lines, issues, class counts."""

    records: list[Pending]
    scored_lines: list[bytes]
    issues: list[LoadIssue]
    scored_illegal: int = 0
    scored_unscored: int = 0


@dataclass(frozen=True)
class AnswerContext:
    """The answer keys of a run: the explicit one and each folder's (see ``load_paths``)."""

    explicit: AnswerKey | None
    folder_keys: dict[Path, AnswerKey]

    def keys_for(self, path: Path) -> list[AnswerKey]:
        return loading._keys_for(path, self.folder_keys)


def answer_context(
    paths: Sequence[str | Path], answers: str | Path | AnswerKey | None = None
) -> tuple[list[Path], AnswerContext, list[LoadIssue], int]:
    """Data files, answer keys, issues met and files read, as ``load_paths`` finds them.

    Raises:
        InputError: the explicit ``answers`` file cannot be read.
    """
    explicit = loading.load_answer_key(answers) if isinstance(answers, str | Path) else answers
    data_files, answer_files, issues = loading._discover(paths)
    folder_keys: dict[Path, AnswerKey] = {}
    for f in answer_files:
        try:
            folder_keys[f.parent.resolve()] = loading.load_answer_key(f)
        except InputError as exc:
            issues.append(LoadIssue(str(f), "file", str(exc).removeprefix(f"{f}: ")))
    files_read = len(data_files) + len(answer_files)
    return data_files, AnswerContext(explicit, folder_keys), issues, files_read


# --------------------------------------------------------------------------- one file


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (reference counting still frees everything).

    A parsed file is tens of thousands of fresh dicts and lists; each batch of them would
    start a collection that walks every object alive, which doubled the time of a run.
    Nothing here makes reference cycles, so nothing is left for the collector to find.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def score_file(path: Path, context: AnswerContext) -> FileScore:
    """Score every record of one file (the unit of work of a worker)."""
    with gc_paused():
        return _score_file(Path(path), context)


def _score_file(path: Path, context: AnswerContext) -> FileScore:
    keys = context.keys_for(path)
    fast = _fast_file(path, context.explicit, keys)
    if fast is not None:
        return fast
    trajectories, scored, issues = loading.load_file(path)
    records = []
    for traj in trajectories:
        traj = loading._with_answers(traj, context.explicit, keys)
        records.append(_pending_of(traj, structure_of(traj)))
    return FileScore(
        records,
        [orjson.dumps(r, option=_OPTS | orjson.OPT_APPEND_NEWLINE) for r in scored],
        issues,
        sum(r["class"] == "illegal" for r in scored),
        sum(r["class"] == "unscored" for r in scored),
    )


def _pending_of(traj: Trajectory, st: Structure) -> Pending:
    record = to_record(traj, _finish(traj, st, None), None)
    return _pending(record, _pair(traj, st), st.legal, st.legal and not st.dead_ends)


def _pending(record: dict, pair, legal: bool, closed: bool) -> Pending:
    head = orjson.dumps({k: record[k] for k in HEAD_FIELDS}, option=_OPTS)[:-1]
    tail = b"," + orjson.dumps({k: record[k] for k in TAIL_FIELDS}, option=_OPTS)[1:]
    return Pending(head, pair, legal, closed, tail)


def _fast_file(path: Path, explicit: AnswerKey | None, keys: list[AnswerKey]) -> FileScore | None:
    """A JSON array of samples, each clean one measured from its dict, any other through
    ``parse_record`` and ``structure_of``; None (anything else) sends the file to loading."""
    data = None if path.suffix.lower() == ".jsonl" else _plain_bytes(path)
    if data is None:
        return None
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    if type(doc) is not list:
        return None
    if any(type(r) is dict and loading.SCORED_FIELDS <= r.keys() for r in doc):
        return None
    ctx = loading._context(path)
    file = str(path)
    records: list[Pending] = []
    issues: list[LoadIssue] = []
    for i, rec in enumerate(doc):
        # the location and position load_file gives the i-th item of a top-level array
        where = f"item {i + 1}"
        measured = _measure(rec["steps"]) if type(rec) is dict and "steps" in rec else None
        if measured is not None:
            # the record's own fields exactly as loading reads them (steps measured above)
            traj, found = loading.parse_record({**rec, "steps": []}, file, where, i, context=ctx)
            if traj.load_errors:  # loading objects to something beyond the steps
                measured = None
        if measured is None:  # a fault somewhere, or an unusual shape: loading decides
            traj, found = loading.parse_record(rec, file, where, i, context=ctx)
            issues.extend(found)
            if traj is not None:
                traj = loading._with_answers(traj, explicit, keys)
                records.append(_pending_of(traj, structure_of(traj)))
            continue
        issues.extend(found)
        traj = loading._with_answers(traj, explicit, keys)
        records.append(_fast_pending(traj, *measured))
    return FileScore(records, [], issues)


def _measure(steps) -> tuple | None:
    """Statistics of well-formed steps, or None for anything validation would flag.

    Mirrors ``loading._parse_steps`` + ``validation.validate`` + ``graph`` on the one shape
    they accept without a remark: objects with distinct integer ``step_id``s, parents a list
    (or null) of earlier ids, text fields that are strings, a final step with text. Field
    access and type checks run over all steps at once (``map`` in C); only the edges are
    walked in Python.
    """
    if type(steps) is not list or not steps:
        return None
    n = len(steps)
    try:
        ids = list(map(dict.get, steps, repeat("step_id")))
        raws = list(map(dict.get, steps, repeat("direct_dependent_steps")))
        text_types = set(map(type, map(dict.get, steps, repeat("text"))))
        why_types = set(map(type, map(dict.get, steps, repeat("thinking"))))
        gold = any(map(dict.__contains__, steps, repeat("node")))
    except TypeError:  # a step that is not an object
        return None
    if gold or not text_types <= _STR_OR_NULL or not why_types <= _STR_OR_NULL:
        return None  # gold spelling is named differently by loading; other types are faults
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
    if ids == list(range(1, n + 1)):  # the usual numbering: position = id - 1
        position = None
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
    final_text = steps[-1].get("text") or ""
    if not final_text.strip():
        return None
    distinct = list(map(set, listed))
    if sum(map(len, distinct)) != len(flat):  # a parent listed twice counts once
        listed = distinct
        flat = list(chain.from_iterable(distinct))
    out = Counter(flat)  # children per parent id
    max_in = max(map(len, listed), default=0)
    max_out = max(out.values(), default=0)
    dead = [sid for sid in ids[:-1] if sid not in out]
    if not dead:  # every other step has a child: all paths end at the final step
        reached = n
    else:
        reaches = [False] * n  # the final step and its ancestors, in one backward pass
        reaches[-1] = True
        at = (lambda sid: sid - 1) if position is None else position.__getitem__
        for i in range(n - 1, -1, -1):
            if reaches[i] and raws[i]:
                for p in raws[i]:
                    reaches[at(p)] = True
        reached = sum(reaches)
        dead.sort(key=_id_order)
    return n, len(flat), max_in, max_out, dead, reached, final_text


def _or_empty(raws: list) -> list:
    return [r or () for r in raws]


def _fast_pending(traj: Trajectory, n, n_edges, max_in, max_out, dead, reached, final_text):
    prediction = predicted_answer(final_text) or None
    record = {
        "model": traj.model,
        "dataset": traj.dataset,
        "problem_id": traj.problem_id,
        "sample_id": traj.sample_id,
        "difficulty": traj.difficulty,
        "domain": traj.domain,
        "n_nodes": n,
        "n_edges": n_edges,
        "density": g.density(n, n_edges),
        "max_in_degree": max_in,
        "max_out_degree": max_out,
        "dead_ends": dead,
        "closeness_rate": g.closeness_rate(n, len(dead)),
        "closed": not dead,
        "ancestor_share": reached / n,
        "predicted_answer": prediction,
        "reference_answer": traj.reference_answer,
        "errors": [],
        "source": traj.source,
    }
    ref = traj.reference_answer
    return _pending(record, None if ref is None else (ref, prediction or ""), True, not dead)


# --------------------------------------------------------------------------- loading for the app


def load_paths(
    paths: Sequence[str | Path], answers: str | Path | AnswerKey | None = None
) -> loading.LoadResult:
    """:func:`dagmath_viz.loading.load_paths`, with scored JSONL read in one go.

    The app reads what ``dagmath score`` wrote; a file that holds nothing but valid scored
    records (the usual case) is parsed whole, which is several times faster than line by
    line. Anything else in it, and every other file, goes through ``loading.load_file``,
    so the result is the same in every case.
    """
    files, context, issues, files_read = answer_context(paths, answers)
    trajectories: list[Trajectory] = []
    scored: list[dict] = []
    for f in files:
        records = _scored_jsonl(f)
        if records is not None:
            scored.extend(records)
            continue
        found, found_scored, found_issues = loading.load_file(f)
        issues.extend(found_issues)
        scored.extend(found_scored)
        keys = context.keys_for(f)
        trajectories.extend(loading._with_answers(t, context.explicit, keys) for t in found)
    return loading.LoadResult(
        trajectories=tuple(trajectories),
        issues=tuple(issues),
        files_read=files_read,
        scored_records=tuple(scored),
    )


def _scored_jsonl(path: Path) -> list[dict] | None:
    """Every record of a JSONL file of valid scored records, else None."""
    data = _plain_bytes(path) if path.suffix.lower() == ".jsonl" else None
    if data is None:
        return None
    lines = [line for line in data.split(b"\n") if line.strip()]
    try:
        records = orjson.loads(b"[" + b",".join(lines) + b"]")
    except orjson.JSONDecodeError:
        return None
    # one object per line (a line holding two values would make the counts differ)
    if len(records) != len(lines) or not lines:
        return None
    fields = loading.SCORED_FIELDS
    for record in records:
        if type(record) is not dict or not fields <= record.keys():
            return None
        if loading._scored_fault(record) is not None:
            return None
    return records


# --------------------------------------------------------------------------- verdicts and lines


def finish_lines(
    records: Sequence[Pending], verdicts: dict[tuple[str, str], Verdict]
) -> Iterator[bytes]:
    """The scored JSON lines of pending records, given the verdict of each pair."""
    mids: dict[tuple, bytes] = {}
    for rec in records:
        verdict = None if rec.pair is None else verdicts[rec.pair]
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


class _Verifier:
    """Checks pairs in background threads as they arrive, so math-verify overlaps the parsing.

    The first thread uses the caller's checker (its worker starts on the first pair no fast
    path settles); while the queue stays long, up to ``max_threads`` more threads join, each
    with its own math-verify worker, and their verdicts go into the caller's checker at the
    end (so they are cached like the rest).
    """

    #: pairs waiting before ``on_busy`` is called: math-verify is then the long pole
    BUSY = 16
    #: pairs waiting per running thread before another thread (and worker) joins
    BACKLOG = 64
    #: the same once parsing is over and its CPUs are free (a worker takes ~1 s to start)
    TAIL_BACKLOG = 300

    def __init__(
        self,
        checker: AnswerChecker,
        on_busy: Callable[[], None] | None = None,
        max_threads: int = 1,
    ) -> None:
        self.checker = checker
        self.verdicts: dict[tuple[str, str], Verdict] = {}
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._extra: list[AnswerChecker] = []
        self._on_busy = on_busy
        self._max_threads = max(1, max_threads)

    def add(self, records: Sequence[Pending]) -> None:
        for rec in records:
            pair = rec.pair
            if pair is None or pair in self.verdicts:
                continue
            verdict = self.checker.quick_verdict(*pair)
            if verdict is not None:
                self.verdicts[pair] = verdict
                continue
            self.verdicts[pair] = None  # claimed; a thread fills it in
            self._queue.put(pair)
            waiting = self._queue.qsize()
            if not self._threads:
                self._spawn(self.checker)
            elif len(self._threads) < self._max_threads:
                if waiting > self.BACKLOG * len(self._threads):
                    self._add_worker()
            if self._on_busy and waiting >= self.BUSY:
                self._on_busy()
                self._on_busy = None

    def _add_worker(self) -> None:
        extra = AnswerChecker(timeout=self.checker.timeout)
        self._extra.append(extra)
        self._spawn(extra)

    def _spawn(self, checker: AnswerChecker) -> None:
        thread = threading.Thread(
            target=self._run, args=(checker,), name="dagmath-verify", daemon=True
        )
        self._threads.append(thread)
        thread.start()

    def _run(self, checker: AnswerChecker) -> None:
        while (pair := self._queue.get()) is not None:
            self.verdicts[pair] = checker.check(*pair)

    def finish(self, spare_cpus: int = 0) -> dict[tuple[str, str], Verdict]:
        """All verdicts; with ``spare_cpus`` (the pool is done) more workers take a long
        backlog (each costs a second or so to start, so only for hundreds of pairs)."""
        for _ in range(spare_cpus):
            if self._threads and self._queue.qsize() > self.TAIL_BACKLOG * len(self._threads):
                self._add_worker()
        for _ in self._threads:
            self._queue.put(None)
        for thread in self._threads:
            thread.join()
        for extra in self._extra:
            for reference, prediction, verdict in extra._learned:
                self.checker.learn(reference, prediction, verdict)
            extra.close()
        return self.verdicts


# --------------------------------------------------------------------------- a whole run


@dataclass
class ScoredRun:
    """A scored run: issues met, counts, and the scored JSON lines (:meth:`lines`)."""

    files: list[FileScore]
    verdicts: dict[tuple[str, str], Verdict]
    issues: list[LoadIssue]
    files_read: int

    def __len__(self) -> int:
        return sum(len(f.records) + len(f.scored_lines) for f in self.files)

    @property
    def n_illegal(self) -> int:
        return sum(sum(not r.legal for r in f.records) + f.scored_illegal for f in self.files)

    @property
    def n_unscored(self) -> int:
        return sum(
            sum(r.legal and r.pair is None for r in f.records) + f.scored_unscored
            for f in self.files
        )

    @property
    def unreadable_files(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(i.file for i in self.issues if i.location == "file"))

    def lines(self) -> Iterator[bytes]:
        """Every record as one JSON line: trajectories in file order, then pre-scored records."""
        for f in self.files:
            yield from finish_lines(f.records, self.verdicts)
        for f in self.files:
            yield from f.scored_lines

    def records(self) -> Iterator[dict]:
        """The scored records as dicts (the fields of :data:`RECORD_FIELDS`)."""
        return (orjson.loads(line) for line in self.lines())


def default_workers() -> int:
    """The CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def score_paths(
    paths: Sequence[str | Path],
    answers: str | Path | AnswerKey | None = None,
    *,
    workers: int | None = None,
    checker: AnswerChecker | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ScoredRun:
    """Score everything under ``paths`` with ``workers`` processes (default: every CPU).

    Same records, issues and order as ``load_paths`` followed by ``score_records``. Small
    runs (under :data:`IN_PROCESS_BYTES`) and ``workers=1`` stay in this process.
    ``progress(done, total)`` counts files.

    Raises:
        InputError: the explicit ``answers`` file cannot be read.
    """
    files, context, issues, files_read = answer_context(paths, answers)
    pool: list[int] = []  # the pool's process ids, once it runs
    # math-verify (one process, a chain of checks) is the long pole of a cold run: once
    # pairs pile up for it, the pool workers give it the CPU first and take what is left
    workers = max(1, min(workers or default_workers(), len(files)))
    verifier = _Verifier(
        checker or default_checker(),
        on_busy=lambda: _yield_cpu(pool),
        max_threads=max(1, (workers or default_workers()) // 2),
    )
    if workers > 1 and _total_bytes(files) < IN_PROCESS_BYTES:
        workers = 1
    results: list[FileScore] = []
    with gc_paused():
        for done, result in enumerate(_map_files(files, context, workers, pool), start=1):
            results.append(result)
            verifier.add(result.records)
            if progress:
                progress(done, len(files))
    for result in results:
        issues.extend(result.issues)
    return ScoredRun(results, verifier.finish(spare_cpus=workers - 1), issues, files_read)


def _total_bytes(files: Sequence[Path]) -> int:
    total = 0
    for f in files:
        try:
            total += f.stat().st_size
        except OSError:
            pass
    return total


_worker_context: AnswerContext | None = None


def _init_worker(context: AnswerContext) -> None:
    global _worker_context
    _worker_context = context
    gc.freeze()  # the imported modules: never worth a collector's walk again


def _score_in_worker(path: Path) -> FileScore:
    return score_file(path, _worker_context)


def _start_method() -> str:
    """``fork`` in a single-threaded process on Linux (workers start at once, with this
    module already imported); else ``forkserver`` (forking a threaded process is unsafe),
    where workers fork from one server that imported this module once."""
    methods = multiprocessing.get_all_start_methods()
    if sys.platform == "linux" and threading.active_count() == 1 and "fork" in methods:
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


#: Niceness of pool workers while math-verify runs (0 is normal; higher yields the CPU).
POOL_NICE_DURING_CHECKS = 10


def _yield_cpu(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.setpriority(os.PRIO_PROCESS, pid, POOL_NICE_DURING_CHECKS)
        except (OSError, AttributeError):  # gone already, or not on this platform
            pass


def _map_files(
    files: list[Path], context: AnswerContext, workers: int, pids: list[int]
) -> Iterator[FileScore]:
    if workers == 1:
        for f in files:
            yield score_file(f, context)
        return
    mp = multiprocessing.get_context(_start_method())
    if mp.get_start_method() == "forkserver":
        mp.set_forkserver_preload([__name__])
    chunk = 1 if len(files) < 4 * 64 * workers else 4
    with mp.Pool(workers, initializer=_init_worker, initargs=(context,)) as pool:
        pids.extend(p.pid for p in getattr(pool, "_pool", ()))
        yield from pool.imap(_score_in_worker, files, chunksize=chunk)
