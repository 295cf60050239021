"""``serve.py`` (what ``dagmath app`` runs): the ``--data`` source loads as the server starts.

Before, a fresh server did nothing until the first browser connected; the first visit then
imported the pages' libraries, read the scored run's copy or scored the raw folder, while
its user watched. Now the server starts the load itself, and the first visit waits for that
same load (:func:`explorer.common.preload`). The log-count folder (two models, five walks, one
file each, and an answer key; ``tests/logcount.py``) is the data.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import streamlit as st

from dagmath_viz.schema import InputError
from explorer import common
from tests.app.browser import REPO_ROOT, StreamlitServer, launch_prefix, server_script
from tests.app.helpers import app_on
from tests.logcount import write_logcount

WAIT = 60  # seconds: a bound for the server's log line, never reached when the code is right


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


@pytest.fixture
def run(tmp_path):
    return write_logcount(tmp_path / "run").resolve()


def test_the_first_visit_waits_for_the_preloaded_corpus(monkeypatch, run):
    label, load = common.preload(["--data", str(run)])
    assert label == str(run)
    corpus = load.wait()
    assert len(corpus) == 5 and corpus.files_read == 3  # two data files and the answer key
    at = app_on(monkeypatch, run)  # the sidebar asks for the same source: the same load
    assert not at.exception
    assert at.session_state["_corpus"] is corpus


def test_without_data_the_bundled_sample_is_preloaded(monkeypatch):
    monkeypatch.delenv("DAGMATH_DATA", raising=False)
    label, load = common.preload([])
    assert label == str(common.SAMPLE_DATA)
    source_id, paths, _ = common.path_source(None)
    assert common.start_loading(source_id, paths, None, label) is load
    assert len(load.wait()) == 4430  # the bundled runs (tests/test_streamed.py counts them too)


def test_a_missing_path_is_left_for_the_page_to_report(tmp_path):
    assert common.preload(["--data", str(tmp_path / "gone")]) is None


def test_dagmath_app_runs_serve_py():
    from dagmath_viz.cli.app import app_command

    command = app_command(argparse.Namespace(extra=[], data=None, answers=None, field_map=None))
    assert command[:2] == launch_prefix(REPO_ROOT / "serve.py")
    assert server_script() == REPO_ROOT / "serve.py"


def _log_once_it_says(server: StreamlitServer, text: str) -> str:
    """The server's log tail once it holds ``text`` (or after :data:`WAIT` seconds)."""
    deadline = time.monotonic() + WAIT
    while text not in server.log_tail() and time.monotonic() < deadline:
        time.sleep(0.2)
    return server.log_tail()


def test_the_server_loads_the_folder_before_anyone_visits(run):
    """Nothing connects to this server (its health check is no session), yet its log says
    the folder's five trajectories are ready."""
    server = StreamlitServer(REPO_ROOT / "serve.py", ("--data", str(run)))
    try:
        ready = "dagmath app: 5 trajectories from 3 files ready"
        tail = _log_once_it_says(server, ready)
        assert ready in tail
        assert f"dagmath app: loading {run} before the first visit" in tail
        assert "Traceback" not in tail
    finally:
        server.stop()


def test_a_failed_preload_is_one_line_not_a_traceback(run, tmp_path):
    server = StreamlitServer(
        REPO_ROOT / "serve.py", ("--data", str(run), "--answers", str(tmp_path / "none.json"))
    )
    try:
        tail = _log_once_it_says(server, "not preloaded")
        assert "dagmath app: not preloaded (InputError:" in tail and "none.json" in tail
        assert "Traceback" not in tail
    finally:
        server.stop()


class _Loaded(list):
    files_read = 4


def test_the_terminal_hears_how_far_a_long_load_is(monkeypatch, capsys):
    """serve.py's lines while the data load: how many files are read, then ready."""
    import serve

    def compute(progress, partial):
        progress(1, 4)
        time.sleep(10 * common._Load.POLL)  # the waiting loop looks every POLL seconds
        progress(4, 4)  # done: the closing line, then the ready line
        return _Loaded([1, 2, 3])

    load = common._Load()
    load.start(compute)
    monkeypatch.setattr(common, "preload", lambda argv: ("some/run", load))
    monkeypatch.setattr(serve, "PROGRESS_EVERY", 0.0)
    serve._preload(common, ["--data", "some/run"])
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "dagmath app: loading some/run before the first visit"
    assert lines[1].startswith("dagmath app: reading: 1/4 files, ")  # the shared reporter
    assert ", ETA " in lines[1]
    assert lines[2].startswith("dagmath app: reading: 4/4 files, ")
    assert lines[2].endswith(", ETA 0:00")
    assert lines[3].startswith("dagmath app: 3 trajectories from 4 files ready in ")
    assert len(lines) == 4


