"""AppTest over the bad corpus: every page runs, every problem is listed by file, the good
trajectories are still there, and hostile text reaches markdown escaped.

The corpus is the one ``dagmath score`` meets in ``tests/test_hardening.py`` (the committed
``tests/data/bad`` plus the cases made at test time), given to the app as
``DAGMATH_DATA=<a link to it>``: the app resolves the path, and the links inside that lead
out of the folder are still refused.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.app.helpers import (
    PAGES,
    choice,
    corpora_loaded_once,
    problems_table,
    short_answer_deadline,
)
from tests.test_hardening import (
    HOSTILE_BROKEN_FILE,
    HOSTILE_MODEL_DIR,
    ILLEGAL,
    ISSUES,
    PWN,
    build_bad_corpus,
)

APP = str(Path(__file__).resolve().parents[2] / "app.py")
HOSTILE_MODEL = f"m<script>{PWN}</script>"
HOSTILE_DATASET = f'd<img src=x onerror="{PWN}">'


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_resource.clear()
    st.cache_data.clear()
    yield


@pytest.fixture(scope="module", autouse=True)
def _one_quick_load():
    """The app's answer checker with a 2 s deadline, and each folder loaded once for the
    module (every test still clears Streamlit's caches and draws its pages afresh): the
    answers that stall math-verify cost two seconds each, once, instead of five each on
    every test (their verdict is "not equivalent" either way)."""
    with short_answer_deadline(2.0), corpora_loaded_once():
        yield


@pytest.fixture(scope="module")
def bad_data(tmp_path_factory) -> tuple[Path, Path]:
    """(the link given as DAGMATH_DATA, the corpus folder it resolves to)."""
    base = tmp_path_factory.mktemp("app-bad")
    corpus = build_bad_corpus(base)
    link = base / "link-to-bad"
    link.symlink_to(corpus.root, target_is_directory=True)
    return link, corpus.root.resolve()


@pytest.fixture
def app(monkeypatch, bad_data) -> AppTest:
    monkeypatch.setenv("DAGMATH_DATA", str(bad_data[0]))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _run(at: AppTest, page: str | None = None) -> AppTest:
    if page:
        at.switch_page(page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_the_data_path_is_resolved(bad_data):
    from explorer import common

    link, corpus = bad_data
    assert common._resolve_data_path(str(link)) == corpus
    assert link.is_symlink() and corpus != link


def test_every_page_runs_on_the_bad_corpus(app):
    for page in PAGES:
        _run(app, page)
        assert app.title, page
        # the panel is part of the frame: on every page, and it says nothing was dropped
        (panel,) = [e for e in app.expander if "load or scoring problems" in e.label]
        assert "everything readable was still loaded" in panel.label


def test_the_problems_panel_names_every_bad_file(app, bad_data):
    _, corpus = bad_data
    table = problems_table(app)
    files = set(table["file"])
    for name, _ in ISSUES:
        if name != "30_zip_traversal.zip":  # only given by name to the CLI
            assert str(corpus / name) in files, name
    illegal = table[table["severity"] == "illegal"]
    for name in ILLEGAL:  # structural faults: the file, and the record in `where`
        rows = illegal[illegal["file"] == str(corpus / name)]
        assert len(rows) >= 1 and rows["where"].str.startswith("[0]: problem ").all(), name
    where = dict(zip(table["file"], table["where"], strict=False))
    assert where[str(corpus / "01_truncated.json")] == "file"
    problem = table.loc[table["file"] == str(corpus / HOSTILE_BROKEN_FILE), "problem"]
    assert problem.str.contains("invalid JSON").all() and len(problem) == 1
    # nothing from outside the data folder was read
    assert not table["file"].str.contains("outside/").any()


def test_good_trajectories_are_still_shown(app):
    board = next(f.value for f in app.dataframe if "PASS@1 (95% CI)" in f.value.columns)
    models = set(board["model"])
    assert {"good", "bad", HOSTILE_MODEL, HOSTILE_MODEL_DIR} <= models
    assert "outside" not in models
    good = board[board["model"] == "good"].iloc[0]
    assert good["PASS@1 (95% CI)"].startswith("100.0%")  # both good samples are correct
    _run(app, "pages/trajectory.py")
    choice(app, "traj_model").set_value("good").run()
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Steps / edges"] == "4 / 3" and metrics["Final answer"] == "correct"


def test_the_big_and_the_broken_trajectories_open(app):
    _run(app, "pages/trajectory.py")
    choice(app, "traj_model").set_value("bad").run()
    for problem, steps in (("43", "10000 / 9999"), ("17", "4 / 3"), ("22", "2 / 0")):
        choice(app, "traj_problem").set_value(problem).run()
        assert not app.exception, problem
        assert {m.label: m.value for m in app.metric}["Steps / edges"] == steps, problem
    errors = [re.sub(r"\\(.)", r"\1", e.value) for e in app.error]  # markdown-escaped
    assert any(e.endswith("step 2: parent '[[[[...]]]]' is not an integer step id") for e in errors)


def test_a_huge_trajectory_keeps_the_page_small(app):
    _run(app, "pages/trajectory.py")
    choice(app, "traj_model").set_value("bad").run()
    choice(app, "traj_problem").set_value("43").run()
    assert not app.exception
    assert len(app.markdown) < 1000


def test_hostile_text_is_escaped_in_markdown(app):
    _run(app, "pages/trajectory.py")
    choice(app, "traj_model").set_value(HOSTILE_MODEL).run()
    assert not app.exception
    bodies = [m.value for m in app.markdown]
    shown = [b for b in bodies if "onerror" in b or "javascript" in b]
    assert shown, "the hostile steps are not on the page"
    for body in shown:
        # raw HTML and markdown links only ever appear escaped
        assert "<img" not in body.replace("\\<img", "")
        assert "<script" not in body.replace("\\<script", "")
        assert "](javascript" not in body.replace("\\]\\(javascript", "")


def _unescaped_markup(body: str) -> list[str]:
    """Markup in a markdown body that Streamlit would act on: links, images, math, HTML."""
    found = re.findall(r"(?<!\\)\]\(javascript|(?<!\\)\$x(?<!\\)\$|(?<!\\)<(?:img|script)", body)
    return found


def test_trajectory_page_escapes_names_and_faults(app):
    _run(app, "pages/trajectory.py")
    choice(app, "traj_model").set_value(HOSTILE_MODEL_DIR).run()  # hostile folder names
    captions = [c.value for c in app.caption if "source:" in c.value]
    choice(app, "traj_model").set_value(HOSTILE_MODEL).run()
    choice(app, "traj_problem").set_value("33i").run()  # a step id that is markup
    errors = [e.value for e in app.error]
    assert captions and errors
    assert [b for b in captions + errors if _unescaped_markup(b)] == []


def _compare_hostile(app: AppTest) -> AppTest:
    _run(app, "pages/compare.py")
    app.multiselect(key="cmp_models").set_value(["gold", HOSTILE_MODEL]).run()
    assert not app.exception
    return app


def test_compare_runs_with_hostile_model_names(app):
    _compare_hostile(app)
    assert choice(app, "cmp_dataset").value == HOSTILE_DATASET


def test_compare_escapes_model_names_in_markdown(app):
    _compare_hostile(app)
    for body in [m.value for m in app.markdown]:
        assert "<script" not in body.replace("\\<script", ""), body


# --------------------------------------------------------------------------- Efficiency uploads

_GSM = Path(__file__).resolve().parents[2] / "sample_data" / "gsm"


class _FakeUpload:
    """What ``st.file_uploader`` returns: a name and the bytes."""

    def __init__(self, name: str, data: bytes) -> None:
        self.name, self._data = name, data

    def getvalue(self) -> bytes:
        return self._data


def _efficiency_with(
    monkeypatch, problems: bytes, proofs: bytes, scored: bytes | None = None
) -> AppTest:
    """The Efficiency page with its uploaders given these files."""
    import streamlit

    def uploader(label, *args, **kwargs):
        if label.startswith("problems"):
            return _FakeUpload("problems.jsonl", problems)
        if label.startswith("proofs"):
            return _FakeUpload("proofs.jsonl", proofs)
        if label.startswith("scored") and scored is not None:
            return _FakeUpload("scored.jsonl", scored)
        return None

    monkeypatch.setattr(streamlit, "file_uploader", uploader)
    monkeypatch.delenv("DAGMATH_DATA", raising=False)
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    return _run(at, "pages/efficiency.py")


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _with(line: bytes, **fields) -> bytes:
    import json

    return (json.dumps({**json.loads(line), **fields}) + "\n").encode()


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        # the three uploads that crashed the page: a proof whose efficiency is not a number,
        # a proof whose distance is not a number, a problems file without usable records
        ("efficiency text", "proofs.jsonl: record 1: skipped: efficiency is 'high'"),
        ("distance text", "proofs.jsonl: record 1: skipped: distance_dfs is 'far'"),
        ("no problem ids", "problems.jsonl: no usable problem record"),
    ],
)
def test_bad_efficiency_uploads_are_named_and_the_page_stays_up(monkeypatch, kind, expected):
    problems, proofs = _lines(_GSM / "problems.jsonl"), _lines(_GSM / "proofs.jsonl")
    if kind == "efficiency text":
        proofs[0] = _with(proofs[0], efficiency="high")
    elif kind == "distance text":
        proofs[0] = _with(proofs[0], distance_dfs="far")
    else:
        problems = [b'{"text": "no id"}\n']
    at = _efficiency_with(monkeypatch, b"".join(problems), b"".join(proofs))
    shown = [w.value.replace("\\", "") for w in at.warning] + [
        e.value.replace("\\", "") for e in at.error
    ]
    assert any(expected in m for m in shown), shown
    if kind != "no problem ids":  # the other records still show
        assert any("uploaded" in c.value for c in at.caption)


def test_efficiency_reruns_leave_no_new_folder(monkeypatch):
    """It made a temp folder on every rerun and never removed it (issue 10)."""
    from explorer import common

    problems, proofs = (_GSM / "problems.jsonl").read_bytes(), (_GSM / "proofs.jsonl").read_bytes()
    at = _efficiency_with(monkeypatch, problems, proofs)
    root = common.upload_store().root
    before = sorted(p for p in root.rglob("*") if p.is_dir())
    for _ in range(3):
        _run(at)
    assert sorted(p for p in root.rglob("*") if p.is_dir()) == before
    assert any("uploaded" in c.value for c in at.caption)


def test_a_bad_scored_proofs_upload_is_named_by_its_file(monkeypatch):
    """The model-proofs uploader goes through the same store; its error names the upload,
    never the private folder it was stored in."""
    problems, proofs = (_GSM / "problems.jsonl").read_bytes(), (_GSM / "proofs.jsonl").read_bytes()
    at = _efficiency_with(monkeypatch, problems, proofs, scored=b"{not json\n")
    errors = [e.value.replace("\\", "") for e in at.error]
    assert any("Could not read the scored proofs: scored.jsonl: line 1" in e for e in errors), (
        errors
    )
    assert not any("dagmath-viz-uploads" in e for e in errors)


def test_a_bad_sweep_interval_is_one_error_naming_the_variable(monkeypatch):
    from dagmath_viz.store.uploads import SWEEP_ENV

    monkeypatch.setenv(SWEEP_ENV, "a minute")
    problems, proofs = (_GSM / "problems.jsonl").read_bytes(), (_GSM / "proofs.jsonl").read_bytes()
    at = _efficiency_with(monkeypatch, problems, proofs)
    errors = [e.value.replace("\\", "") for e in at.error]
    assert errors == [f"{SWEEP_ENV}='a minute': expected a number of seconds above 0"], errors


def test_efficiency_page_stays_up_with_hostile_overlap_and_strategy(monkeypatch):
    """Issue 33, item 6: the ``overlap`` and ``strategy`` fields are someone's data; the page
    runs, and the chart it draws holds them escaped (a CSS url() in the legend was fetched)."""
    import json

    hostile = '<span style="background:url(http://127.0.0.2:9/x.png)">both</span>'
    problems, proofs = _lines(_GSM / "problems.jsonl"), _lines(_GSM / "proofs.jsonl")
    proofs = [_with(p, overlap=hostile, strategy=f"<b>{hostile}</b>") for p in proofs[:40]]
    problems = [_with(p, overlap=hostile) for p in problems]
    at = _efficiency_with(monkeypatch, b"".join(problems), b"".join(proofs))
    assert not at.exception
    charts = [json.dumps(json.loads(c.proto.spec)) for c in at.get("plotly_chart")]
    assert charts, "the efficiency chart was not drawn"
    for spec in charts:
        assert "<span" not in spec and "<b>" not in spec
        assert "&lt;span" in spec
