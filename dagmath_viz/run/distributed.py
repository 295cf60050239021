"""Score a run too large for one machine on a Dask cluster; the same JSONL as ``dagmath score``.

Scoring is per record and embarrassingly parallel, so this is the local pipeline of
:mod:`dagmath_viz.run.pool` with Dask as the scheduler (we write no scheduler of our own):

1. the client lists the files and reads the answer keys (the files must be readable at the
   same paths on every worker: a shared file system);
2. ``dask.bag`` over the files: each worker scores whole files with
   :func:`~dagmath_viz.run.pool.score_file` and keeps the results in cluster memory;
3. only the distinct (reference, prediction) pairs travel to the client, which settles what
   it can (verdict cache, equal texts, plain numbers) and sends the rest back out in
   partitions, each checked by a math-verify worker process on a cluster node;
4. the verdicts are broadcast; each partition turns its records into JSON lines, and the
   client writes the partitions in file order, a few at a time (its memory holds the
   pairs, the verdicts and a few partitions, never the run).

An answer check that timed out or failed on a node is named as the local run names it (a
warning for the first file that gave the pair, :func:`pipeline.unsettled_issues`) and is
never kept as a verdict (:meth:`AnswerChecker.learn` keeps settled ones only), so the next
run checks it again.

Dask is imported only here, so the library works without it. See ``docs/scaling.md``.

:func:`connect` makes the client and checks the cluster before any work is sent: a bad
address, a scheduler that does not answer within :data:`CONNECT_TIMEOUT` seconds, no
worker, or a scheduler or worker that cannot import this package each give one
:class:`~dagmath_viz.schema.DagMathError` naming the address, instead of a traceback or a
run that waits for ever. Once connected, :func:`watched` turns a cluster lost mid-run (the
scheduler gone, or no worker left for :data:`WORKER_GRACE` seconds, or
``$DAGMATH_DASK_WORKER_GRACE``: :func:`worker_grace`) into one such error,
and :func:`quiet_logs` keeps Dask's own log lines (tracebacks of a lost connection, a
worker's heartbeat failing as a local cluster shuts down) off the terminal.

Paths are made absolute before they are shipped, since a worker's working folder is not
the client's; the records and messages then name files as the user gave them
(:class:`_GivenNames`), so the output is that of the local run.
"""

from __future__ import annotations

import logging
import math
import os
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from dagmath_viz import jsonio
from dagmath_viz.answers.check import AnswerChecker, Verdict, default_checker
from dagmath_viz.formats import discovery
from dagmath_viz.formats.answer_keys import AnswerKey
from dagmath_viz.run import pool as pipeline
from dagmath_viz.schema import DagMathError, LoadIssue
from dagmath_viz.score.reference import finish_lines

__all__ = [
    "CONNECT_TIMEOUT",
    "WORKER_GRACE",
    "WORKER_GRACE_ENV",
    "DaskScoredRun",
    "connect",
    "quiet_logs",
    "score_on_dask",
    "watched",
    "worker_grace",
]

#: Seconds to reach the scheduler, and again for a worker to be there.
CONNECT_TIMEOUT = 3.0
#: Seconds a run may go on with no worker at all before it stops (Dask itself would wait
#: for ever for one to join).
WORKER_GRACE = 20.0
#: Environment variable setting another :data:`WORKER_GRACE` (seconds above 0).
WORKER_GRACE_ENV = "DAGMATH_DASK_WORKER_GRACE"

#: Files per Dask partition (a few seconds of work each on realistic runs).
FILES_PER_PARTITION = 16
#: Distinct answer pairs per math-verify partition (each starts a worker: ~1.5 s).
PAIRS_PER_PARTITION = 2000


