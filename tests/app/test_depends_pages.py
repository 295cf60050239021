"""What `dagmath depends` writes opens in every page (AppTest).

The records are made by the command's own record writer from two real Thought Anchors
chains (their base_solution.json text), with each step's parent the step before it, as the
scripted labeller of tests/generation answers; the run itself is tested there.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import streamlit as st

from dagmath_viz.generation.chains import read_chains
from dagmath_viz.generation.depends import trajectory_record
from tests.app.helpers import PAGES, app_on, choice, on_page

TA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "thought-anchors"


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_resource.clear()
    st.cache_data.clear()
    yield


@pytest.fixture(scope="module")
def depends_output(tmp_path_factory) -> Path:
    problem = TA.resolve() / "deepseek-r1-distill-qwen-14b"
    if not problem.is_dir():
        if os.environ.get("DAGMATH_REQUIRE_SHARED") == "1":
            pytest.fail(f"thought-anchors data not found at {problem}", pytrace=False)
        pytest.skip(f"thought-anchors data not found at {problem}")
    chains = [
        *read_chains(problem / "correct_base_solution" / "problem_2236" / "base_solution.json"),
        *read_chains(problem / "incorrect_base_solution" / "problem_2236" / "base_solution.json"),
    ]
    out = tmp_path_factory.mktemp("depends")
    lines = []
    for chain in chains:
        parents = [[k - 1] if k > 1 else [] for k in range(1, len(chain.steps) + 1)]
        record = trajectory_record(chain, parents, {"model": "lab", "prompt": "p"})
        lines.append(json.dumps(record) + "\n")
    (out / "thought-anchors.jsonl").write_text("".join(lines))
    return out


@pytest.mark.parametrize("page", PAGES)
def test_every_page_opens_the_depends_output(monkeypatch, depends_output, page):
    at = app_on(monkeypatch, depends_output)
    on_page(at, page)
    assert at.title, f"{page} shows no title"


def test_the_trajectory_page_shows_the_labelled_chain(monkeypatch, depends_output):
    at = app_on(monkeypatch, depends_output)
    on_page(at, "pages/trajectory.py")
    choice(at, "traj_problem").set_value("2236").run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    # 87 published chunks + the source's answer "90" as step 88 (its last chunk has no
    # \boxed{}), each step's parent the one before: 88 steps, 87 edges, closed
    chunks = json.loads(
        (TA / "deepseek-r1-distill-qwen-14b" / "correct_base_solution" / "problem_2236"
         / "chunks_labeled.json").read_text()
    )  # fmt: skip
    assert len(chunks) == 87
    assert metrics["Steps / edges"] == "88 / 87"
    assert metrics["Dead ends"] == "0"
