"""Every page on a raw results folder opened streamed: no steps in memory, read on demand.

The streaming threshold (``dagmath_viz.run.corpus.STREAM_BYTES``) is forced to 0, so the
small log-count folder (tests/test_streamed.py writes it; two models, five walks) loads the
way a 100,000-trajectory folder does: every ``Corpus.trajectory`` is None and the pages read
steps back from each record's ``source``. Expected values are worked out from the walks.
"""

from __future__ import annotations

import json
import re

import pytest
import streamlit as st

from dagmath_viz.run import corpus as run_corpus
from tests.app.helpers import app_on, on_page
from tests.logcount import write_logcount

TRAJECTORY = {"model": "model-a", "dataset": "logs", "problem": "1", "sample": "1"}


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_resource.clear()
    st.cache_data.clear()
    yield
    st.cache_resource.clear()


@pytest.fixture
def raw_run(tmp_path, monkeypatch):
    monkeypatch.setattr(run_corpus, "STREAM_BYTES", 0)
    return write_logcount(tmp_path / "run").resolve()


def _corpus(at):
    return at.session_state["_corpus"]


def _view_data(frame) -> dict:
    return json.loads(re.search(r'id="dm-data">(.*?)</script>', frame, re.S).group(1))


def test_the_folder_is_streamed_and_the_sidebar_counts_it(monkeypatch, raw_run):
    at = app_on(monkeypatch, raw_run)
    assert not at.exception
    corpus = _corpus(at)
    assert len(corpus) == 5 and all(t is None for t in corpus.trajectories)
    assert any("5 trajectories from" in c.value for c in at.sidebar.caption)
    assert not at.sidebar.get("progress")  # the bar is gone once loaded


def test_trajectory_page_reads_the_steps_from_the_file(monkeypatch, raw_run):
    at = on_page(app_on(monkeypatch, raw_run, **TRAJECTORY), "pages/trajectory.py")
    frames = [f.proto.srcdoc for f in at.get("iframe")]
    assert frames, "no trajectory view drawn"
    data = _view_data(frames[0])
    assert data["n_steps"] == 10  # the imperfect walk
    assert "statement v9" in frames[0]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Dead ends"] == "1"


def test_compare_draws_both_models_from_their_files(monkeypatch, raw_run):
    at = on_page(app_on(monkeypatch, raw_run), "pages/compare.py")
    assert not [w for w in at.warning if "Steps not shown" in w.value]
    frames = [f.proto.srcdoc for f in at.get("iframe")]
    # the two graphs, and the aligned step text of both beside them (draw/aligned.py)
    graphs = [f for f in frames if "window.edges" in f]
    aligned = [f for f in frames if 'data-side="a"' in f and 'data-side="b"' in f]
    assert len(graphs) == 2 and len(aligned) == 1 and len(frames) == 3
    assert all("statement v1" in f for f in frames)


def test_dead_ends_are_listed_and_categorised_from_the_files(monkeypatch, raw_run):
    at = on_page(app_on(monkeypatch, raw_run), "pages/dead_ends.py")
    table = next(f.value for f in at.dataframe if "step_id" in f.value.columns)
    got = {
        (r.model, int(r.sample_id), int(r.step_id), r.category, r.text)
        for r in table.itertuples(index=False)
    }
    assert got == {
        ("model-a", 1, 8, "commentary", "statement v9"),
        ("model-a", 2, 2, "unused given", "statement v2"),
    }
    assert not at.get("progress")


def test_distributions_show_the_five_trajectories(monkeypatch, raw_run):
    at = on_page(app_on(monkeypatch, raw_run), "pages/distributions.py")
    assert at.title
    charts = at.get("plotly_chart")
    assert charts
    spec = charts[0].proto.spec
    assert "model-a" in spec and "model-b" in spec


def test_table_lists_every_trajectory_and_says_what_it_searches(monkeypatch, raw_run):
    at = on_page(app_on(monkeypatch, raw_run), "pages/trajectories.py")
    table = next(f.value for f in at.dataframe if "steps" in f.value.columns)
    assert sorted(table["steps"].tolist()) == [7, 9, 9, 9, 10]
    assert any("source" in c.value for c in at.caption)


def test_dead_ends_page_runs_again_from_its_cache(monkeypatch, raw_run):
    """The second run replays the cached tables (drawn with a progress bar the first time)."""
    at = on_page(app_on(monkeypatch, raw_run), "pages/dead_ends.py")
    at.run()
    assert not at.exception
    table = next(f.value for f in at.dataframe if "step_id" in f.value.columns)
    assert sorted(table["step_id"].astype(int)) == [2, 8]


def test_the_sidebar_progress_gets_files_from_the_scorer(monkeypatch, raw_run):
    from explorer import common

    seen: list[tuple[int, int]] = []
    real = common.load_corpus

    def recording(paths, **kw):
        shown = kw["progress"]

        def both(done, total):
            seen.append((done, total))
            shown(done, total)

        return real(paths, **{**kw, "progress": both})

    monkeypatch.setattr(common, "load_corpus", recording)
    at = app_on(monkeypatch, raw_run)
    assert not at.exception
    assert seen == [(1, 2), (2, 2)]  # two problem files, one per model, as each is scored