@dataclass
class DaskScoredRun:
    """A run scored on a cluster; the same interface as :class:`pipeline.ScoredRun`."""

    issues: list[LoadIssue]
    files_read: int
    n_records: int
    n_illegal: int
    n_unscored: int
    _lines: object = field(repr=False)  # the bag of each partition's JSON lines, or None
    _batch: int = 4
    _names: _GivenNames | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return self.n_records

    @property
    def unreadable_files(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(i.file for i in self.issues if i.location == "file"))

    def lines(self) -> Iterator[bytes]:
        """Every record as a JSON line: trajectories in file order, then pre-scored ones.

        Each chunk holds whole lines (what a partition gives), so file names can be put
        back as the user gave them chunk by chunk.
        """
        import dask

        if self._lines is None:
            return
        given = self._names.json_text if self._names else (lambda chunk: chunk)
        parts = self._lines.to_delayed()
        with tempfile.SpooledTemporaryFile(max_size=64 * 2**20) as later:
            lengths = []
            for start in range(0, len(parts), self._batch):
                for trajectories, scored in dask.compute(*parts[start : start + self._batch]):
                    yield given(trajectories)
                    later.write(scored)
                    lengths.append(len(scored))
            later.seek(0)
            for length in lengths:
                if length:
                    yield given(later.read(length))

    def records(self) -> Iterator[dict]:
        for chunk in self.lines():
            for document in jsonio.parse_lines(chunk):
                yield document.value


def connect(address: str, timeout: float = CONNECT_TIMEOUT, *, quiet: bool = False):
    """A ``distributed.Client`` of the scheduler at ``address``, checked before use.

    ``"local"`` starts a cluster of this machine's cores (the same environment as the
    client, so nothing to check). Any other address must answer within ``timeout`` seconds
    and have, within ``timeout`` more, at least one worker; the scheduler and every worker
    must import this package (the scheduler unpickles the task graph, the workers run it).
    ``quiet``: :func:`quiet_logs` first (the command line's default; ``-v`` keeps them).

    Raises:
        DagMathError: one line naming the address and what is wrong.
    """
    if quiet:
        quiet_logs()
    from distributed import Client

    if address == "local":
        return Client(dashboard_address=None)
    where = f"--dask {address}"
    try:
        client = Client(address, timeout=timeout)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise DagMathError(
            f"{where}: cannot reach a Dask scheduler there ({_reason(exc)})"
        ) from None
    try:
        _check_cluster(client, where, timeout)
    except BaseException:
        client.close()
        raise
    return client


#: The loggers Dask writes through; their tracebacks are its own business, not the user's.
_DASK_LOGGERS = ("distributed", "tornado", "asyncio")


def quiet_logs() -> None:
    """Keep Dask's log lines off stderr in this process and in the worker processes a
    local cluster starts (they read ``DASK_LOGGING__*`` when they import Dask).

    A lost scheduler makes the client log a traceback per reconnection attempt before the
    run's own error comes; a local cluster's worker can log a failed heartbeat while it
    shuts down after a successful run. What went wrong reaches the user as one
    :class:`~dagmath_viz.schema.DagMathError` instead (:func:`watched`).
    """
    for name in ("distributed", "tornado"):
        os.environ[f"DASK_LOGGING__{name.upper()}"] = "critical"
    loggers = logging.Logger.manager.loggerDict
    for name in [n for n in loggers if n.split(".")[0] in _DASK_LOGGERS] + list(_DASK_LOGGERS):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def worker_grace(environ: Mapping[str, str] | None = None) -> float:
    """Seconds a run goes on with no worker: ``$DAGMATH_DASK_WORKER_GRACE`` when set (a
    number above 0), else :data:`WORKER_GRACE`.

    >>> worker_grace({}), worker_grace({WORKER_GRACE_ENV: "90"})
    (20.0, 90.0)

    Raises:
        DagMathError: the variable holds anything else (the message names it).
    """
    raw = (os.environ if environ is None else environ).get(WORKER_GRACE_ENV, "").strip()
    if not raw:
        return WORKER_GRACE
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise DagMathError(f"{WORKER_GRACE_ENV}={raw[:40]!r}: expected a number of seconds above 0")
    return value


