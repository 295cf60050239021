"""inspect_ai logs, lm-eval samples files and Hugging Face dataset files open in the app
(AppTest), through its data path (``--data``), raw and as ``dagmath score`` output read
back from their ``source``.

Expected values are read from the fixture files themselves (tests/fixtures/ecosystem and
tests/fixtures/hf, written by the real tools), not through the readers under test.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import streamlit as st

from dagmath_viz.cli import main
from tests.app.helpers import PAGES as ALL_PAGES
from tests.app.helpers import app_on, on_page

ECO = Path(__file__).resolve().parents[1] / "fixtures" / "ecosystem"
HF = Path(__file__).resolve().parents[1] / "fixtures" / "hf"
HF_FILES = ["trajectories.json", "trajectories.jsonl.gz", "trajectories.ndjson",
            "trajectories.parquet"]  # fmt: skip
PAGES = [p for p in ALL_PAGES if p != "pages/efficiency.py"]  # trajectories only
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
    # A scored record's source is read only inside the folders named (issue 33 item 8):
    # the log and its scored file side by side, as `dagmath score logs -o scored.jsonl`.
    log = tmp_path / JSON_LOG.name
    log.write_bytes(JSON_LOG.read_bytes())
    out = tmp_path / "scored.jsonl"
    assert main(["score", str(log), "-o", str(out), "--no-cache"]) == 0
    query = {"model": "mockllm/model", "dataset": "dagmath_arith", "problem": "2", "sample": "1"}
    at = on_page(app_on(monkeypatch, out, **query), "pages/trajectory.py")
    assert not [w.value for w in at.warning if "cannot be shown" in w.value]
    assert _view_texts(at) == [s["text"] for s in _reply_steps()]


# --------------------------------------------------------------------------- Hugging Face


def _hf_rows(path: Path) -> list[dict]:
    """The file's records, read with json, gzip and pyarrow alone."""
    if path.suffix == ".parquet":
        return pq.read_table(path).to_pylist()
    raw = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    return [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("name", HF_FILES)
def test_every_page_opens_a_hugging_face_file(monkeypatch, tmp_path, name):
    """Each file alone as --data: every page opens; the Trajectory page shows the second
    record (problem half/1, sample 1, the one with an aside) with the file's step texts."""
    data = tmp_path / name
    shutil.copy(HF / name, data)
    for page in PAGES:
        at = on_page(app_on(monkeypatch, data), page)
        assert at.title, f"{page} shows no title on {name}"
    row = _hf_rows(HF / name)[1]
    query = {"model": row["model"], "dataset": row["dataset"],
             "problem": row["problem_id"], "sample": str(row["sample_id"])}  # fmt: skip
    at = on_page(app_on(monkeypatch, data, **query), "pages/trajectory.py")
    assert _view_texts(at) == [s["text"] for s in row["steps"]]
    cited = {p for s in row["steps"] for p in (s["direct_dependent_steps"] or [])}
    dead = [s for s in row["steps"][:-1] if s["step_id"] not in cited]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Dead ends"] == str(len(dead)) == "1"


def test_a_free_form_log_alone_says_how_to_convert_it(monkeypatch, tmp_path):
    """The log is recognised and its replies lack steps: the page says so and names the
    command, instead of listing every format it looked for."""
    log = tmp_path / "free_form.eval"
    shutil.copy(ECO / "inspect" / "free_form.eval", log)
    at = app_on(monkeypatch, log)
    (warning,) = [w.value.replace("\\", "") for w in at.warning]
    assert warning.startswith(f"No DAG-MATH trajectories in {log}: its replies are free-form")
    assert "free-form chains of thought" in warning
    assert "`dagmath depends FILE --base-url URL --model NAME -o OUT_DIR`" in warning
    assert "Looked for" not in warning

    # in a folder, the files are named
    at = app_on(monkeypatch, tmp_path)
    (warning,) = [w.value.replace("\\", "") for w in at.warning]
    assert warning.startswith(f"No DAG-MATH trajectories in {tmp_path}: the replies in {log} are")
