"""The Trajectory page's view wiring, through AppTest (no browser): the landing choice, the
linked view's iframe, a stale ``step=`` link, and the typeset list under its formula budget."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.app.helpers import app_on, on_page

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_resource.clear()
    st.cache_data.clear()


def _trajectory_page(monkeypatch, data: Path | None, **query: str) -> AppTest:
    return on_page(app_on(monkeypatch, data, **query), "pages/trajectory.py")


def _view_data(at: AppTest) -> dict:
    html = at.get("iframe")[0].proto.srcdoc
    return json.loads(re.search(r'id="dm-data">(.*?)</script>', html, re.S).group(1))


def test_landing_is_a_short_imperfect_trajectory_not_the_largest(monkeypatch):
    at = _trajectory_page(monkeypatch, None)
    metrics = {m.label: m.value for m in at.metric}
    n_steps = int(metrics["Steps / edges"].split(" / ")[0])
    assert 8 <= n_steps <= 40
    assert int(metrics["Dead ends"]) >= 1
    assert any("-badge[imperfect]" in m.value for m in at.markdown)
    data = _view_data(at)
    assert data["n_steps"] == n_steps
    assert data["view"]["show_steps"] is True and data["view"]["selected"] is None


# A 9-step trajectory of the bundled data (steps 1..9; a link to one that does not exist
# is refused, not replaced, so these must name a real one).
def test_step_link_selects_in_the_view_and_a_stale_one_is_named(monkeypatch):
    query = {"model": "sim-focus-2.4", "dataset": "arith-word", "problem": "109", "sample": "10"}
    at = _trajectory_page(monkeypatch, None, step="5", **query)
    assert _view_data(at)["view"]["selected"] == 4  # step 5 is at position 4
    assert not at.warning
    at = _trajectory_page(monkeypatch, None, step="77", **query)
    assert _view_data(at)["view"]["selected"] is None
    assert "Step 77 is not in this trajectory" in at.warning[0].value


def test_typeset_list_is_off_until_asked_then_paged(monkeypatch):
    query = {"model": "sim-focus-2.4", "dataset": "arith-word", "problem": "109", "sample": "10"}
    at = _trajectory_page(monkeypatch, None, **query)
    before = len(at.markdown)
    at.toggle(key="traj_typeset_on").set_value(True).run()
    assert not at.exception
    # 9 steps on one page: one header and one text per step (at least), no budget warning.
    assert len(at.markdown) >= before + 18
    assert not [w for w in at.warning if "Formula budget" in w.value]


def _step_fields(at: AppTest) -> list:
    return [e for e in at.expander if e.label == "Step fields"]


def test_step_fields_table_on_thought_anchors_only(monkeypatch, tmp_path, thought_anchors_root):
    # one chain, in the source's layout (copied out of ../shared, never into the repository)
    chain = Path("deepseek-r1-distill-qwen-14b/correct_base_solution/problem_2238")
    shutil.copytree(thought_anchors_root / chain, tmp_path / chain)
    chunks = json.loads((tmp_path / chain / "chunks_labeled.json").read_text(encoding="utf-8"))
    query = {"model": chain.parts[0], "problem": "2238", "sample": "0"}
    at = _trajectory_page(monkeypatch, tmp_path, **query)
    (section,) = _step_fields(at)
    (table,) = section.dataframe
    frame = table.value
    assert len(frame) == len(chunks) == 60
    assert frame["step"].tolist() == [c["chunk_idx"] for c in chunks]
    assert frame["summary"].tolist() == [c["summary"] for c in chunks]
    assert frame["accuracy"].tolist() == [float(c["accuracy"]) for c in chunks]
    assert frame["accuracy"].dtype == float
    assert "Download the step fields (CSV)" in [b.proto.label for b in at.get("download_button")]
    # the bundled DAG-MATH data carries no per-step fields: no section
    at = _trajectory_page(monkeypatch, None)
    assert not at.exception
    assert not _step_fields(at)
    assert any(e.label == "Problem" for e in at.expander)


def _one_model_run(root: Path, model: str) -> Path:
    """One trajectory of ``model`` (given in the sample's metadata) ending as R1 does."""
    folder = root / "run" / "d"
    folder.mkdir(parents=True)
    steps = [
        {"step_id": 1, "direct_dependent_steps": None, "text": "Let $x = 2$."},
        {"step_id": 2, "direct_dependent_steps": [1], "text": "**Final Answer**\nIt is $4$."},
    ]
    sample = {"problem_id": 1, "sample_id": 0, "steps": steps, "metadata": {"model": model}}
    (folder / "problem_1_all_samples.json").write_text(json.dumps([sample]))
    return root / "run"


@pytest.mark.parametrize(
    ("model", "written_out"),
    [
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", False),  # 40 characters: the box shows it
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-14B-Instruct-v2", True),
    ],
)
def test_a_model_name_longer_than_the_box_is_written_in_full(
    monkeypatch, tmp_path, model, written_out
):
    at = _trajectory_page(monkeypatch, _one_model_run(tmp_path, model))
    written = [c.value for c in at.caption if c.value.startswith("Model: ")]
    # the name as escaped markdown (its "-" and "/" shown as typed)
    assert [w.replace("\\", "") for w in written] == ([f"Model: {model}"] if written_out else [])


def test_the_typeset_steps_keep_markdown_bold(monkeypatch, tmp_path):
    at = _trajectory_page(monkeypatch, _one_model_run(tmp_path, "m"))
    at.toggle(key="traj_typeset_on").set_value(True).run()
    assert not at.exception
    texts = [m.value for m in at.markdown]
    assert "**Final Answer**  \nIt is $4$\\." in texts
