"""``run_units``: the scaffolding ``generate`` and ``gold`` share (gate, failures, fatal stop)."""

from __future__ import annotations

import asyncio
import io
from dataclasses import dataclass, field

import pytest

from dagmath_viz.generation.client import CallFailed, FatalAPIError, run_to_completion
from dagmath_viz.generation.progress import RunTotals, run_units
from dagmath_viz.progress import Progress


@dataclass
class FakeRun:
    stopped: bool = False
    summary: RunTotals = field(default_factory=RunTotals)


def _progress(total: int) -> Progress:
    return Progress("test", total, stream=io.StringIO(), interval=0.0)


def _failure(unit: int, exc: Exception) -> dict:
    return {"unit": unit, "reason": exc.reason, "attempts": exc.attempts}


def test_every_unit_is_called_once_and_never_more_than_the_gate_allows():
    run, stored, in_flight, peak = FakeRun(), [], [0], [0]

    async def call(unit: int) -> int:
        in_flight[0] += 1
        peak[0] = max(peak[0], in_flight[0])
        await asyncio.sleep(0.001)
        in_flight[0] -= 1
        return unit * 10

    progress = _progress(7)
    run_to_completion(
        lambda: run_units(
            run, range(7), call, lambda u, r: stored.append((u, r)), _failure,
            concurrency=3, progress=progress,
        )
    )  # fmt: skip
    assert sorted(stored) == [(u, u * 10) for u in range(7)]
    assert peak[0] == 3
    assert (progress.done, progress.failed) == (7, 0)
    assert run.summary.failures == []


def test_a_failed_call_is_a_failure_row_and_the_run_goes_on():
    run, stored = FakeRun(), []

    async def call(unit: int) -> int:
        if unit == 2:
            raise CallFailed("HTTP 500 three times", 3)
        return unit

    progress = _progress(4)
    run_to_completion(
        lambda: run_units(
            run, range(4), call, lambda u, r: stored.append(u), _failure,
            concurrency=1, progress=progress,
        )
    )  # fmt: skip
    assert stored == [0, 1, 3]
    assert run.summary.failures == [{"unit": 2, "reason": "HTTP 500 three times", "attempts": 3}]
    assert (progress.done, progress.failed) == (3, 1)


def test_a_fatal_error_stops_before_the_next_request_and_propagates():
    run, called = FakeRun(), []

    async def call(unit: int) -> int:
        called.append(unit)
        if unit == 1:
            raise FatalAPIError("the server refused the credentials")
        return unit

    with pytest.raises(FatalAPIError):
        run_to_completion(
            lambda: run_units(
                run, range(6), call, lambda u, r: None, _failure,
                concurrency=1, progress=_progress(6),
            )
        )  # fmt: skip
    assert run.stopped
    assert called == [0, 1]  # with one call at a time, nothing after the fatal one is sent


def test_only_the_listed_exceptions_become_failure_rows():
    class Rejected(Exception):
        reason, attempts = "checks failed", 2

    async def call(unit: int) -> int:
        raise Rejected()

    run = FakeRun()
    run_to_completion(
        lambda: run_units(
            run, [5], call, lambda u, r: None, _failure,
            concurrency=1, progress=_progress(1), failed=(CallFailed, Rejected),
        )
    )  # fmt: skip
    assert run.summary.failures == [{"unit": 5, "reason": "checks failed", "attempts": 2}]
    with pytest.raises(Rejected):
        run_to_completion(
            lambda: run_units(
                FakeRun(), [5], call, lambda u, r: None, _failure,
                concurrency=1, progress=_progress(1),
            )
        )  # fmt: skip