def test_a_bad_file_in_a_streamed_folder_is_an_issue_not_a_traceback(monkeypatch, raw_run):
    (raw_run / "model-a" / "logs" / "problem_2_all_samples.json").write_text('[{"steps": [')
    at = app_on(monkeypatch, raw_run)
    assert not at.exception
    assert len(_corpus(at)) == 5
    problems = next(f.value for f in at.dataframe if "severity" in f.value.columns)
    assert any(f.endswith("problem_2_all_samples.json") for f in problems["file"])


def test_an_unreadable_answers_file_is_an_error_not_a_traceback(monkeypatch, raw_run, tmp_path):
    monkeypatch.setenv("DAGMATH_ANSWERS", str(tmp_path / "missing.csv"))
    at = app_on(monkeypatch, raw_run)
    assert not at.exception
    assert any("Could not load" in e.value for e in at.error)


def _so_far_script() -> None:
    """The main area while a folder is scored: the slot ``sidebar_data_source`` fills,
    left drawn (the app empties it once the load is done)."""
    import os

    import streamlit as st

    from dagmath_viz.run.corpus import load_corpus
    from explorer import common

    slot = st.empty()
    load_corpus(
        [os.environ["SO_FAR_RUN"]], stream_bytes=0, partial=common.results_so_far("the run", slot)
    )


def test_results_so_far_show_the_files_scored(monkeypatch, raw_run):
    """A frame after each file, drawn over the last: after both, model-a (the perfect,
    imperfect and wrong walks of the one problem) has PASS@1 2/3 (the wrong walk answers
    0, not 300) and R̂ 1/3 (only the perfect walk is closed and correct); model-b (the
    perfect walk twice) 100% and 100%; no intervals."""
    from streamlit.testing.v1 import AppTest

    from dagmath_viz.run import streamed

    monkeypatch.setattr(streamed, "PARTIAL_EVERY", 0.0)
    monkeypatch.setenv("DAGMATH_FRAME_CACHE", "0")
    monkeypatch.setenv("SO_FAR_RUN", str(raw_run))
    at = AppTest.from_function(_so_far_script, default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [h.value for h in at.subheader] == ["Results so far"]
    assert "2 of 2 files, 5 trajectories so far" in at.caption[0].value
    board = at.dataframe[0].value.sort_values("model")
    assert board[["model", "trajectories"]].values.tolist() == [["model-a", 3], ["model-b", 2]]
    assert board["PASS@1"].tolist() == ["66.7%", "100.0%"]
    assert board["R̂"].tolist() == ["33.3%", "100.0%"]


def test_the_app_leaves_no_results_so_far_once_loaded(monkeypatch, raw_run):
    from explorer import common

    monkeypatch.setattr(common, "SO_FAR_AFTER", 0.0)
    at = app_on(monkeypatch, raw_run)
    assert not at.exception
    assert "Results so far" not in [h.value for h in at.subheader]
    assert "Overview" in [t.value for t in at.title]


def test_above_the_limit_the_sources_are_read_when_asked(monkeypatch, raw_run):
    """With more source files than ``AUTO_SOURCE_FILES`` (here 0), the dead ends are listed
    with their category unknown and a button reads the file (both are model-a's); clicked, both get
    their category (as in the test above)."""
    from dagmath_viz.analysis import deadends
    from dagmath_viz.formats import sources

    monkeypatch.setattr(sources, "AUTO_SOURCE_FILES", 0)
    at = on_page(app_on(monkeypatch, raw_run), "pages/dead_ends.py")
    table = next(f.value for f in at.dataframe if "step_id" in f.value.columns)
    assert set(table["category"]) == {deadends.UNKNOWN}
    assert set(table["text"]) == {""}
    buttons = [b for b in at.button if b.label.startswith("Read ")]
    assert [b.label for b in buttons] == ["Read 1 source file to categorise them"]  # model-a
    before = [c.value for c in at.caption if c.value.startswith("The loaded steps carry")]
    assert before[0].endswith("and the scored records' sources were not read.")
    buttons[0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    table = next(f.value for f in at.dataframe if "step_id" in f.value.columns)
    got = {(int(r.sample_id), int(r.step_id), r.category) for r in table.itertuples(index=False)}
    assert got == {(1, 8, "commentary"), (2, 2, "unused given")}
    assert not [b for b in at.button if b.label.startswith("Read ")]
    # no step of the walks carries a tag, and the sources are now read: it says just that
    untagged = [c.value for c in at.caption if c.value.startswith("The loaded steps carry")]
    assert untagged == ["The loaded steps carry no tags (Thought Anchors' `function_tags` are "
                        "one source of them)."]  # fmt: skip
