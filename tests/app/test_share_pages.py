"""Labels in the app (explorer/share.py), through AppTest: a label made on the Trajectory
page is saved to the label file, survives a restart, and filters the Trajectories and
Dead ends pages (whose CSV then carries a ``labels`` column)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import streamlit as st

from dagmath_viz.cli import main
from dagmath_viz.store import labels as lb
from explorer.common import csv_bytes
from tests.app.helpers import app_on, on_page

GSM_BFS = Path(__file__).resolve().parents[2] / "sample_data" / "runs" / "gsm-bfs"
# problem 10 of the bundled gsm-bfs run: 9 steps, S5 and S8 its dead ends (read by hand)
QUERY = {"model": "gsm-bfs", "dataset": "gsm-logic", "problem": "10", "sample": "0"}


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_resource.clear()
    st.cache_data.clear()


def _trajectory(monkeypatch):
    return on_page(app_on(monkeypatch, GSM_BFS, **QUERY), "pages/trajectory.py")


def _by_key(widgets, key):
    (found,) = [w for w in widgets if w.key == key]
    return found


def test_a_label_made_in_the_app_survives_a_restart_and_filters(monkeypatch, tmp_path):
    path = tmp_path / "labels.jsonl"
    monkeypatch.setenv("DAGMATH_LABELS", str(path))
    at = _trajectory(monkeypatch)
    assert any(e.label == "Labels (0)" for e in at.expander)
    _by_key(at.selectbox, "share_step").select("S5")
    _by_key(at.text_input, "share_new").input("unused given")
    _by_key(at.text_input, "share_note").input("never cited")
    _by_key(at.button, "share_add").click()
    at.run()
    assert not at.exception

    saved = lb.read_labels(path)
    assert saved.issues == ()
    assert [(x.problem_id, x.sample_id, x.step_id, x.label, x.note) for x in saved.labels] == [
        ("10", 0, 5, "unused given", "never cited")
    ]

    st.cache_resource.clear()  # a restart: nothing kept in memory
    st.cache_data.clear()
    at = _trajectory(monkeypatch)
    assert any(e.label == "Labels (1)" for e in at.expander)
    assert any(t.value == "S5 · unused given · never cited" for t in at.text)

    at = on_page(at, "pages/trajectories.py")
    _by_key(at.multiselect, "tt_labels").select("unused given")
    at.run()
    rows = at.dataframe[0].value
    assert rows[["problem", "sample", "labels"]].values.tolist() == [["10", 0, "unused given"]]

    at = on_page(at, "pages/dead_ends.py")
    _by_key(at.multiselect, "de_labels").select("unused given")
    at.run()
    shown = at.dataframe[-1].value
    assert shown[["problem_id", "step_id"]].values.tolist() == [["10", 5]]


def test_a_foreign_label_file_is_reported_and_left_alone(monkeypatch, tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_bytes(b'{"model": "m", "n_nodes": 3}\n')
    monkeypatch.setenv("DAGMATH_LABELS", str(path))
    at = _trajectory(monkeypatch)
    shown = [w.value.replace("\\", "") for w in at.warning]  # markdown escapes dropped
    assert any("line 1: no label-file header" in w for w in shown)
    assert any("line 1: not a label: missing dataset" in w for w in shown)
    _by_key(at.text_input, "share_new").input("x")
    _by_key(at.button, "share_add").click()
    at.run()
    errors = [e.value.replace("\\", "") for e in at.error]
    assert any("Label not saved" in e and "not a label file" in e for e in errors)
    assert path.read_bytes() == b'{"model": "m", "n_nodes": 3}\n'


def test_a_label_made_in_the_app_reaches_the_csv_the_report_and_the_export(
    monkeypatch, tmp_path, capsys
):
    # the app's default label file: the sidecar beside the data (no DAGMATH_LABELS), which
    # report --by label and export-html read by default too
    monkeypatch.delenv("DAGMATH_LABELS", raising=False)
    data = tmp_path / "gsm-bfs"
    shutil.copytree(GSM_BFS, data)
    at = on_page(app_on(monkeypatch, data, **QUERY), "pages/trajectory.py")
    _by_key(at.selectbox, "share_step").select("S8")
    _by_key(at.text_input, "share_new").input("wrong step")
    _by_key(at.button, "share_add").click()
    at.run()
    sidecar = data / lb.SIDECAR_NAME
    assert [x.label for x in lb.read_labels(sidecar).labels] == ["wrong step"]

    st.cache_resource.clear()  # a restart
    st.cache_data.clear()
    at = on_page(app_on(monkeypatch, data, **QUERY), "pages/trajectories.py")
    _by_key(at.multiselect, "tt_labels").select("wrong step")
    at.run()
    rows = at.dataframe[0].value
    csv = csv_bytes(rows).decode("utf-8")  # what "Download these rows (CSV)" writes
    assert csv.splitlines()[0].split(",")[-1] == "labels"
    assert [ln.split(",")[-1] for ln in csv.splitlines()[1:]] == ["wrong step"]

    # dagmath report --by label: one label, on one trajectory and one step
    assert main(["report", str(data), "--by", "label", "--format", "json", "-q"]) == 0
    counted = json.loads(capsys.readouterr().out)
    assert counted == [{"label": "wrong step", "labels": 1, "trajectories": 1, "steps": 1}]

    # dagmath export-html of that trajectory lists it (S8) without being told the file
    out = tmp_path / "t.html"
    assert main(["export-html", str(data), "--problem", "10", "-o", str(out), "-q"]) == 0
    assert "<td>S8</td><td>wrong step</td>" in out.read_text(encoding="utf-8")


def test_a_damaged_label_file_keeps_its_labels_in_the_app(monkeypatch, tmp_path):
    path = tmp_path / "labels.jsonl"
    lb.add_label(path, lb.make_label("gsm-bfs", "gsm-logic", "10", 0, "mine", step_id=5))
    with path.open("ab") as handle:  # a bad edit by hand, and a line cut short
        handle.write(b'\xff\xfe not a label\n{"model": "gsm-bfs", "data')
    monkeypatch.setenv("DAGMATH_LABELS", str(path))
    at = _trajectory(monkeypatch)
    shown = [w.value.replace("\\", "") for w in at.warning]
    assert any("line 3: not JSON" in w for w in shown)
    assert any("line 4: not JSON" in w for w in shown)
    assert any(t.value == "S5 · mine" for t in at.text)  # the good label still shown
    _by_key(at.text_input, "share_new").input("another")
    _by_key(at.button, "share_add").click()
    at.run()
    found = lb.read_labels(path)
    assert [x.label for x in found.labels] == ["mine", "another"]  # nothing lost
    assert len(found.issues) == 2


def test_two_peoples_label_files_together_with_their_agreement(monkeypatch, tmp_path):
    # dagmath app --labels mine --labels theirs: DAGMATH_LABELS names both, mine first
    mine, theirs = tmp_path / "mine.jsonl", tmp_path / "theirs.jsonl"

    def mark(path, step, name, problem="10"):
        lb.add_label(path, lb.make_label("gsm-bfs", "gsm-logic", problem, 0, name, step_id=step))

    # on four steps mine says x x y y, theirs x y y y (and theirs labels a fifth step, and a
    # step of problem 11 "z"): p_o = 3/4; p_e = (2·1 + 2·3) / 16 = 1/2; kappa = 1/2
    for step, (a, b) in zip((1, 2, 3, 4), ("xx", "xy", "yy", "yy"), strict=True):
        mark(mine, step, a)
        mark(theirs, step, b)
    mark(theirs, 6, "x")
    mark(theirs, 2, "z", problem="11")
    monkeypatch.setenv("DAGMATH_LABELS", f"{mine}{os.pathsep}{theirs}")
    at = _trajectory(monkeypatch)
    said = " ".join(m.value for m in at.markdown)
    assert "agreement with yours over the 4 items both label: same labels on 3 (75.0%)" in said
    assert "Cohen's kappa 0.500 · only yours 0, only theirs 2" in said
    (theirs_here,) = [d.value for d in at.dataframe]  # theirs on this trajectory
    assert theirs_here[["step", "label"]].values.tolist() == [
        ["S1", "x"], ["S2", "y"], ["S3", "y"], ["S4", "y"], ["S6", "x"]
    ]  # fmt: skip

    _by_key(at.text_input, "share_new").input("w")  # added to mine, never to theirs
    _by_key(at.button, "share_add").click()
    at.run()
    assert [x.label for x in lb.read_labels(mine).labels][-1] == "w"
    assert "w" not in [x.label for x in lb.read_labels(theirs).labels]

    at = on_page(at, "pages/trajectories.py")  # theirs join the filter
    _by_key(at.multiselect, "tt_labels").select("z")
    at.run()
    rows = at.dataframe[0].value
    assert rows[["problem", "sample", "labels"]].values.tolist() == [["11", 0, "z"]]


def test_the_run_report_shows_the_overview_pages_numbers(monkeypatch, tmp_path):
    # the tables the Overview page puts on screen (AppTest reads them off the page), cell by
    # cell against the report export-html writes of the same data
    from tests.test_html_export import page_tables, shown

    data = GSM_BFS.parent  # the bundled sample runs, as the app's default source
    at = app_on(monkeypatch, data, timeout=180)
    assert not at.exception
    # tables by their header, in page order: the models' leaderboard and the logic-program
    # strategies' table below it share one header
    on_screen: dict[tuple, list] = {}
    for d in at.dataframe:
        on_screen.setdefault(tuple(map(str, d.value.columns)), []).append(d.value)
    out = tmp_path / "report.html"
    assert main(["export-html", str(data), "--report", "--select", "none", "-o", str(out),
                 "-q"]) == 0  # fmt: skip
    found = page_tables(out.read_text(encoding="utf-8"))
    compared = 0
    for name, nth in (
        ("leaderboard", 0),
        ("strategies", 1),
        ("spread", 0),
        ("table1", 0),
        ("class_counts", 0),
    ):
        head = tuple(found[name][0])
        assert head in on_screen, (name, head, list(on_screen))
        table = on_screen[head][nth]
        rows = [[shown(v) for v in row] for row in table.itertuples(index=False)]
        assert found[name][1:] == rows, name
        compared += len(rows)
    assert compared > 16  # 16 leaderboard rows (10 models, some on two datasets) and more
