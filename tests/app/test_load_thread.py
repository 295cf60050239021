"""``explorer.common._Load``: a data source loaded once, in its own thread, whoever waits.

Before, the load ran in the script run that asked for it: a click while a 100,000-
trajectory folder was scored stopped that run, and with it the load, and the next run
started again from nothing. These drive ``_Load`` directly, with loads that block on
events, so each step happens in a known order.
"""

from __future__ import annotations

import threading

import pandas as pd
import pytest

from dagmath_viz.schema import DagMathError
from explorer.common import _Load

WAIT = 30  # seconds: a bound for a blocked thread, never reached when the code is right


def test_a_run_that_stops_waiting_leaves_the_load_running():
    release = threading.Event()
    calls = []

    def compute(progress, partial):
        calls.append(1)
        assert release.wait(WAIT)
        return "corpus"

    load = _Load()
    load.start(compute)  # a first script run starts it, then is stopped (never waits)
    load.start(compute)  # the next run finds it under way: not started again
    release.set()
    assert load.wait() == "corpus"
    load.start(compute)  # done: a later run gets the same value
    assert load.wait() == "corpus"
    assert calls == [1]


def test_the_waiting_run_draws_progress_and_results_so_far():
    frame = pd.DataFrame({"model": ["a"]})
    drawn = threading.Event()
    seen_progress, seen_so_far = [], []

    def compute(progress, partial):
        progress(1, 4)
        partial(frame, 1, 4)
        assert drawn.wait(WAIT)  # the waiting run has drawn both
        progress(4, 4)
        return "corpus"

    def on_so_far(f, done, total):
        seen_so_far.append((f is frame, done, total))
        drawn.set()

    load = _Load()
    load.start(compute)
    assert load.wait(lambda d, t: seen_progress.append((d, t)), on_so_far) == "corpus"
    assert seen_so_far == [(True, 1, 4)]
    assert seen_progress[0] == (1, 4) and seen_progress[-1] == (4, 4)


def test_a_failed_load_is_raised_and_tried_again():
    attempts = []

    def compute(progress, partial):
        attempts.append(1)
        if len(attempts) == 1:
            raise DagMathError("the folder is gone")
        return "corpus"

    load = _Load()
    load.start(compute)
    with pytest.raises(DagMathError, match="the folder is gone"):
        load.wait()
    with pytest.raises(DagMathError):  # every run waiting on that load hears it
        load.wait()
    load.start(compute)
    assert load.wait() == "corpus"
    assert len(attempts) == 2


def test_results_so_far_wait_until_the_load_has_run_a_while(monkeypatch):
    """Before ``SO_FAR_AFTER`` seconds of a load its frames are not drawn (a quick load
    never flashes them); after, the latest is."""
    from explorer import common

    frame = pd.DataFrame({"model": ["a"]})
    go = threading.Event()

    def compute(progress, partial):
        partial(frame, 1, 2)
        assert go.wait(WAIT)
        return "corpus"

    seen = []
    monkeypatch.setattr(common, "SO_FAR_AFTER", 3600.0)
    load = _Load()
    load.start(compute)
    threading.Timer(0.5, go.set).start()  # the load ends after a few polls
    assert load.wait(None, lambda *a: seen.append(a)) == "corpus"
    assert seen == []
    monkeypatch.setattr(common, "SO_FAR_AFTER", 0.0)
    go.clear()
    load = _Load()
    load.start(compute)
    threading.Timer(0.5, go.set).start()
    assert load.wait(None, lambda *a: seen.append(a)) == "corpus"
    assert seen == [(frame, 1, 2)]
