"""distributed.py: scoring on a Dask cluster writes exactly what `dagmath score` writes.

The cluster here is a local in-process one (``LocalCluster(processes=False)``): the same
scheduler, task graph and code paths as a real cluster, without spawning worker processes.
"""

from __future__ import annotations

import time
from pathlib import Path

import orjson
import pytest

pytest.importorskip("distributed")

from distributed import Client, LocalCluster  # noqa: E402
from test_fastscore import _fault_run, serial_lines  # noqa: E402

from dagmath_viz.answers.check import AnswerChecker  # noqa: E402
from dagmath_viz.cli import main  # noqa: E402
from dagmath_viz.run import pool as pipeline
from dagmath_viz.run.distributed import score_on_dask  # noqa: E402
from dagmath_viz.schema import DagMathError  # noqa: E402

REPO = Path(__file__).parents[1]


@pytest.fixture(scope="module")
def cluster():
    with LocalCluster(
        processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None
    ) as cluster:
        yield cluster


@pytest.fixture
def client(cluster):
    with Client(cluster) as client:
        yield client


def test_same_records_as_dagmath_score(client, tmp_path, answer_checker) -> None:
    run_dir = _fault_run(tmp_path)
    expected, issues, files_read = serial_lines([run_dir], answer_checker)
    local = b"".join(pipeline.score_paths([run_dir], checker=answer_checker).lines())
    assert local == expected
    # a fresh checker, so the pairs math-verify must see are checked on the cluster
    checker = AnswerChecker(timeout=20)
    run = score_on_dask(
        [run_dir], checker=checker, files_per_partition=2, pairs_per_partition=3, timeout=20
    )
    got = b"".join(run.lines())
    assert got == expected
    assert [str(i) for i in run.issues] == issues
    assert run.files_read == files_read
    rows = [orjson.loads(line) for line in expected.splitlines()]
    assert (len(run), run.n_illegal, run.n_unscored) == (
        len(rows),
        sum(r["class"] == "illegal" for r in rows),
        sum(r["class"] == "unscored" for r in rows),
    )
    assert list(run.records()) == rows
    assert checker._learned, "verdicts found on the cluster reach the client's cache"
    assert checker._proc is None, "the client itself never ran math-verify"


def test_fixture_runs(client, data_dir, answer_checker) -> None:
    for path in (data_dir / "mixed_run", REPO / "sample_data" / "runs"):
        expected, _, _ = serial_lines([path], answer_checker)
        run = score_on_dask([path], checker=answer_checker, files_per_partition=5)
        assert b"".join(run.lines()) == expected


def test_nothing_to_score(client, tmp_path) -> None:
    run = score_on_dask([tmp_path / "missing"])
    assert len(run) == 0 and list(run.lines()) == []
    assert [i.message for i in run.issues] == ["no such file or folder"]


def test_score_command_on_a_scheduler(cluster, data_dir, tmp_path) -> None:
    local, remote = tmp_path / "local.jsonl", tmp_path / "dask.jsonl"
    run_dir = str(data_dir / "mixed_run")
    # 4 both ways: the mixed run's unreadable file and line are named (README exit codes)
    assert main(["score", run_dir, "-o", str(local), "--no-cache"]) == 4
    assert main(["score", run_dir, "-o", str(remote), "--no-cache", "--dask",
                 cluster.scheduler_address]) == 4  # fmt: skip
    assert remote.read_bytes() == local.read_bytes()


def test_a_closed_loop_after_the_workers_left_is_the_no_worker_error(monkeypatch):
    # CI, under load: the watcher closed the client after the grace, and the call under
    # way met "RuntimeError: IOLoop is closed" instead of a cancellation (exit 70 then).
    from dagmath_viz.run import distributed

    def gave_up_at_once(client, grace, stop, gave_up):
        gave_up.append(0.0)

    monkeypatch.setattr(distributed, "_watch_workers", gave_up_at_once)
    with pytest.raises(DagMathError, match="no Dask worker left for 3 s"):
        with distributed.watched(object(), "--dask tcp://x", grace=3):
            time.sleep(0.05)  # the watcher has given up by now
            raise RuntimeError("IOLoop is closed")
    # a RuntimeError with workers still there is no cluster loss: it stays a bug of ours
    monkeypatch.setattr(distributed, "_watch_workers", lambda *a: None)
    with pytest.raises(RuntimeError, match="something else"):
        with distributed.watched(object(), "--dask tcp://x", grace=3):
            raise RuntimeError("something else")


def test_the_worker_grace_is_20_s_unless_the_environment_sets_another(
    monkeypatch, tmp_path, capsys
):
    from dagmath_viz.run import distributed

    assert distributed.worker_grace({}) == distributed.WORKER_GRACE == 20.0
    assert distributed.worker_grace({distributed.WORKER_GRACE_ENV: " 2.5 "}) == 2.5
    for bad in ("a minute", "0", "-3", "nan", "inf"):
        with pytest.raises(DagMathError, match="expected a number of seconds above 0") as err:
            distributed.worker_grace({distributed.WORKER_GRACE_ENV: bad})
        assert str(err.value).startswith(f"DAGMATH_DASK_WORKER_GRACE={bad!r}: ")
    # dagmath score says so before it reaches for a cluster (no scheduler listens there)
    monkeypatch.setenv(distributed.WORKER_GRACE_ENV, "soon")
    out = tmp_path / "x.jsonl"
    code = main(["score", str(REPO / "tests" / "data" / "mixed_run"), "-o", str(out),
                 "--no-cache", "--dask", "tcp://127.0.0.1:9"])  # fmt: skip
    assert code != 0 and not out.exists()
    assert "DAGMATH_DASK_WORKER_GRACE='soon': expected a number of seconds above 0" in (
        capsys.readouterr().err
    )
