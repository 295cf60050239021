"""inspect_ai logs and lm-eval samples files open in the app (AppTest), through its data
path (``--data``), raw and as ``dagmath score`` output read back from their ``source``.

Expected values are read from the fixture files themselves (tests/fixtures/ecosystem,
written by the real tools), not through the readers under test.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import streamlit as st

from dagmath_viz.cli import main
from tests.app.helpers import app_on, on_page

ECO = Path(__file__).resolve().parents[1] / "fixtures" / "ecosystem"
PAGES = [
    "pages/overview.py",
    "pages/table.py",
    "pages/trajectory.py",
    "pages/compare.py",
    "pages/distributions.py",
    "pages/dead_ends.py",
]
#: The .json log's problem 2, epoch 2 (sample 1): four steps, steps 2 and 3 dead ends.
JSON_LOG = ECO / "inspect" / "arith_2epochs.json"


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_resource.clear()
    st.cache_data.clear()
    yield


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    """The three DAG-MATH logs in one folder (the free-form one left out)."""
    out = tmp_path_factory.mktemp("logs")
    shutil.copy(ECO / "inspect" / "arith.eval", out)
    shutil.copy(JSON_LOG, out)
    shutil.copytree(ECO / "lm_eval" / "mock-dagmath-1", out / "mock-dagmath-1")
    return out


def _view_texts(at) -> list[str]:
    html = at.get("iframe")[0].proto.srcdoc
    data = json.loads(re.search(r'id="dm-data">(.*?)</script>', html, re.S).group(1))
    return [n["text"] for n in data["nodes"]]


def _reply_steps() -> list[dict]:
    """Problem 2, epoch 2 of the .json log, read from the log with json alone."""
    log = json.loads(JSON_LOG.read_text(encoding="utf-8"))
    (sample,) = [s for s in log["samples"] if s["id"] == 2 and s["epoch"] == 2]
    reply = [m for m in sample["messages"] if m["role"] == "assistant"][-1]["content"]
    return json.loads(reply)["steps"]


@pytest.mark.parametrize("page", PAGES)
def test_every_page_opens_the_logs(monkeypatch, logs, page):
    at = app_on(monkeypatch, logs)
    on_page(at, page)
    assert at.title, f"{page} shows no title"


def test_the_trajectory_page_shows_an_inspect_sample(monkeypatch, logs):
    query = {"model": "mockllm/model", "dataset": "dagmath_arith", "problem": "2", "sample": "1"}
    at = on_page(app_on(monkeypatch, logs, **query), "pages/trajectory.py")
    steps = _reply_steps()
    assert _view_texts(at) == [s["text"] for s in steps]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Dead ends"] == "2"  # steps 2 and 3: cited by none, not the last


def test_a_scored_log_opens_its_steps_from_the_source(monkeypatch, tmp_path):
    out = tmp_path / "scored.jsonl"
    assert main(["score", str(JSON_LOG), "-o", str(out), "--no-cache"]) == 0
    query = {"model": "mockllm/model", "dataset": "dagmath_arith", "problem": "2", "sample": "1"}
    at = on_page(app_on(monkeypatch, out, **query), "pages/trajectory.py")
    assert not [w.value for w in at.warning if "cannot be shown" in w.value]
    assert _view_texts(at) == [s["text"] for s in _reply_steps()]
