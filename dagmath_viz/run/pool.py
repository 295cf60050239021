"""The scoring pipeline of ``dagmath score``: a pool of processes, verdict threads, a result.

Follow ``dagmath score PATH`` from here: :func:`score_paths` asks
:func:`dagmath_viz.formats.discovery.discover` for the data files and answer keys, then each file is
one task (:func:`score_file`): a worker scores it by the fast path
(:mod:`dagmath_viz.score.fast`) when it is a clean JSON array of samples, else loads it
(:func:`dagmath_viz.formats.registry.load_file`) and scores it by the reference path
(:mod:`dagmath_viz.score.reference`). Workers send back small pieces of JSON per record plus its
(reference, prediction) pair; trajectories never leave the worker. The parent keeps the
pieces in file order, checks each distinct pair once (cached, fast path for plain numbers,
the math-verify worker in background threads that start when the first pair needs it, so
they overlap the parsing) and joins the pieces into JSON lines (:class:`ScoredRun`). The
module reads in that order, each function before the ones it calls: the run, the pool, one
file, then the verdicts and the result.

Workers are forked when this process has a single thread (the command line), else started
by a fork server; as with any ``multiprocessing`` user, a script that calls
:func:`score_paths` must guard its top level with ``if __name__ == "__main__":``.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import queue
import struct
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import orjson

from dagmath_viz import jsonio
from dagmath_viz.answers.check import AnswerChecker, Verdict, default_checker
from dagmath_viz.formats import discovery, registry
from dagmath_viz.formats.answer_keys import AnswerKey, AnswerKeys
from dagmath_viz.formats.fieldmap import FieldMap
from dagmath_viz.schema import LoadIssue, Trajectory
from dagmath_viz.score.fast import score_clean_file
from dagmath_viz.score.reference import AwaitingVerdict, awaiting_verdict_of, finish_lines

if TYPE_CHECKING:
    from ctypes import c_byte

__all__ = [
    "FileScore",
    "ScoredRun",
    "Scoring",
    "Verifier",
    "default_workers",
    "gc_paused",
    "score_file",
    "score_paths",
]


#: Below this many bytes of data a run is scored in this process (a pool costs ~0.5 s).
IN_PROCESS_BYTES = 16 * 2**20

T = TypeVar("T")


# --------------------------------------------------------------------------- a whole run


def score_paths(
    paths: Sequence[str | Path],
    answers: str | Path | AnswerKey | None = None,
    *,
    workers: int | None = None,
    checker: AnswerChecker | None = None,
    progress: Callable[[int, int], None] | None = None,
    exclude: Sequence[str | Path] = (),
    found: discovery.Discovery | None = None,
    interleave: bool = False,
    on_file: Callable[[FileScore, dict[tuple[str, str], Verdict | None], int], None] | None = None,
    keep_trajectory_lines: bool = True,
    fields: FieldMap | None = None,
) -> ScoredRun:
    """Score everything under ``paths`` with ``workers`` processes (default: every CPU).

    Same records, issues and order as ``load_paths`` followed by ``score_records``. Small
    runs (under :data:`IN_PROCESS_BYTES`) and ``workers=1`` stay in this process.
    ``progress(done, total)`` counts files; ``exclude`` names files never read (the
    run's own output, see :func:`dagmath_viz.formats.discovery.discover`). ``found``: what
    ``discover(paths, answers, exclude=exclude)`` gave the caller already (a large folder
    is not walked twice).

    ``interleave``: the files are scored one folder after another in turn (round robin
    over ``<model>/<dataset>``), not folder by folder, so that what is scored after any
    share of the time is a sample of every model and data set (the app shows it while
    the rest is scored); the run's lines keep file order all the same. ``on_file(score,
    verdicts, index)`` is called in this thread after each file (after ``progress``), in
    the order files are scored, with the verdicts known so far (None for a pair still
    being checked) and the file's place in file order. ``keep_trajectory_lines=False``:
    the run keeps no lines of the trajectories (:meth:`ScoredRun.trajectory_lines` yields
    none), for a caller that makes them from ``on_file``; its counts, issues and
    pre-scored lines are kept all the same. ``fields``: a field map applied to every
    record read (``--map``; the clean-array fast path is then not taken).

    Raises:
        InputError: the explicit ``answers`` file cannot be read.
    """
    scoring = Scoring(
        paths, answers, workers=workers, checker=checker, progress=progress, exclude=exclude,
        found=found, interleave=interleave, keep_trajectory_lines=keep_trajectory_lines,
        fields=fields,
    )  # fmt: skip
    for result, verdicts, index in scoring:
        if on_file:
            on_file(result, verdicts, index)
    return scoring.run


class Scoring:
    """A run of :func:`score_paths` scored as it is iterated: each step yields one file's
    score, the verdicts known so far (None for a pair still being checked) and the file's
    place in file order, after ``progress``; once the iteration ends, :attr:`run` holds the
    :class:`ScoredRun` with every verdict. A caller that makes something of each file as
    it comes (the streamed load's frame) iterates it, so nothing here calls back up into
    that caller. The arguments are :func:`score_paths`' own, and ``keep_trajectories``:
    each file's trajectories come with its score (:attr:`FileScore.trajectories`, answer
    keys applied), read by the reference path (never the fast path, which builds none) in
    this process (a pool would copy every trajectory back from its workers), as a small
    run is scored; the app's in-memory load keeps them.
    """

    def __init__(
        self,
        paths: Sequence[str | Path],
        answers: str | Path | AnswerKey | None = None,
        *,
        workers: int | None = None,
        checker: AnswerChecker | None = None,
        progress: Callable[[int, int], None] | None = None,
        exclude: Sequence[str | Path] = (),
        found: discovery.Discovery | None = None,
        interleave: bool = False,
        keep_trajectory_lines: bool = True,
        fields: FieldMap | None = None,
        keep_trajectories: bool = False,
    ) -> None:
        if found is None:
            found = discovery.discover(paths, answers, exclude=exclude, fields=fields)
        self.found, self.workers, self.checker = found, workers, checker
        self.progress, self.interleave = progress, interleave
        self.keep_trajectory_lines = keep_trajectory_lines
        self.keep_trajectories = keep_trajectories
        self._run: ScoredRun | None = None

    @property
    def run(self) -> ScoredRun:
        """The scored run (once the iteration has ended)."""
        if self._run is None:
            raise RuntimeError("the run is not scored yet: iterate the Scoring first")
        return self._run

    def __iter__(self) -> Iterator[tuple[FileScore, dict[tuple[str, str], Verdict | None], int]]:
        found, progress = self.found, self.progress
        files, issues = found.data_files, list(found.issues)
        workers = max(1, min(self.workers or default_workers(), len(files)))
        max_threads = max(1, workers // 2)
        if workers > 1 and (self.keep_trajectories or _total_bytes(files) < IN_PROCESS_BYTES):
            workers = 1
        # math-verify (one process, a chain of checks) is the long pole of a cold run: while
        # pairs pile up for it, the pool's workers score at a lower priority, so it gets the
        # CPU first and they take what is left; once none wait, they are back to normal
        checks_pending = multiprocessing.RawValue("b", 0) if workers > 1 else None
        verifier = Verifier(
            self.checker or default_checker(),
            on_busy=None if checks_pending is None else _flag_setter(checks_pending),
            max_threads=max_threads,
        )
        run = ScoredRun(verifier.verdicts, issues, found.files_read, self.keep_trajectory_lines)
        order = interleaved(files) if self.interleave else range(len(files))
        met: dict[tuple[str, str], list] = {}  # pair -> [file index, file, trajectories]
        try:
            with gc_paused():
                mapped = _map_files(
                    [files[i] for i in order], found.answers, found.fields, workers,
                    checks_pending, self.keep_trajectories,
                )  # fmt: skip
                for done, (index, result) in enumerate(zip(order, mapped, strict=True), start=1):
                    verifier.add(result.records)
                    run.add(result, index)
                    for rec in result.records:
                        if rec.pair is not None:
                            met.setdefault(rec.pair, [index, files[index], 0])[2] += 1
                    if progress:
                        progress(done, len(files))
                    yield result, verifier.verdicts, index
            run.verdicts = verifier.finish(spare_cpus=workers - 1)
            verdicts = run.verdicts
            reasons = unsettled_issues(met, lambda p: getattr(verdicts.get(p), "reason", None))
            # a field map's warnings: one per mapped field, not one per file
            issues[:] = registry.map_warnings_summarised(found.fields, files, issues)
            issues.extend(reasons)
        except BaseException:  # an error or Ctrl-C: the spooled pieces go at once
            run.close()
            raise
        self._run = run


def unsettled_issues(
    met: dict[tuple[str, str], list], reason_of: Callable[[tuple[str, str]], str | None]
) -> list[LoadIssue]:
    """A warning for each answer check that timed out or failed, naming the first file
    that gave the pair: the trajectories are kept, scored not equivalent, and the reader
    learns which answers those are (a crafted one, or a machine too busy for the deadline).

    ``met``: pair -> [file index, file, trajectories], in the order pairs were met;
    ``reason_of(pair)``: its ``answer_check``. In file order, whatever order files were
    scored in (the in-memory path of :func:`dagmath_viz.run.corpus.load_corpus` gives the
    same warnings).
    """
    from dagmath_viz.text import counted, short_repr

    found = []
    for pair, (index, file, n) in met.items():
        reason = reason_of(pair)
        if reason is None or Verdict(False, reason).settled:
            continue
        message = (
            f"answer check {reason} on predicted answer {short_repr(pair[1], 60)} "
            f"({counted(n, 'trajectory', 'trajectories')}): scored not equivalent"
        )
        found.append((index, LoadIssue(str(file), "", message, severity="warning")))
    found.sort(key=lambda item: item[0])  # stable: pairs of one file stay in their order
    return [issue for _, issue in found]


def interleaved(files: Sequence[Path]) -> list[int]:
    """Indices of ``files`` taking one file of each folder in turn (folders in the order
    they first appear, each folder's files in their order): ``a/1 a/2 b/1`` gives
    ``a/1 b/1 a/2``."""
    folders: dict[Path, list[int]] = {}
    for i, f in enumerate(files):
        folders.setdefault(Path(f).parent, []).append(i)
    queues = list(folders.values())
    order: list[int] = []
    for turn in range(max(map(len, queues), default=0)):
        order.extend(q[turn] for q in queues if turn < len(q))
    return order


def default_workers() -> int:
    """The CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _total_bytes(files: Sequence[Path]) -> int:
    total = 0
    for f in files:
        try:
            total += f.stat().st_size
        except OSError:
            pass
    return total


def _flag_setter(flag: c_byte) -> Callable[[bool], None]:
    """``on_busy`` for :class:`Verifier`: the pool's workers read ``flag`` before each file."""

    def set_flag(busy: bool) -> None:
        flag.value = busy

    return set_flag


# --------------------------------------------------------------------------- the pool


def _map_files(
    files: list[Path],
    answers: AnswerKeys,
    fields: FieldMap | None,
    workers: int,
    checks_pending: c_byte | None,
    keep_trajectories: bool = False,
) -> Iterator[FileScore]:
    """Each file's score, in order; ``checks_pending`` is the byte the workers read (see
    :func:`_score_in_worker`); ``keep_trajectories`` only in this process (``workers=1``)."""
    if workers == 1:
        for f in files:
            yield score_file(f, answers, fields, keep_trajectories)
        return
    mp = multiprocessing.get_context(_start_method())
    if mp.get_start_method() == "forkserver":
        mp.set_forkserver_preload([__name__])
    chunk = 1 if len(files) < 4 * 64 * workers else 4
    start = (answers, fields, checks_pending)
    with mp.Pool(workers, initializer=_init_worker, initargs=start) as pool:
        yield from pool.imap(_score_in_worker, files, chunksize=chunk)


def _start_method() -> str:
    """``fork`` in a single-threaded process on Linux (workers start at once, with this
    module already imported); else ``forkserver`` (forking a threaded process is unsafe),
    where workers fork from one server that imported this module once."""
    methods = multiprocessing.get_all_start_methods()
    if sys.platform == "linux" and threading.active_count() == 1 and "fork" in methods:
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


_worker_answers: AnswerKeys | None = None
_worker_fields: FieldMap | None = None  # the run's field map (--map)
_worker_checks_pending: c_byte | None = None  # a shared byte: 1 while checks are pending


def _init_worker(
    answers: AnswerKeys, fields: FieldMap | None, checks_pending: c_byte | None = None
) -> None:
    global _worker_answers, _worker_checks_pending, _worker_fields
    _worker_answers = answers
    _worker_fields = fields
    _worker_checks_pending = checks_pending
    gc.freeze()  # the imported modules: never worth a collector's walk again


def _score_in_worker(path: Path) -> FileScore:
    """One file's score: at a lower priority while answer checks are pending, else at the
    worker's own."""
    if _worker_checks_pending is not None and _worker_checks_pending.value:
        return _at_lower_priority(score_file, path, _worker_answers, _worker_fields)
    return score_file(path, _worker_answers, _worker_fields)


#: Niceness added to a pool worker's scoring while answer checks are pending (0 is none).
POOL_NICE_DURING_CHECKS = 10


def _at_lower_priority(func: Callable[..., T], *args: Any) -> T:
    """``func(*args)`` in a thread of its own, :data:`POOL_NICE_DURING_CHECKS` nicer.

    Linux gives each thread its own niceness, and an unprivileged process may lower its
    priority but never raise it back (that needs ``CAP_SYS_NICE``): renicing the worker
    itself would last for the rest of the run, and on a shared machine it would then yield
    to every other program, not only to the checks. Here only the thread is reniced, and
    it ends with the file; the worker's next file runs at its own priority again.
    Elsewhere (no per-thread niceness) ``func`` simply runs at normal priority.
    """
    if sys.platform != "linux":
        return func(*args)
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        tid = threading.get_native_id()
        try:
            nice = os.getpriority(os.PRIO_PROCESS, tid) + POOL_NICE_DURING_CHECKS
            os.setpriority(os.PRIO_PROCESS, tid, min(nice, 19))
        except OSError:  # not allowed here: run at the priority it has
            pass
        try:
            outcome.append((True, func(*args)))
        except BaseException as exc:  # raised again in the caller's thread
            outcome.append((False, exc))

    thread = threading.Thread(target=run, name="dagmath-lower-priority", daemon=True)
    thread.start()
    thread.join()
    done, value = outcome[0]
    if not done:
        raise value
    return value


# --------------------------------------------------------------------------- one file


def score_file(
    path: Path,
    answers: AnswerKeys,
    fields: FieldMap | None = None,
    keep_trajectories: bool = False,
) -> FileScore:
    """Score every record of one file (the unit of work of a worker), ``fields`` mapped;
    ``keep_trajectories``: with the trajectories read (:attr:`FileScore.trajectories`)."""
    with gc_paused():
        return _score_file(Path(path), answers, fields, keep_trajectories)


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


def _score_file(
    path: Path, answers: AnswerKeys, fields: FieldMap | None, keep_trajectories: bool
) -> FileScore:
    fast = None if fields is not None or keep_trajectories else score_clean_file(path, answers)
    if fast is not None:
        return FileScore(fast.records, [], fast.issues)
    loaded = registry.load_file(path, fields)
    keys = answers.for_file(path)
    trajectories = [answers.apply(t, keys) for t in loaded.trajectories]
    return FileScore(
        [awaiting_verdict_of(t) for t in trajectories],
        [jsonio.dumps(r, newline=True) for r in loaded.scored],
        loaded.issues,
        sum(r["class"] == "illegal" for r in loaded.scored),
        sum(r["class"] == "unscored" for r in loaded.scored),
        trajectories if keep_trajectories else [],
    )


class FileScore(NamedTuple):
    """What one file gives: records awaiting verdicts, pre-scored JSON lines, issues, the
    pre-scored records' illegal and unscored counts, and the trajectories behind
    ``records`` (only with ``keep_trajectories``; else none)."""

    records: list[AwaitingVerdict]
    scored_lines: list[bytes]
    issues: list[LoadIssue]
    scored_illegal: int = 0
    scored_unscored: int = 0
    trajectories: Sequence[Trajectory] = ()

    def settled(self, verdicts: dict[tuple[str, str], Verdict | None]) -> bool:
        """Whether every answer of the file's records is checked in ``verdicts``."""
        return all(r.pair is None or verdicts.get(r.pair) is not None for r in self.records)

    def lines(self, verdicts: dict[tuple[str, str], Verdict | None]) -> list[bytes]:
        """The scored JSON lines of the file's trajectories (:meth:`settled` in
        ``verdicts``)."""
        return list(finish_lines(self.records, verdicts))


# --------------------------------------------------------------------------- verdicts and lines


class Verifier:
    """Checks pairs in background threads as they arrive, so math-verify overlaps the parsing.

    The first thread uses the caller's checker (its worker starts on the first pair no fast
    path settles); while the queue stays long, up to ``max_threads`` more threads join, each
    with its own math-verify worker, and their verdicts go into the caller's checker at the
    end (so they are cached like the rest).
    """

    #: pairs waiting before ``on_busy(True)``: math-verify is then the long pole (and
    #: ``on_busy(False)`` once none wait)
    BUSY = 16
    #: pairs waiting per running thread before another thread (and worker) joins
    BACKLOG = 64
    #: the same once parsing is over and its CPUs are free (a worker takes ~1 s to start)
    TAIL_BACKLOG = 300

    def __init__(
        self,
        checker: AnswerChecker,
        on_busy: Callable[[bool], None] | None = None,
        max_threads: int = 1,
    ) -> None:
        self.checker = checker
        self.verdicts: dict[tuple[str, str], Verdict] = {}
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._extra: list[AnswerChecker] = []
        self._on_busy = on_busy
        self._busy = False
        self._busy_lock = threading.Lock()
        self._max_threads = max(1, max_threads)

    def add(self, records: Sequence[AwaitingVerdict]) -> None:
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
            if self._on_busy:
                self._note_backlog()

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
            if self._on_busy:
                self._note_backlog()

    def _note_backlog(self) -> None:
        """Call ``on_busy(True)`` when :data:`BUSY` pairs wait, ``on_busy(False)`` when none
        do; in between nothing changes (no flapping while a backlog drains)."""
        with self._busy_lock:  # the caller's thread adds, the checking threads take away
            waiting = self._queue.qsize()
            busy = waiting >= self.BUSY or (self._busy and waiting > 0)
            if busy != self._busy:
                self._busy = busy
                self._on_busy(busy)

    def finish(self, spare_cpus: int = 0) -> dict[tuple[str, str], Verdict]:
        """All verdicts; with ``spare_cpus`` (the pool is done) more workers take a long
        backlog (each costs a second or so to start, so only for hundreds of pairs)."""
        for _ in range(spare_cpus):
            if self._threads and self._queue.qsize() > self.TAIL_BACKLOG * len(self._threads):
                self._add_worker()
        # A short tail left to the one thread would be checked one pair after another; when
        # it holds pathological answers (each costs the whole deadline) that adds up, so it
        # goes to check_many, which adds a worker while every running check is slow.
        tail = self._drain() if len(self._threads) == 1 else []
        for _ in self._threads:
            self._queue.put(None)
        for thread in self._threads:
            thread.join()
        for extra in self._extra:
            for reference, prediction, verdict in extra.learned():
                self.checker.learn(reference, prediction, verdict)
            extra.close()
        if tail:
            budget = max(self._max_threads, 1 + spare_cpus)
            self.verdicts.update(self.checker.check_many(tail, workers=budget))
        return self.verdicts

    def _drain(self) -> list[tuple[str, str]]:
        """The pairs still waiting, taken off the queue."""
        pairs = []
        while True:
            try:
                pairs.append(self._queue.get_nowait())
            except queue.Empty:
                return pairs


class ScoredRun:
    """A scored run: issues met, counts, and the scored JSON lines (:meth:`lines`).

    Memory stays flat however long the run: each file's pieces go to a spool (an unnamed
    temporary file once past :data:`SPOOL_IN_MEMORY` bytes, gone when the run is closed,
    garbage-collected or the process ends, whatever the reason) as they arrive, as
    finished lines when every verdict they need is known by then (cached, or settled by a
    fast path), else as pieces awaiting verdicts, finished when read back. Only the
    verdicts (one per distinct answer pair) and the issues stay in memory.
    """

    def __init__(
        self,
        verdicts: dict[tuple[str, str], Verdict],
        issues: list[LoadIssue],
        files_read: int,
        keep_trajectory_lines: bool = True,
    ) -> None:
        self.verdicts = verdicts  # shared with the Verifier until its finish()
        self.keep_trajectory_lines = keep_trajectory_lines
        self.issues = issues
        self.files_read = files_read
        self.n_records = 0
        self.n_illegal = 0
        self.n_unscored = 0
        self._pieces = _Spool()  # per file: (finished, lines or records awaiting verdicts)
        self._scored = _Spool()  # per file: its pre-scored lines (written after all others)
        self._files = 0

    def add(self, result: FileScore, index: int | None = None) -> None:
        """Count and spool one file's score (its pairs already given to the verifier).

        ``index``: the file's place in file order, when files are added in another order
        (:func:`score_paths` with ``interleave``); the lines are read back in file order.
        """
        index = self._files if index is None else index
        self._files += 1
        records = result.records
        self.issues.extend(result.issues)
        self.n_records += len(records) + len(result.scored_lines)
        self.n_illegal += result.scored_illegal
        self.n_unscored += result.scored_unscored
        verdicts = self.verdicts
        settled = True
        for rec in records:
            if rec.pair is None:
                self.n_unscored += rec.legal and rec.given is None
            elif settled and verdicts.get(rec.pair) is None:
                settled = False  # a check still running: finished when read back
            self.n_illegal += not rec.legal
        if records and self.keep_trajectory_lines:  # else the caller makes them (on_file)
            if settled:
                self._pieces.append(_LINES, b"".join(finish_lines(records, verdicts)), index)
            else:
                self._pieces.append(_AWAITING, _pack_awaiting(records), index)
        if result.scored_lines:
            self._scored.append(_LINES, b"".join(result.scored_lines), index)

    def __len__(self) -> int:
        return self.n_records

    @property
    def unreadable_files(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(i.file for i in self.issues if i.location == "file"))

    def lines(self) -> Iterator[bytes]:
        """Every record as one JSON line: trajectories in file order, then pre-scored records."""
        yield from self.trajectory_lines()
        for lines in self.scored_files():
            yield from lines

    def trajectory_lines(self) -> Iterator[bytes]:
        """The scored lines of the trajectories read, in file order."""
        for kind, data in self._pieces.read():
            if kind == _LINES:
                yield from _split_lines(data)
            else:
                yield from finish_lines(_unpack_awaiting(data), self.verdicts)

    def scored_files(self) -> Iterator[list[bytes]]:
        """The pre-scored records met, one list of lines per file that held some."""
        for _, data in self._scored.read():
            yield _split_lines(data)

    def records(self) -> Iterator[dict]:
        """The scored records as dicts (the fields of :data:`RECORD_FIELDS`)."""
        return (jsonio.parse(line) for line in self.lines())

    def close(self) -> None:
        """Drop the spooled pieces now (else when the run is garbage-collected)."""
        self._pieces.close()
        self._scored.close()

    def __enter__(self) -> ScoredRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Bytes of spooled pieces held in memory before they move to an unnamed temporary file.
SPOOL_IN_MEMORY = 16 * 2**20

_LINES, _AWAITING = 1, 2  # the kinds of spooled pieces: JSON lines; records awaiting verdicts


def _split_lines(data: bytes) -> list[bytes]:
    """Joined JSON lines back into lines (JSON never holds a raw line break)."""
    return [line + b"\n" for line in data.split(b"\n")[:-1]]


def _pack_awaiting(records: Sequence[AwaitingVerdict]) -> bytes:
    """Records awaiting verdicts as bytes: their fields but the JSON pieces as one JSON
    array, then the pieces themselves one after another."""
    fields = orjson.dumps(
        [(r.pair, r.legal, r.closed, len(r.head), len(r.tail), r.given) for r in records]
    )
    return _FRAME.pack(len(fields)) + fields + b"".join(r.head + r.tail for r in records)


def _unpack_awaiting(data: bytes) -> list[AwaitingVerdict]:
    (size,) = _FRAME.unpack_from(data)
    at = _FRAME.size + size
    records = []
    for pair, legal, closed, n_head, n_tail, given in orjson.loads(data[_FRAME.size : at]):
        head, tail = data[at : at + n_head], data[at + n_head : at + n_head + n_tail]
        at += n_head + n_tail
        records.append(AwaitingVerdict(head, pair and tuple(pair), legal, closed, tail, given))
    return records


_FRAME = struct.Struct("<Q")
_KIND = struct.Struct("<BQ")


class _Spool:
    """Pieces of bytes one after another in a temporary file (each after its kind and
    length), read back in the order of the keys they were given (the order they came in,
    when their keys ascend); any number of readers, each at its own offset."""

    def __init__(self) -> None:
        self._file = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)
        self._end = 0
        self._at: list[tuple[int, int]] = []  # (key, offset) of each piece
        self._in_order = True

    def append(self, kind: int, data: bytes, key: int = 0) -> None:
        if self._at and key < self._at[-1][0]:
            self._in_order = False
        self._at.append((key, self._end))
        self._file.seek(self._end)
        self._file.write(_KIND.pack(kind, len(data)))
        self._file.write(data)
        self._end += _KIND.size + len(data)

    def read(self) -> Iterator[tuple[int, bytes]]:
        places = self._at if self._in_order else sorted(self._at)
        for _, at in list(places):
            self._file.seek(at)
            kind, size = _KIND.unpack(self._file.read(_KIND.size))
            yield kind, self._file.read(size)

    def close(self) -> None:
        self._file.close()
        self._end = 0
        self._at = []
