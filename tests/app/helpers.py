"""Helpers for AppTest-driven tests of the app's pages."""

from __future__ import annotations

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