@contextmanager
def watched(client, where: str, grace: float = WORKER_GRACE) -> Iterator[None]:
    """Run the block with ``client``'s cluster watched; a cluster lost meanwhile is one
    :class:`~dagmath_viz.schema.DagMathError` naming ``where`` (exit 1), not Dask's
    traceback (which read as a bug of ours, exit 70).

    Lost means: the connection to the scheduler is gone (Dask cancels every future), a
    task killed the workers that ran it (``KilledWorker``), or no worker has been there
    for ``grace`` seconds (Dask would wait for one for ever: a watcher thread then closes
    the client, which cancels the run).
    """
    from asyncio import CancelledError as LoopCancelled
    from concurrent.futures import CancelledError  # FutureCancelledError's base

    from distributed.comm.core import CommClosedError
    from distributed.scheduler import KilledWorker

    stop = threading.Event()
    no_workers: list[float] = []  # set by the watcher when it gave up
    watcher = threading.Thread(
        target=_watch_workers, args=(client, grace, stop, no_workers), daemon=True
    )
    watcher.start()
    try:
        yield
    except KilledWorker as exc:
        raise DagMathError(
            f"{where}: lost the Dask workers that ran a task ({_reason(exc)}); "
            "see the workers' logs (out of memory?)"
        ) from None
    except RuntimeError:
        # the watcher closed the client: a call under way may then meet Dask's closed
        # IOLoop ("IOLoop is closed") instead of a cancellation (seen under load in CI)
        if not no_workers:
            raise
        raise DagMathError(
            f"{where}: no Dask worker left for {grace:g} s; the run was stopped"
        ) from None
    except (CancelledError, LoopCancelled, CommClosedError, TimeoutError) as exc:
        if no_workers:
            raise DagMathError(
                f"{where}: no Dask worker left for {grace:g} s; the run was stopped"
            ) from None
        raise DagMathError(
            f"{where}: lost the Dask scheduler mid-run ({_reason(exc)}); nothing was "
            "scored for good, run again once the cluster is back"
        ) from None
    finally:
        stop.set()
        watcher.join(timeout=5)


def _watch_workers(client, grace: float, stop: threading.Event, gave_up: list) -> None:
    """Close ``client`` once its scheduler has listed no worker for ``grace`` seconds."""
    alone_since: float | None = None
    while not stop.wait(1.0):
        try:
            workers = client.scheduler_info().get("workers", {})
        except Exception:  # noqa: BLE001 - the scheduler itself is gone: watched() says so
            return
        if workers:
            alone_since = None
            continue
        now = time.monotonic()
        alone_since = alone_since or now
        if now - alone_since >= grace:
            gave_up.append(now)
            client.close(timeout=5)
            return


def _check_cluster(client, where: str, timeout: float) -> None:
    import importlib

    try:
        client.run_on_scheduler(importlib.import_module, "dagmath_viz.run.pool")
    except Exception as exc:  # noqa: BLE001 - whatever the scheduler's import raised
        raise DagMathError(
            f"{where}: the scheduler cannot import dagmath_viz ({_reason(exc)}); "
            "install dagmath-viz where the scheduler runs"
        ) from None
    try:
        client.wait_for_workers(1, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise DagMathError(
            f"{where}: no Dask worker joined the scheduler within {timeout:g} s ({_reason(exc)})"
        ) from None
    found = client.run(importlib.import_module, "dagmath_viz.run.pool", on_error="return")
    broken = {w: r for w, r in found.items() if isinstance(r, BaseException)}
    if broken:
        worker, exc = next(iter(broken.items()))
        raise DagMathError(
            f"{where}: {len(broken)} of {len(found)} workers cannot import dagmath_viz "
            f"(first: {worker}: {_reason(exc)}); install dagmath-viz on every worker"
        )


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:199] + "…"


