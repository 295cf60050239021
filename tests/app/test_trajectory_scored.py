"""The Trajectory page on a scored JSONL (no steps in it): the chosen record's steps are read
back from its source file, and Next ▶ walks to the next sample's (issue 17, item 5)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import orjson
import pytest
import streamlit as st

from dagmath_viz.formats.registry import load_file
from dagmath_viz.score.reference import score_trajectory, to_record
from tests.app.helpers import app_on, on_page

TEXTS = {  # sample -> its steps' text; step k depends on step k-1
    0: ["zero a", "zero b"],
    1: ["one a", "one b", "one <b>c</b> $x$"],
    2: ["two a", "two b", "two c", "two d"],
}


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_resource.clear()
    st.cache_data.clear()


@pytest.fixture
def scored(tmp_path) -> Path:
    folder = tmp_path / "run" / "m-x" / "ds"
    folder.mkdir(parents=True)
    samples = [
        {"problem_id": 7, "sample_id": sid,
         "steps": [{"step_id": i + 1, "text": t, "thinking": f"why {sid}.{i + 1}",
                    "direct_dependent_steps": [i] if i else None} for i, t in enumerate(texts)]}
        for sid, texts in TEXTS.items()
    ]  # fmt: skip
    source = folder / "problem_7_all_samples.json"
    source.write_text(json.dumps(samples))
    out = tmp_path / "scored.jsonl"
    records = [to_record(t, score_trajectory(t)) for t in load_file(source).trajectories]
    out.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    return out


def _view_texts(at) -> list[str]:
    html = at.get("iframe")[0].proto.srcdoc
    data = json.loads(re.search(r'id="dm-data">(.*?)</script>', html, re.S).group(1))
    return [n["text"] for n in data["nodes"]]


def test_the_chosen_records_steps_come_from_its_source(monkeypatch, scored):
    at = app_on(monkeypatch, scored, model="m-x", dataset="ds", problem="7", sample="1")
    at = on_page(at, "pages/trajectory.py")
    assert not at.warning
    assert _view_texts(at) == TEXTS[1]
    assert any("Trajectory 2 of 3 shown" in c.value for c in at.caption)
    assert any("samples.json:item 2" in c.value.replace("\\", "") for c in at.caption)
    next_button = next(b for b in at.button if b.label == "Next ▶")
    next_button.click()
    at.run()
    assert _view_texts(at) == TEXTS[2]
    assert any("Trajectory 3 of 3 shown" in c.value for c in at.caption)


def test_a_source_moved_away_is_named_instead_of_the_steps(monkeypatch, scored):
    (scored.parent / "run").rename(scored.parent / "elsewhere")
    at = app_on(monkeypatch, scored, model="m-x", dataset="ds", problem="7", sample="0")
    at = on_page(at, "pages/trajectory.py")
    assert not at.get("iframe")
    (warning,) = [w.value.replace("\\", "") for w in at.warning if "cannot be shown" in w.value]
    assert "source file not found: " in warning
    assert warning.endswith("/run/m-x/ds/problem_7_all_samples.json.")


def test_item8_a_source_outside_the_data_folder_is_not_read_nor_told_apart(
    monkeypatch, scored, tmp_path
):
    """Issue 33 item 8: a scored record's source pointing at /etc/passwd, at a trajectory
    file outside the folder given with --data, or at a missing file: the page shows the
    same 'source file not found' for each, and no steps."""
    data = tmp_path / "data"
    data.mkdir()
    outside = scored.parent / "run" / "m-x" / "ds" / "problem_7_all_samples.json"  # readable
    records = [json.loads(line) for line in scored.read_text().splitlines()]
    targets = ["/etc/passwd", f"{outside}:item 1", str(tmp_path / "gone.json")]
    for record, target in zip(records, targets, strict=True):
        record["source"] = target
    hostile = data / "scored.jsonl"
    hostile.write_text("".join(json.dumps(r) + "\n" for r in records))
    for sample, target in enumerate(targets):
        st.cache_resource.clear()
        at = app_on(
            monkeypatch, hostile, model="m-x", dataset="ds", problem="7", sample=str(sample)
        )
        at = on_page(at, "pages/trajectory.py")
        assert not at.exception and not at.get("iframe"), target
        warnings = [w.value.replace("\\", "") for w in at.warning if "cannot be shown" in w.value]
        assert len(warnings) == 1, (target, [w.value for w in at.warning])
        written = target.rsplit(":item", 1)[0]
        assert f"source file not found: {written}" in warnings[0], warnings[0]
        assert "root:" not in warnings[0]


def test_sources_names_a_folder_a_scored_file_kept_apart_may_read(monkeypatch, scored, tmp_path):
    """A scored file moved away from the data it scored: its sources are outside the folder
    given with --data and are not read (issue 33 item 8) until --sources names their folder
    (DAGMATH_SOURCES for the app run by hand)."""
    apart = tmp_path / "results" / "scored.jsonl"
    apart.parent.mkdir()
    run = scored.parent / "run"
    records = [json.loads(line) for line in scored.read_text().splitlines()]
    for record in records:  # the sources as `dagmath score` wrote them, made absolute
        where, place = record["source"].rsplit(":", 1)
        record["source"] = f"{(scored.parent / where).resolve()}:{place}"
    apart.write_text("".join(json.dumps(r) + "\n" for r in records))
    query = {"model": "m-x", "dataset": "ds", "problem": "7", "sample": "1"}
    st.cache_resource.clear()
    at = on_page(app_on(monkeypatch, apart, **query), "pages/trajectory.py")
    assert not at.get("iframe")
    assert any("source file not found" in w.value for w in at.warning)
    monkeypatch.setenv("DAGMATH_SOURCES", str(run))
    st.cache_resource.clear()
    at = on_page(app_on(monkeypatch, apart, **query), "pages/trajectory.py")
    assert not [w.value for w in at.warning if "cannot be shown" in w.value]
    assert _view_texts(at) == TEXTS[1]