def test_a_stop_mid_load_leaves_at_once(monkeypatch):
    """A server stopped while a load runs exits with its code at once (os._exit): the
    pool's finaliser could otherwise wait for ever on workers killed with the server."""
    import serve

    left = []

    def exit_now(code):
        left.append(code)
        raise SystemExit(code)

    monkeypatch.setattr(serve.os, "_exit", exit_now)
    assert serve._stopped(0, "dagmath-test-load") == 0  # no load running: a normal exit
    assert left == []
    release = threading.Event()
    thread = threading.Thread(target=release.wait, name="dagmath-test-load", daemon=True)
    thread.start()
    try:
        with pytest.raises(SystemExit):
            serve._stopped(None, "dagmath-test-load")
        with pytest.raises(SystemExit):
            serve._stopped(3, "dagmath-test-load")
    finally:
        release.set()
        thread.join()
    assert left == [0, 3]


# -- several sources at once (issue 34 item 8) -------------------------------------------


def test_two_data_sources_show_the_models_of_both(monkeypatch, tmp_path):
    import os

    a = write_logcount(tmp_path / "a", {"model-a": ["perfect", "wrong"]}).resolve()
    b = write_logcount(tmp_path / "b", {"model-b": ["imperfect"]}).resolve()
    source_id, paths, label = common.path_source([str(a), str(b), str(a)])
    assert paths == (str(a), str(b))  # each named once, in the order given
    label, load = common.preload(["--data", str(a), "--data", str(b)])
    corpus = load.wait()
    # model-a's two walks and model-b's one, each source with its own answer key (300)
    assert sorted(corpus.scored["model"]) == ["model-a", "model-a", "model-b"]
    at = app_on(monkeypatch, f"{a}{os.pathsep}{b}")  # DAGMATH_DATA holds both
    assert not at.exception
    assert at.session_state["_corpus"] is corpus  # the same source, the same load
    assert at.sidebar.radio[0].options[0] == "a + b (--data)"  # both, by folder name


def test_dagmath_app_passes_every_data_path(tmp_path):
    from dagmath_viz.cli.app import app_command

    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    command = app_command(argparse.Namespace(extra=[], data=[str(a), str(b)], answers=None))
    assert command[command.index("--") + 1 :] == ["--data", str(a), "--data", str(b)]


def test_dagmath_app_passes_the_sources_folders(tmp_path):
    from dagmath_viz.cli.app import app_command

    scored, runs = tmp_path / "scored.jsonl", tmp_path / "runs"
    scored.write_text(""), runs.mkdir()
    args = argparse.Namespace(extra=[], data=[str(scored)], answers=None, sources=[str(runs)])
    assert app_command(args)[-4:] == ["--data", str(scored), "--sources", str(runs)]
    args.sources = [str(tmp_path / "gone")]
    with pytest.raises(InputError, match="--sources .*gone: no such file or folder"):
        app_command(args)


def test_an_empty_source_says_what_it_looked_for_and_found(monkeypatch, tmp_path):
    (tmp_path / "empty" / "notes").mkdir(parents=True)
    (tmp_path / "empty" / "notes" / "readme.txt").write_text("hello")
    at = app_on(monkeypatch, tmp_path / "empty")
    assert not at.exception
    text = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "No trajectories in" in text and "found 0 data files" in text
    assert "problem_<id>_all_samples.json" in text and "chunks_labeled.json" in text


_STORE_THEN_STOP = """
import sys, threading
sys.path.insert(0, sys.argv[1])
import serve
from dagmath_viz.store.uploads import UploadedFile, UploadStore

store = UploadStore(parent=sys.argv[2], is_alive=lambda session: True)
upload = store.store("session", "slot", [UploadedFile("a.json", b"[]")])
print(upload.folder, flush=True)
if sys.argv[3] == "mid-load":
    threading.Thread(target=threading.Event().wait, name="dagmath-test-load", daemon=True).start()
sys.exit(serve._stopped(0, "dagmath-test-load"))
"""


@pytest.mark.parametrize("when", ["mid-load", "idle"])
def test_a_stop_removes_the_upload_store_from_the_temporary_folder(tmp_path, when):
    """Issue 33 item 13: a server stopped mid-load left its uploads in $TMPDIR (it leaves
    by os._exit, past the exit handler that removed them); stopped idle, the handler runs."""
    proc = subprocess.run(  # the timeout is a hang guard
        [sys.executable, "-c", _STORE_THEN_STOP, str(REPO_ROOT), str(tmp_path), when],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    folder = Path(proc.stdout.split()[0])
    assert folder.is_relative_to(tmp_path) and folder.name.startswith("slot-")
    assert list(tmp_path.iterdir()) == []  # the store's folder went with the process