def score_on_dask(
    paths: Sequence[str | Path],
    answers: str | Path | AnswerKey | None = None,
    *,
    checker: AnswerChecker | None = None,
    files_per_partition: int = FILES_PER_PARTITION,
    pairs_per_partition: int = PAIRS_PER_PARTITION,
    timeout: float = 5.0,
    progress: Callable[[int, int], None] | None = None,
    exclude: Sequence[str | Path] = (),
) -> DaskScoredRun:
    """Score everything under ``paths`` with the active Dask scheduler.

    Use it inside ``with distributed.Client(address):`` (or any Dask scheduler); the
    records, issues and order are those of ``dagmath score``. ``checker`` settles pairs
    on the client first (give it a ``cache_file`` to reuse verdicts between runs).
    Relative paths are made absolute before they are shipped (a worker's working folder
    is not the client's); records and messages still name files as they were given.
    ``progress(done, total)`` counts files as their partitions finish, as on the local path.

    Raises:
        InputError: the explicit ``answers`` file cannot be read.
    """
    import dask
    import dask.bag as db

    checker = checker or default_checker()
    names = _GivenNames([*paths, *([answers] if isinstance(answers, str | Path) else [])])
    paths = [os.path.abspath(p) for p in paths]
    if isinstance(answers, str | Path):
        answers = os.path.abspath(answers)
    exclude = [p if p is None or str(p) == "-" else os.path.abspath(p) for p in exclude]
    found = discovery.discover(paths, answers, exclude=exclude)
    issues, files_read = [names.issue(i) for i in found.issues], found.files_read
    if not found.data_files:
        return DaskScoredRun(issues, files_read, 0, 0, 0, None)
    scored = db.from_sequence(found.data_files, partition_size=files_per_partition)
    scored = scored.map(pipeline.score_file, found.answers, found.fields).persist()
    summaries = _with_progress(
        scored.map_partitions(_summary), len(found.data_files), files_per_partition, progress
    )
    files = found.data_files
    met: dict[tuple[str, str], list] = {}  # pair -> [file index, file, trajectories]
    counts = [0, 0, 0]
    index = 0  # partitions come in file order, one entry per file each
    for partition_issues, per_file, partition_counts in _chunks(summaries, 3):
        issues.extend(names.issue(i) for i in partition_issues)
        for file_pairs in per_file:
            for pair, n in file_pairs:
                met.setdefault(pair, [index, files[index], 0])[2] += n
            index += 1
        counts = [a + b for a, b in zip(counts, partition_counts, strict=True)]
    verdicts = _verdicts(list(met), checker, pairs_per_partition, timeout)
    unsettled = pipeline.unsettled_issues(met, lambda p: getattr(verdicts.get(p), "reason", None))
    issues.extend(names.issue(i) for i in unsettled)
    lines = scored.map_partitions(_partition_lines, dask.delayed(verdicts, traverse=False))
    return DaskScoredRun(issues, files_read, *counts, lines, _names=names)


class _GivenNames:
    """Absolute paths (as shipped to the workers) written back as the user gave them.

    The local run names a file ``mixed_run/m/d/x.json`` when given ``mixed_run``; the
    workers were given ``/home/u/mixed_run``. Each given path that is not absolute maps its
    absolute form, followed by ``/`` or ``:`` (a file's place: ``x.jsonl:line 3``) or
    alone, back to the given one as :class:`pathlib.Path` spells it (``./a`` is ``a``;
    ``.`` is nothing, as ``Path(".") / "x"`` is ``x``). Longer paths are replaced first.
    """

    def __init__(self, given: Sequence[str | Path]) -> None:
        pairs = {}
        for raw in given:
            if os.path.isabs(raw) or str(raw) == "-":
                continue
            spelled = str(Path(raw))
            pairs[os.path.abspath(raw)] = "" if spelled == "." else spelled
        self.pairs = sorted(pairs.items(), key=lambda pair: -len(pair[0]))

    def text(self, text: str) -> str:
        for absolute, spelled in self.pairs:
            for end in ("/", ":"):
                text = text.replace(absolute + end, spelled + end if spelled else "")
        return text

    def json_text(self, data: bytes) -> bytes:
        """``data`` (JSON lines) with the paths in its strings given back."""
        for absolute, spelled in self.pairs:
            for end in ("/", ":"):
                old = orjson.dumps(absolute + end)[1:-1]
                data = data.replace(old, orjson.dumps(spelled + end if spelled else "")[1:-1])
        return data

    def issue(self, issue: LoadIssue) -> LoadIssue:
        if not self.pairs:
            return issue
        file = next((s or "." for a, s in self.pairs if issue.file == a), None)
        return LoadIssue(
            file or self.text(issue.file),
            issue.location,
            self.text(issue.message),
            issue.severity,
        )


