"""The scoring pipeline of ``dagmath score``: a pool of processes, verdict threads, a result.

Follow ``dagmath score PATH`` from here: :func:`score_paths` asks
:func:`dagmath_viz.loading.discover` for the data files and answer keys, then each file is
one task (:func:`score_file`): a worker scores it by the fast path
(:mod:`dagmath_viz.fastscore`) when it is a clean JSON array of samples, else loads it
(:func:`dagmath_viz.loading.load_file`) and scores it by the reference path
(:mod:`dagmath_viz.scoring`). Workers send back small pieces of JSON per record plus its
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
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from dagmath_viz import jsonio, loading
from dagmath_viz.answers import AnswerChecker, Verdict, default_checker
from dagmath_viz.fastscore import score_clean_file
from dagmath_viz.loading import AnswerKey, AnswerKeys
from dagmath_viz.schema import LoadIssue
from dagmath_viz.scoring import AwaitingVerdict, awaiting_verdict_of, finish_lines

__all__ = [
    "FileScore",
    "ScoredRun",
    "Verifier",
    "default_workers",
    "gc_paused",
    "score_file",
    "score_paths",
]


#: Below this many bytes of data a run is scored in this process (a pool costs ~0.5 s).
IN_PROCESS_BYTES = 16 * 2**20


# --------------------------------------------------------------------------- a whole run


def score_paths(
    paths: Sequence[str | Path],
    answers: str | Path | AnswerKey | None = None,
    *,
    workers: int | None = None,
    checker: AnswerChecker | None = None,
    progress: Callable[[int, int], None] | None = None,
    exclude: Sequence[str | Path] = (),
) -> ScoredRun:
    """Score everything under ``paths`` with ``workers`` processes (default: every CPU).

    Same records, issues and order as ``load_paths`` followed by ``score_records``. Small
    runs (under :data:`IN_PROCESS_BYTES`) and ``workers=1`` stay in this process.
    ``progress(done, total)`` counts files; ``exclude`` names files never read (the
    run's own output, see :func:`dagmath_viz.loading.discover`).

    Raises:
        InputError: the explicit ``answers`` file cannot be read.
    """
    found = loading.discover(paths, answers, exclude=exclude)
    files, issues = found.data_files, list(found.issues)
    pool: list[int] = []  # the pool's process ids, once it runs
    # math-verify (one process, a chain of checks) is the long pole of a cold run: once
    # pairs pile up for it, the pool workers give it the CPU first and take what is left
    workers = max(1, min(workers or default_workers(), len(files)))
    verifier = Verifier(
        checker or default_checker(),
        on_busy=lambda: _yield_cpu(pool),
        max_threads=max(1, (workers or default_workers()) // 2),
    )
    if workers > 1 and _total_bytes(files) < IN_PROCESS_BYTES:
        workers = 1
    results: list[FileScore] = []
    with gc_paused():
        for done, result in enumerate(_map_files(files, found.answers, workers, pool), start=1):
            results.append(result)
            verifier.add(result.records)
            if progress:
                progress(done, len(files))
    for result in results:
        issues.extend(result.issues)
    return ScoredRun(results, verifier.finish(spare_cpus=workers - 1), issues, found.files_read)


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


#: Niceness of pool workers while math-verify runs (0 is normal; higher yields the CPU).
POOL_NICE_DURING_CHECKS = 10


def _yield_cpu(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.setpriority(os.PRIO_PROCESS, pid, POOL_NICE_DURING_CHECKS)
        except (OSError, AttributeError):  # gone already, or not on this platform
            pass


# --------------------------------------------------------------------------- the pool


def _map_files(
    files: list[Path], answers: AnswerKeys, workers: int, pids: list[int]
) -> Iterator[FileScore]:
    if workers == 1:
        for f in files:
            yield score_file(f, answers)
        return
    mp = multiprocessing.get_context(_start_method())
    if mp.get_start_method() == "forkserver":
        mp.set_forkserver_preload([__name__])
    chunk = 1 if len(files) < 4 * 64 * workers else 4
    with mp.Pool(workers, initializer=_init_worker, initargs=(answers,)) as pool:
        pids.extend(p.pid for p in getattr(pool, "_pool", ()))
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


def _init_worker(answers: AnswerKeys) -> None:
    global _worker_answers
    _worker_answers = answers
    gc.freeze()  # the imported modules: never worth a collector's walk again


def _score_in_worker(path: Path) -> FileScore:
    return score_file(path, _worker_answers)


# --------------------------------------------------------------------------- one file


def score_file(path: Path, answers: AnswerKeys) -> FileScore:
    """Score every record of one file (the unit of work of a worker)."""
    with gc_paused():
        return _score_file(Path(path), answers)


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


def _score_file(path: Path, answers: AnswerKeys) -> FileScore:
    fast = score_clean_file(path, answers)
    if fast is not None:
        return FileScore(fast.records, [], fast.issues)
    loaded = loading.load_file(path)
    keys = answers.for_file(path)
    records = [awaiting_verdict_of(answers.apply(t, keys)) for t in loaded.trajectories]
    return FileScore(
        records,
        [jsonio.dumps(r, newline=True) for r in loaded.scored],
        loaded.issues,
        sum(r["class"] == "illegal" for r in loaded.scored),
        sum(r["class"] == "unscored" for r in loaded.scored),
    )


class FileScore(NamedTuple):
    """What one file gives: records awaiting verdicts, pre-scored JSON lines, issues, and
    the pre-scored records' illegal and unscored counts."""

    records: list[AwaitingVerdict]
    scored_lines: list[bytes]
    issues: list[LoadIssue]
    scored_illegal: int = 0
    scored_unscored: int = 0


# --------------------------------------------------------------------------- verdicts and lines


class Verifier:
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
        # A short tail left to the one thread would be checked one pair after another; when
        # it holds pathological answers (each costs the whole deadline) that adds up, so it
        # goes to check_many, which adds a worker while every running check is slow.
        tail = self._drain() if len(self._threads) == 1 else []
        for _ in self._threads:
            self._queue.put(None)
        for thread in self._threads:
            thread.join()
        for extra in self._extra:
            for reference, prediction, verdict in extra._learned:
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
        return (jsonio.parse(line) for line in self.lines())
