"""Helpers for AppTest-driven tests of the app's pages."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")
#: Every page of the app, as AppTest.switch_page names them.
PAGES = [
    "pages/overview.py",
    "pages/trajectories.py",
    "pages/trajectory.py",
    "pages/compare.py",
    "pages/distributions.py",
    "pages/dead_ends.py",
    "pages/efficiency.py",
]


def app_on(monkeypatch, data: Path | None, *, timeout: float = 60, **query: str) -> AppTest:
    """The app run once in AppTest on ``data`` (``--data``; None: the bundled sample data),
    with ``query`` as its URL's query parameters."""
    if data is None:
        monkeypatch.delenv("DAGMATH_DATA", raising=False)
    else:
        monkeypatch.setenv("DAGMATH_DATA", str(data))
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.query_params.update(query)
    at.run()
    return at


def on_page(at: AppTest, page: str) -> AppTest:
    """``at`` switched to ``page`` (``pages/<name>.py``) and run, with no exception."""
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def choice(at, key: str):
    """The selectbox drawn by ``explorer.common.select(..., key)``.

    Its widget key is ``<key>__w<n>_<digest of its options>`` (the box is drawn afresh
    whenever its options change), so it is found by that prefix.
    """
    found = [s for s in at.selectbox if s.key and s.key.startswith(f"{key}__w")]
    assert len(found) == 1, (key, [s.key for s in at.selectbox])
    return found[0]


def problems_table(at: AppTest):
    """The load-problems table the page shows (file, where, severity, problem)."""
    for frame in at.dataframe:
        if list(frame.value.columns) == ["file", "where", "severity", "problem"]:
            return frame.value
    raise AssertionError("no load-problems table on the page")


@contextmanager
def corpora_loaded_once() -> Iterator[None]:
    """Within the block, the app loads each data source once: ``explorer.common``'s
    ``load_corpus`` is remembered per (its arguments, the ``DAGMATH_*`` environment).

    For a module whose tests each clear Streamlit's caches (every page, table and figure is
    computed afresh per test) but load the same folder: the load is the same every time,
    and on a corpus with answers that stall math-verify it costs seconds a test. The
    corpus is shared read-only, as the app shares it between sessions. A load that raises
    is not remembered. Progress callbacks are only called by the first load.
    """
    from explorer import common

    real = common.load_corpus
    loaded: dict[tuple, object] = {}
    lock = threading.Lock()

    def load_once(paths, *args, **kwargs):
        env = sorted((k, v) for k, v in os.environ.items() if k.startswith("DAGMATH_"))
        options = sorted(
            (k, repr(v)) for k, v in kwargs.items() if k not in ("progress", "partial")
        )
        key = (tuple(map(str, paths)), tuple(map(repr, args)), tuple(options), tuple(env))
        with lock:
            if key not in loaded:
                loaded[key] = real(paths, *args, **kwargs)
            return loaded[key]

    common.load_corpus = load_once
    try:
        yield
    finally:
        common.load_corpus = real


@contextmanager
def short_answer_deadline(seconds: float) -> Iterator[None]:
    """Within the block, the app checks answers with a ``seconds`` deadline instead of the
    default 5 s: for folders whose crafted answers stall math-verify until the deadline
    (a timeout is never cached, so every load waits for it again; the verdict is "not
    equivalent" either way). The app's checker is the kept one
    (``answers.check.kept_checker``, the verdicts on disk), so that is the one replaced,
    for the cache file of this test session."""
    from dagmath_viz.answers import check

    off = os.environ.get(check.VERDICT_CACHE_ENV, "").strip() == "0"
    path = None if off else check.default_cache_file()  # as kept_checker() finds it
    checker = check.AnswerChecker(timeout=seconds, cache_file=path)
    previous = check._kept.get(path)
    check._kept[path] = checker
    try:
        yield
    finally:
        if previous is None:
            check._kept.pop(path, None)
        else:
            check._kept[path] = previous
        checker.close()


class FakeUpload:
    """What ``st.file_uploader`` returns: a name and the bytes."""

    def __init__(self, name: str, data: bytes) -> None:
        self.name, self._data = name, data

    def getvalue(self) -> bytes:
        return self._data


def efficiency_with_uploads(monkeypatch, problems: bytes, proofs: bytes | None) -> AppTest:
    """The Efficiency page run with ``problems`` (and ``proofs``, unless None) given to its
    two uploaders as ``problems.jsonl`` and ``proofs.jsonl``, no --data source."""
    import streamlit

    def uploader(label, *args, **kwargs):
        if label.startswith("problems"):
            return FakeUpload("problems.jsonl", problems)
        if label.startswith("proofs") and proofs is not None:
            return FakeUpload("proofs.jsonl", proofs)
        return None

    monkeypatch.setattr(streamlit, "file_uploader", uploader)
    monkeypatch.delenv("DAGMATH_DATA", raising=False)
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/efficiency.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def two_problem_run(root: Path) -> Path:
    """``root/m/d``: problems 1 and 2 in the official layout, one two-step sample each
    ending in ``\\boxed{7}``, no difficulty and no reference answer; returns ``root``."""
    import json

    folder = root / "m" / "d"
    folder.mkdir(parents=True)
    for pid in (1, 2):
        steps = [
            {"step_id": 1, "direct_dependent_steps": None, "text": "given"},
            {"step_id": 2, "direct_dependent_steps": [1], "text": r"so $\boxed{7}$"},
        ]
        sample = {"problem_id": pid, "sample_id": 0, "steps": steps, "metadata": {"model": "m"}}
        (folder / f"problem_{pid}_all_samples.json").write_text(json.dumps([sample]))
    return root