def _with_progress(bag, n_files: int, per_partition: int, progress) -> list:
    """``bag.compute()``, calling ``progress(files done, files)`` as partitions finish.

    Partition ``i`` holds files ``i * per_partition`` onwards (``from_sequence`` cuts the
    list in order), so the count is exact. Without a distributed client (a plain Dask
    scheduler) there is nothing to watch: the result comes at once.
    """
    try:
        from distributed import as_completed, default_client

        client = default_client() if progress is not None else None
    except ValueError:  # no client: the threaded or synchronous scheduler
        client = None
    if client is None:
        return bag.compute()
    futures = client.compute(bag.to_delayed())
    slot = {future.key: i for i, future in enumerate(futures)}
    results: list = [None] * len(futures)
    done = 0
    progress(0, n_files)
    for future in as_completed(futures):
        i = slot[future.key]
        results[i] = future.result()
        done += min(per_partition, n_files - i * per_partition)
        progress(done, n_files)
    return [item for part in results for item in part]


def _chunks(items: list, size: int) -> Iterator[tuple]:
    # map_partitions concatenates what each partition returns: split it back
    for i in range(0, len(items), size):
        yield tuple(items[i : i + size])


def _summary(results: Sequence[pipeline.FileScore]) -> list:
    """Issues, each file's distinct pairs with their trajectory counts (so the client can
    name the first file of a pair whose check times out), and class counts of one partition."""
    issues = [i for r in results for i in r.issues]
    pairs = [
        list(Counter(p.pair for p in r.records if p.pair is not None).items()) for r in results
    ]
    n = sum(len(r.records) + len(r.scored_lines) for r in results)
    illegal = sum(sum(not p.legal for p in r.records) + r.scored_illegal for r in results)
    unscored = sum(
        sum(p.legal and p.pair is None and p.given is None for p in r.records) + r.scored_unscored
        for r in results
    )
    return [issues, pairs, [n, illegal, unscored]]


def _verdicts(
    pairs: list[tuple[str, str]], checker: AnswerChecker, per_partition: int, timeout: float
) -> dict[tuple[str, str], Verdict]:
    import dask.bag as db

    verdicts: dict[tuple[str, str], Verdict] = {}
    open_pairs = []
    for pair in pairs:
        verdict = checker.quick_verdict(*pair)
        if verdict is None:
            open_pairs.append(pair)
        else:
            verdicts[pair] = verdict
    if open_pairs:
        bag = db.from_sequence(open_pairs, partition_size=per_partition)
        for pair, verdict in bag.map_partitions(_check_pairs, timeout).compute():
            checker.learn(*pair, verdict)
            verdicts[pair] = verdict
    return verdicts


def _check_pairs(pairs: Sequence[tuple[str, str]], timeout: float) -> list:
    """Check one partition of pairs on a cluster node, in its own math-verify worker."""
    checker = AnswerChecker(timeout=timeout)
    try:
        return [(pair, checker.check(*pair)) for pair in pairs]
    finally:
        checker.close()


def _partition_lines(results: Sequence[pipeline.FileScore], verdicts: dict) -> list[bytes]:
    """One partition's JSON lines: [its trajectories' lines, its pre-scored lines]."""
    trajectories = b"".join(line for r in results for line in finish_lines(r.records, verdicts))
    return [trajectories, b"".join(line for r in results for line in r.scored_lines)]
