"""Streamlit glue shared by the pages: data source, caches, selectors, downloads.

Not a page itself (``app.py`` lists the pages explicitly). Every number shown comes from
``dagmath_viz``; this module only chooses what to load and how to show it.
"""

from __future__ import annotations

import argparse
import functools
import gc
import hashlib
import os
import secrets
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dagmath_viz.analysis import tables
from dagmath_viz.analysis.align import GOLD_MODEL, gold_coverage
from dagmath_viz.bundled import is_bundled_sample
from dagmath_viz.export import csv_bytes
from dagmath_viz.formats.fieldmap import FieldMap
from dagmath_viz.formats.records import FREE_FORM_LEAD
from dagmath_viz.formats.registry import LOOKED_FOR
from dagmath_viz.formats.sources import SourceReader
from dagmath_viz.run.corpus import Corpus, load_corpus
from dagmath_viz.schema import DagMathError, Trajectory
from dagmath_viz.store.uploads import (
    UPLOADER_TYPES,
    StoredUpload,
    UploadedFile,
    UploadStore,
    sweep_interval,
)
from dagmath_viz.text import HIDDEN_CHARACTERS, counted, escape_markdown, plain, reveal_bidi

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DATA = ROOT / "sample_data" / "runs"
MAX_TABLE_ROWS = 2000
TABLE_PAGE = "pages/trajectories.py"
TRAJECTORY_PAGE = "pages/trajectory.py"
#: query parameter telling a reloaded page that its data were uploaded (and are now gone)
UPLOAD_PARAM = "source"


def command_line(argv: list[str] | None = None) -> argparse.Namespace:
    """``--data``/``--answers``/``--map``/``--sources`` after ``--`` on the streamlit command
    line (or env vars); ``argv``: those arguments (default ``sys.argv[1:]``)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--data", action="append")  # repeatable: several sources at once
    parser.add_argument("--sources", action="append")  # where scored records' sources may be
    parser.add_argument("--answers")
    parser.add_argument("--map", dest="field_map")
    args, _ = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    env = os.environ.get("DAGMATH_DATA")
    args.data = args.data or ([p for p in env.split(os.pathsep) if p] if env else None)
    args.answers = args.answers or os.environ.get("DAGMATH_ANSWERS")
    args.field_map = args.field_map or os.environ.get("DAGMATH_MAP")
    env = os.environ.get("DAGMATH_SOURCES")
    args.sources = args.sources or ([p for p in env.split(os.pathsep) if p] if env else [])
    return args


def corpus_for(
    source_id: str,
    paths: tuple[str, ...],
    answers: str | None,
    label: str,
    progress: Callable[[int, int], None] | None = None,
    partial: Callable[[pd.DataFrame, int, int], None] | None = None,
    fields: str | None = None,
) -> Corpus:
    """One loaded corpus per data source, shared read-only by every session.

    A large raw folder is scored by the streaming pool and keeps no steps (see
    ``load_corpus``). The load runs in a thread of its own (:class:`_Load`): a click
    while a big folder is scored reruns the script, which used to stop the load and start
    it again from nothing; now the new run finds it under way and waits for it. While it
    waits, ``progress(done, total)`` (files) drives the sidebar's bar and ``partial(frame,
    done, total)`` sees what is scored so far (:func:`results_so_far`), in every session
    waiting for it. Verdicts are shared with ``dagmath score``'s cache on disk
    (``keep_verdicts``). ``fields``: a field map (``--map``), read as part of the source.
    """
    return start_loading(source_id, paths, answers, label, fields).wait(progress, partial)


def start_loading(
    source_id: str,
    paths: tuple[str, ...],
    answers: str | None,
    label: str,
    fields: str | None = None,
) -> _Load:
    """The data source's :class:`_Load`, started unless it is under way or done (what
    :func:`corpus_for` waits for; :func:`preload` starts it before anyone visits).

    Raises:
        DagMathError: ``fields`` is not a field map.
    """
    field_map = FieldMap.parse(fields) if fields and fields.strip() else None
    if field_map is not None:  # the same files read through another map: another source
        source_id = f"{source_id}|map:{field_map.pairs}"
    load = _corpus_slot(source_id, paths, answers, label)
    load.start(
        lambda show, so_far: _frozen(
            load_corpus(
                list(paths), answers=answers, label=label, progress=show,
                keep_verdicts=True, partial=so_far, fields=field_map,
            )
        )
    )  # fmt: skip
    return load


def path_source(raw: str | list[str] | None) -> tuple[str, tuple[str, ...], str]:
    """``(source_id, paths, label)`` of the ``--data`` path(s) ``raw``, or of the bundled
    sample data when None: the key its corpus is loaded and cached under. Several paths
    load as one source (their models side by side), each named once.

    Raises:
        DagMathError: one of ``raw`` names no file or folder.
    """
    if raw is None:
        return f"path:{SAMPLE_DATA}", (str(SAMPLE_DATA),), str(SAMPLE_DATA)
    raws = [raw] if isinstance(raw, str) else list(raw)
    paths = tuple(dict.fromkeys(str(_resolve_data_path(r)) for r in raws))
    return "path:" + "|".join(paths), paths, " + ".join(paths)


def preload(argv: list[str]) -> tuple[str, _Load] | None:
    """Start loading the data source a first visit shows (``--data`` in ``argv``, the app's
    own arguments; else the bundled sample data), before anyone visits: run by
    ``serve.py`` in the server process as it starts, so a large folder is being scored
    (and a scored run's copy read) while the browser is still being opened. Returns at
    once, with the source's label and its load (None: a path that does not exist, left
    for the page to report)."""
    args = command_line(argv)
    try:
        source_id, paths, label = path_source(args.data)
        return label, start_loading(source_id, paths, args.answers, label, args.field_map)
    except DagMathError:
        return None  # the page reports it


def loaded_summary(corpus: Corpus) -> str:
    """What a loaded corpus holds, as "4,430 trajectories from 465 files" (the sidebar's
    caption, and serve.py's line in the terminal)."""
    trajectories = counted(len(corpus), "trajectory", "trajectories")
    return f"{trajectories} from {counted(corpus.files_read, 'file')}"


def _frozen(corpus: Corpus) -> Corpus:
    """``corpus``, with every object alive now left out of later cyclic collections.

    Streamlit runs ``gc.collect()`` after every script run. A loaded corpus is hundreds of
    thousands of long-lived objects (the lists of ``dead_ends`` and ``errors``, one per
    record), walked each time: ~0.06 s at 100,000 records on a quiet machine, ~0.5 s under
    load, ten times that at a million, on every click. Frozen, they are skipped (reference
    counting still frees them when the corpus goes); this load's own garbage is collected
    first, so none of it is kept.
    """
    gc.collect()
    gc.freeze()
    return corpus


class _Once:
    """A value computed on the first :meth:`get` (one caller computes, the others wait).

    It lives in an ``st.cache_resource`` entry but is computed outside the cached function:
    Streamlit records the elements a cached function draws to replay them on every cache
    hit, and a progress bar drawn into the page's own slot cannot be replayed (it raises
    CacheReplayClosureError). A failed computation is tried again by the next caller.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done = False
        self._value: Any = None

    def get(self, compute: Callable[[], Any]) -> Any:
        with self._lock:
            if not self._done:
                self._value = compute()
                self._done = True
            return self._value


#: The name of the thread a data source loads in (:class:`_Load`).
LOAD_THREAD = "dagmath-load"


class _Load:
    """A corpus loaded once, in a thread of its own, for every session that asks.

    The thread never draws (it has no script context); it leaves the files scored and the
    latest frame of what is scored so far here, and :meth:`wait`, in a script run, draws
    them until the load is done. A script run stopped meanwhile (a click, a closed tab)
    leaves the load running. A failed load is tried again by the next :meth:`start`.
    """

    #: Seconds between two looks at the load from a waiting script run.
    POLL = 0.2
    #: Least seconds between two drawings of the progress bar. Each one is a message the
    #: browser draws, and the browser shares the machine with the scoring: over 10 s, a
    #: bar drawn every 0.2 s cost headless Chromium 1.3 CPU s more than a still page, one
    #: drawn every second 0.6 s.
    PROGRESS_EVERY = 1.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._done = threading.Event()
        self._value: Any = None
        self._error: BaseException | None = None
        self._progress: tuple[int, int] | None = None
        self._so_far: tuple[pd.DataFrame, int, int] | None = None
        self._started = 0.0

    def start(self, compute: Callable[[Callable, Callable], Any]) -> None:
        """Start ``compute(progress, partial)`` unless it is running or has succeeded."""
        with self._lock:
            if self._thread is not None and not (self._done.is_set() and self._error):
                return
            self._done.clear()
            self._error = self._progress = self._so_far = None
            self._started = time.monotonic()
            self._thread = threading.Thread(
                target=self._run, args=(compute,), name=LOAD_THREAD, daemon=True
            )
            self._thread.start()

    def _run(self, compute: Callable[[Callable, Callable], Any]) -> None:
        try:
            self._value = compute(self._note_progress, self._note_so_far)
        except BaseException as exc:  # raised again in every waiting script run
            self._error = exc
        finally:
            self._done.set()

    def _note_progress(self, done: int, total: int) -> None:
        self._progress = (done, total)

    def _note_so_far(self, frame: pd.DataFrame, done: int, total: int) -> None:
        self._so_far = (frame, done, total)

    def wait(
        self,
        progress: Callable[[int, int], None] | None = None,
        partial: Callable[[pd.DataFrame, int, int], None] | None = None,
    ) -> Any:
        """The loaded value, drawing the load's progress meanwhile, and its results so far
        once it has run :data:`SO_FAR_AFTER` seconds (a quick load never flashes them);
        raises what the load raised."""
        shown_progress = shown_so_far = None
        drawn_at = 0.0
        while True:
            done = self._done.wait(self.POLL)
            now = self._progress
            due = done or time.monotonic() - drawn_at >= self.PROGRESS_EVERY
            if progress and now is not None and now != shown_progress and due:
                progress(*now)
                shown_progress, drawn_at = now, time.monotonic()
            so_far = self._so_far
            if time.monotonic() - self._started < SO_FAR_AFTER:
                so_far = None
            if partial and not done and so_far is not None and so_far is not shown_so_far:
                partial(*so_far)
                shown_so_far = so_far
            if done:
                break
        if self._error is not None:
            raise self._error
        return self._value


@st.cache_resource(show_spinner=False, max_entries=4)
def _corpus_slot(source_id: str, paths: tuple[str, ...], answers: str | None, label: str) -> _Load:
    return _Load()


def progress_bar(what: str) -> tuple[Callable[[int, int], None], Any]:
    """A ``progress(done, total)`` callback drawing "what: done of total" into a bar, and
    the bar's slot (``.empty()`` it when done)."""
    slot = st.empty()

    def show(done: int, total: int) -> None:
        share = done / total if total else 1.0
        slot.progress(min(max(share, 0.0), 1.0), text=f"{what}: {done:,} of {total:,}")

    return show, slot


#: Seconds a load runs before the page shows the results scored so far (:class:`_Load`):
#: a folder that scores quicker than this opens without them flashing by.
SO_FAR_AFTER = 2.0


def results_so_far(label: str, slot: Any) -> Callable[[pd.DataFrame, int, int], None]:
    """A ``partial(frame, done, total)`` for :func:`load_corpus` drawing into ``slot`` (an
    ``st.empty()``; empty it when the load is done) the leaderboard of what is scored so
    far (point estimates: the intervals come with the Overview)."""

    def show(so_far: pd.DataFrame, done: int, total: int) -> None:
        if so_far.empty:
            return
        board = tables.leaderboard(so_far, n_boot=0)
        shown = tables.leaderboard_display(board)
        shown.columns = [c.replace(" (95% CI)", "") for c in shown.columns]
        with slot.container():
            st.subheader("Results so far")
            st.caption(
                escape_markdown(
                    f"Scoring {label}: {done:,} of {total:,} files, {len(so_far):,} "
                    "trajectories so far, taken from every model and data set in turn. "
                    "These numbers change until every file is scored; the Overview then opens."
                )
            )
            # every row in view (35 px a row and the header): a leaderboard is a few dozen
            height = min(35 * (len(shown) + 1) + 3, 800)
            st.dataframe(visible(shown), hide_index=True, width="stretch", height=height)

    return show


def _resolve_data_path(raw: str) -> Path:
    path = Path(raw).expanduser().resolve()
    if not path.exists():
        raise DagMathError(f"--data {raw}: no such file or folder")
    return path


def _session_alive(session_id: str) -> bool:
    """Is this Streamlit session still connected? (True when there is no server runtime.)"""
    from streamlit import runtime

    return not runtime.exists() or runtime.get_instance().is_active_session(session_id)


def upload_store() -> UploadStore:
    """The process's one upload store: a private 0700 folder, removed at exit. A closed
    tab's uploads go at the next background sweep, which asks the runtime every
    ``$DAGMATH_UPLOAD_SWEEP_SECONDS`` (default 60); a bad value is the page's one error."""
    try:
        every = sweep_interval()
    except DagMathError as exc:
        st.error(escape_markdown(str(exc)))
        st.stop()
    return _upload_store(every)


@st.cache_resource(show_spinner=False)
def _upload_store(sweep_every: float) -> UploadStore:
    return UploadStore(is_alive=_session_alive, sweep_every=sweep_every)


def stored_upload(files, slot: str) -> StoredUpload:
    """One uploader's files stored for this session (re-stored only when they change).

    Every uploader of every page comes here. The session's uploads are deleted when it
    disconnects, when its state is dropped (the lease below), or after an hour unused;
    nothing is shared between sessions.
    """
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    store = upload_store()
    if "_upload_session" not in st.session_state:
        ctx = get_script_run_ctx()
        session = ctx.session_id if ctx is not None else secrets.token_hex(16)
        st.session_state["_upload_session"] = session
        st.session_state["_upload_lease"] = store.lease(session)
    uploads = [UploadedFile(f.name, f.getvalue()) for f in files]
    return store.store(st.session_state["_upload_session"], slot, uploads)


def _upload_source(files) -> tuple[str, tuple[str, ...], list]:
    upload = stored_upload(files, "data")
    return upload.source_id, (str(upload.folder),), list(upload.issues)


def _source_label(option: str) -> str:
    """How a data-source option reads in the sidebar: the ``--data`` folders by their names
    (their whole paths are the radio's tooltip), the others as they are."""
    if option.startswith("--data "):
        names = [Path(r.rstrip("/\\")).name or r for r in command_line().data or ()]
        return f"{' + '.join(names) or option} (--data)"
    return option


def sidebar_data_source() -> Corpus | None:
    """The data-source chooser; loads (once per source) and returns the corpus."""
    args = command_line()
    options = ["Bundled sample data"]
    if args.data:
        options.insert(0, "--data " + " ".join(args.data))
    options.append("Uploaded files")
    # A page reloaded (or a link opened) while it showed uploads: the uploads belonged to
    # the old browser session and are gone; say so instead of quietly showing other data.
    uploads_gone = "data_source" not in st.session_state and (
        st.query_params.get(UPLOAD_PARAM) == "upload"
    )
    if uploads_gone:
        st.session_state["data_source"] = "Uploaded files"
    so_far_slot = st.empty()  # the main area's top, for the results scored so far
    with st.sidebar:
        st.header("Data source")
        choice = st.radio(
            "Load",
            options,
            key="data_source",
            label_visibility="collapsed",
            format_func=_source_label,
            help=" ".join(f"--data {d}" for d in args.data) if args.data else None,
        )
        answers = args.answers
        map_note: Any = None  # under the uploads' field map: its warnings, once loaded
        if choice == "Uploaded files":
            files = st.file_uploader(
                "JSON, JSONL, Parquet, .jsonl.gz, .ndjson, inspect_ai .eval, answers CSV, "
                "or a zip of a results folder",
                type=list(UPLOADER_TYPES),
                accept_multiple_files=True,
            )
            if not files:
                if uploads_gone or st.session_state.get("_uploads_were_here"):
                    st.warning(
                        "The uploaded files are gone: uploads live only as long as the "
                        "browser session that sent them, and a reload starts a new one. "
                        "Upload them again, or choose another data source."
                    )
                else:
                    st.info("Upload trajectories to explore them.")
                return None
            source_id, paths, extra = _upload_source(files)
            label = f"{len(files)} uploaded file(s)"
            answers = None
            fields = st.text_input(
                "Field map (optional)",
                key="upload_field_map",
                placeholder="problem_id=unique_id,problem_text=problem,answer=answer",
                help="Our field = the file's column, for records whose fields are named "
                "otherwise (the README's 'Bring your own data').",
            )
            map_note = st.empty()
            st.session_state["_uploads_were_here"] = True
            st.query_params[UPLOAD_PARAM] = "upload"
        else:
            if st.query_params.get(UPLOAD_PARAM) == "upload":
                del st.query_params[UPLOAD_PARAM]
            st.session_state.pop("_uploads_were_here", None)
            extra = []
            fields = args.field_map
            try:
                source_id, paths, label = path_source(
                    args.data if choice.startswith("--data") else None
                )
            except DagMathError as exc:
                st.error(escape_markdown(str(exc)))
                return None
        show_progress, bar = progress_bar(escape_markdown(f"Scoring {label}, files"))
        show_so_far = results_so_far(label, so_far_slot)
        with st.spinner(f"Loading and scoring {label} …"):
            try:
                corpus = corpus_for(
                    source_id, paths, answers, label, show_progress, show_so_far, fields
                )
            except DagMathError as exc:
                st.error(escape_markdown(f"Could not load {label}: {exc}"))
                return None
            finally:
                bar.empty()
                so_far_slot.empty()
        st.session_state["source_id"] = source_id
        st.session_state["source_paths"] = paths
        st.session_state["extra_issues"] = extra
        if map_note is not None and fields and fields.strip():
            with map_note.container():  # one per mapped field, as `dagmath score` says it
                for issue in FieldMap.parse(fields).warnings_in(corpus.issues):
                    st.warning(escape_markdown(issue.message))
        st.caption(loaded_summary(corpus))
        st.button(
            "Reload from disk",
            help="Read this data source's files again (other sources stay cached)",
            on_click=_reload,
            args=(source_id, paths, answers, label),
        )
    if len(corpus) == 0:
        st.warning(escape_markdown(empty_source_text(label, corpus)))
    return corpus


def empty_source_text(label: str, corpus: Corpus) -> str:
    """Why a source loaded nothing: what was looked for, and what was found instead (the
    files read and the first issues, each naming its file); for files of free-form
    replies, which were recognised, the command that makes them into trajectories."""
    found = f"found {counted(corpus.files_read, 'data file')}"
    issues = list(corpus.issues)
    free = [i for i in issues if i.message.startswith(FREE_FORM_LEAD)]
    if free:  # the files were recognised: their replies only lack steps
        files = ", ".join(plain(i.file, 160) for i in free[:3])
        files += f" and {counted(len(free) - 3, 'other file')}" if len(free) > 3 else ""
        others = len(issues) - len(free)
        rest = f" ({counted(others, 'other load problem')} listed above.)" if others else ""
        where = "its replies" if [i.file for i in free] == [label] else f"the replies in {files}"
        return (
            f"No DAG-MATH trajectories in {label}: {where} are free-form "
            "chains of thought, with no numbered steps and no cited parents. Make them into "
            "trajectories with `dagmath depends FILE --base-url URL --model NAME -o OUT_DIR` "
            "(a model names each step's parents; README: 'Free-form chains of thought into "
            f"DAGs'), then open OUT_DIR.{rest}"
        )
    if issues:
        shown = "; ".join(plain(str(i), 160) for i in issues[:3])
        found += f" and {counted(len(issues), 'problem')}: {shown}" + (
            " …" if len(issues) > 3 else ""
        )
    return f"No trajectories in {label}. Looked for {LOOKED_FOR}; {found}."


def nothing_loaded(corpus: Corpus) -> None:
    """A page's note for a source that holds no trajectories (the sidebar says why)."""
    label = " + ".join(st.session_state.get("source_paths", ())) or "this data source"
    st.info(escape_markdown(empty_source_text(label, corpus)), icon=":material/folder_off:")


def _reload(source_id: str, paths: tuple[str, ...], answers: str | None, label: str) -> None:
    """Forget one data source's cached corpus and tables (other users' sources stay)."""
    _corpus_slot.clear(source_id, paths, answers, label)
    clear_derived(source_id)
    source_reader.clear(source_id, paths)
    gc.unfreeze()  # what the old corpus leaves in cycles can go; the next load freezes again


def load_problems_panel(corpus: Corpus) -> None:
    """A collapsible panel listing every load and scoring problem with its file and reason."""
    st.session_state["_corpus"] = corpus
    table = corpus.issue_table()
    extra = st.session_state.get("extra_issues") or []
    if extra:
        more = pd.DataFrame(
            [
                {"file": i.file, "where": i.location, "severity": i.severity, "problem": i.message}
                for i in extra
            ]
        )
        table = pd.concat([more, table], ignore_index=True)
    if table.empty:
        return
    lost = int((table["severity"] != "illegal").sum())
    with st.expander(_problems_label(len(table), lost, corpus.n_illegal()), expanded=False):
        if lost == 0:
            st.caption(_ILLEGAL_NOTE)
            if is_bundled_sample([corpus.label]):
                st.caption(_BUNDLED_ILLEGAL_NOTE)
        st.dataframe(visible(table.head(MAX_TABLE_ROWS)), hide_index=True, width="stretch")
        if len(table) > MAX_TABLE_ROWS:
            st.caption(f"Showing {MAX_TABLE_ROWS:,} of {len(table):,}; download for all.")
        download(table, "load_problems.csv", "Download the problems (CSV)")


_ILLEGAL_NOTE = (
    "Every file was read. Each row is a structural fault of a trajectory (a parent that is "
    "not an earlier step, a cycle, a duplicate id): such a trajectory is kept and scored as "
    "class *illegal*, as DEFINITIONS.md §1 says, and the Trajectory page shows its faults."
)
_BUNDLED_ILLEGAL_NOTE = (
    "The bundled sample holds these few illegal trajectories on purpose, so that the "
    "pages have faults to show; nothing is wrong with the data or the app."
)


def _problems_label(n_rows: int, n_lost: int, n_illegal: int) -> str:
    """The panel's title: a warning when something could not be read, else a note that
    says the rows are illegal trajectories, scored as such."""
    if n_lost:
        return (
            f":material/warning: {n_rows:,} load or scoring problems "
            "(everything readable was still loaded)"
        )
    return (
        f":material/info: {n_rows:,} load or scoring problems: "
        f"{counted(n_illegal, 'illegal trajectory', 'illegal trajectories')}, scored as such "
        "(everything readable was still loaded)"
    )


def corpus() -> Corpus:
    """The corpus loaded by app.py for this script run."""
    _rerun_through_app_if_alone()
    return st.session_state["_corpus"]


def _rerun_through_app_if_alone() -> None:
    """Run app.py (the frame) when Streamlit ran a page without it.

    Streamlit 1.67 treats a ``pages/`` folder beside the main script as its legacy
    multipage mode until ``st.navigation`` has run once in the server process, so the very
    first visit to a deep link (``/trajectory?...``) on a fresh server executes the page
    alone (AppTest even resets that mode before every run). Switching it off and rerunning
    sends the run through app.py, whose ``st.navigation`` then opens the page the URL names.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory or "_corpus" not in st.session_state:
        PagesManager.uses_pages_directory = False
        st.rerun()


@st.cache_resource(show_spinner=False, max_entries=64)
def cached_derived(source_id: str, name: str, _fn: Callable[[], Any]) -> Any:
    """A derived table, cached by (data source, name) — never by hashing a frame."""
    return _fn()


_DERIVED: set[tuple[str, str]] = set()
_DERIVED_LOCK = threading.Lock()


def derived(name: str, fn: Callable[[], Any], persist: bool = False) -> Any:
    """``fn()`` cached for the current data source under ``name``.

    ``persist``: also kept on disk between server starts (a frame or a figure that
    depends only on the data source's frame; :mod:`dagmath_viz.store.views`, which keeps
    only what one scored JSONL file with a columnar copy, or a raw folder with its run
    copy, gives).
    """
    source_id = st.session_state.get("source_id", "")
    with _DERIVED_LOCK:
        _DERIVED.add((source_id, name))
    if persist:
        fn = _persisted(name, fn, tuple(st.session_state.get("source_paths", ())))
    return cached_derived(source_id, name, fn)


def _persisted(name: str, fn: Callable[[], Any], paths: tuple[str, ...]) -> Callable[[], Any]:
    """``fn``, read from the derived-value cache when a fresh server has it there."""

    def compute() -> Any:
        from dagmath_viz.store import keys
        from dagmath_viz.store import views as viewcache

        code = keys.code_digest(ROOT / "pages", ROOT / "explorer")
        run_copy = getattr(st.session_state.get("_corpus"), "run_copy", None)
        where = viewcache.source_key(paths, command_line().answers, code, run_copy)
        if where is None:
            return fn()
        kept = viewcache.read(where[0], name)
        if kept is not None:
            return kept
        value = fn()
        viewcache.write(where[0], name, value)
        return value

    return compute


def derived_with_progress(
    name: str, fn: Callable[[Callable[[int, int], None]], Any], what: str
) -> Any:
    """``fn(progress)`` cached like :func:`derived`, a bar showing ``what`` while it runs
    (for the slow reads a streamed raw folder leaves to the pages)."""
    source_id = st.session_state.get("source_id", "")
    with _DERIVED_LOCK:
        _DERIVED.add((source_id, name))
    slot = cached_derived(source_id, name, _Once)
    show, bar = progress_bar(what)
    try:
        return slot.get(lambda: fn(show))
    finally:
        bar.empty()


def clear_derived(source_id: str) -> None:
    """Forget the derived tables of one data source (and no other)."""
    with _DERIVED_LOCK:
        names = [n for s, n in _DERIVED if s == source_id]
        _DERIVED.difference_update((source_id, n) for n in names)
    for name in names:
        cached_derived.clear(source_id, name, None)


def source_roots() -> tuple[str, ...]:
    """The folders a scored record's ``source`` may be read from: the data source's own
    paths, and the ``--sources`` folders (a scored file kept apart from what it scored)."""
    return (*st.session_state.get("source_paths", ()), *command_line().sources)


@st.cache_resource(show_spinner=False, max_entries=8)
def source_reader(source_id: str, paths: tuple[str, ...]) -> SourceReader:
    """Reads scored records' sources back, a few files at a time, for one data source."""
    return SourceReader(roots=paths)


def trajectory_of(corpus: Corpus, row: int) -> tuple[Trajectory | None, str | None]:
    """The trajectory behind a row: loaded, or read back from a scored record's source.

    Returns ``(trajectory, None)`` or ``(None, why not)``, the reason naming the missing path.
    """
    traj = corpus.trajectory(row)
    if traj is not None:
        return traj, None
    rec = corpus.scored.iloc[row]
    reader = source_reader(st.session_state.get("source_id", ""), source_roots())
    key = (str(rec["model"]), str(rec["dataset"]), str(rec["problem_id"]), int(rec["sample_id"]))
    return reader.read(rec["source"] or "", key)


def gold_trajectory_of(corpus: Corpus, dataset: str, problem: str) -> Trajectory | None:
    """The gold DAG of a problem when one is loaded beside (a trajectory of model ``gold``):
    the one of the same dataset, else the only one of that problem id (gold files sit in a
    folder of their own); as :func:`dagmath_viz.analysis.align.gold_for` chooses."""
    df = corpus.scored
    rows = df[(df["model"] == GOLD_MODEL) & (df["problem_id"].astype(str) == str(problem))]
    same = rows[rows["dataset"] == dataset]
    pick = same if not same.empty else rows
    if pick.empty or (same.empty and len(pick) > 1):
        return None
    r = pick.iloc[0]
    row = corpus.row_of(GOLD_MODEL, r["dataset"], r["problem_id"], r["sample_id"])
    return None if row is None else trajectory_of(corpus, row)[0]


def gold_summary(traj: Trajectory, gold: Trajectory) -> str:
    """One line: how much of the gold DAG ``traj`` states (README, *gold coverage*)."""
    g = gold_coverage([s.text for s in traj.steps], [s.text for s in gold.steps])
    skipped = ", ".join(f"S{gold.steps[k].step_id}" for k in g.skipped[:12])
    more = " …" if len(g.skipped) > 12 else ""
    return (
        f"states {len(g.stated)} of {g.n_gold} gold nodes "
        f"({tables.format_percent(g.coverage)}), {len(g.extra)} extra steps, "
        f"{len(g.skipped)} gold nodes skipped" + (f" ({skipped}{more})" if skipped else "")
    )


def model_colours() -> dict[str, str]:
    """``{model: colour}`` for the loaded data source: the same on every page."""
    from dagmath_viz.draw.figures import assign_model_colours

    models = st.session_state["_corpus"].scored["model"].unique()
    return derived("model_colours", lambda: assign_model_colours(models))


def visible(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` as a table shows it: bidi controls and invisible characters in its text cells
    become tags (:func:`dagmath_viz.text.reveal_bidi`), so ``good-model`` and
    ``good-model\u200b`` are two rows that look different. Same rows, same order (a
    selection's row numbers still index ``df``); only columns holding such a character are
    copied. Downloads keep the data as read."""
    out = df
    for col in df.columns:
        values = df[col]
        if not (values.dtype == object or pd.api.types.is_string_dtype(values.dtype)):
            continue
        texts = values.map(lambda v: isinstance(v, str) and HIDDEN_CHARACTERS.search(v) is not None)
        if not texts.any():
            continue
        if out is df:
            out = df.copy()
        out[col] = values.map(lambda v: reveal_bidi(v) if isinstance(v, str) else v)
    return out


def shown_option(value: Any) -> str:
    """A select box's label for ``value``: its text with hidden characters tagged."""
    return reveal_bidi(str(value))


def download(df: pd.DataFrame, file_name: str, label: str = "Download CSV") -> None:
    """A CSV download button for a table (text that looks like a formula is neutralised).

    A click downloads and nothing else (``on_click="ignore"``): by default it reruns the
    whole app, which on a large run redraws every table, and that rerun races the
    browser's fetch of the file (a browser test under load once waited 30 s for a
    download that never came). The CSV is written when the button is clicked, not on
    every run of the page (100,000 rows of the Table page: ~0.5 s each time), from a
    copy taken now (no data copied: pandas copies on write), so what the page does to
    ``df`` afterwards is not in it."""
    st.download_button(
        label,
        functools.partial(csv_bytes, df.copy(deep=False)),
        file_name=file_name,
        mime="text/csv",
        key=f"dl_{file_name}",
        on_click="ignore",
    )


_NOTHING = object()


def short_digest(values: list) -> str:
    """A short stable digest of some values (for widget keys that depend on them)."""
    return hashlib.blake2b(repr([str(v) for v in values]).encode(), digest_size=6).hexdigest()


_digest = short_digest


def select(
    label: str, options: list, key: str, param: str | None = None, *, where: str = "", **kw
) -> Any:
    """A selectbox that always shows the value the page uses; deep links fill it.

    The chosen value lives in ``st.session_state[key]``; the widget's own key changes with
    its options, so when an earlier choice changes them the box is drawn afresh showing
    the value returned (a keyed selectbox keeps showing a stale value otherwise).
    On a page's first run, URL parameter ``param`` picks the value. When it names nothing
    that exists, the page says so (naming it, and ``where`` it was looked for) and stops,
    showing the box empty: nothing else is opened in its place.
    """
    if not options:
        return None
    missing_key = f"{key}__missing"
    if param and key not in st.session_state:
        wanted = st.query_params.get(param)
        if wanted is not None:
            match = next((o for o in options if str(o) == wanted), _NOTHING)
            if match is _NOTHING:
                st.session_state[missing_key] = (label, wanted, where)
                st.session_state[key] = None
            else:
                st.session_state[key] = match
    given = kw.pop("format_func", str)
    kw["format_func"] = lambda o: shown_option(given(o))  # hidden characters shown as tags
    widget = f"{key}__w{st.session_state.get(f'{key}__n', 0)}_{_digest(options)}"
    current = st.session_state.get(key, _NOTHING)
    if widget in st.session_state:
        value = st.selectbox(label, options, key=widget, **kw)
    else:
        if current is not _NOTHING and current in options:
            index = options.index(current)
        else:
            index = None if st.session_state.get(missing_key) else 0
        value = st.selectbox(label, options, index=index, key=widget, **kw)
    if value is None and st.session_state.get(missing_key):
        name, wanted, place = st.session_state[missing_key]
        st.error(
            escape_markdown(
                f"{name} “{wanted}” does not exist{' ' + place if place else ''}: "
                "the link is stale or mistyped. Choose one above."
            ),
            icon=":material/link_off:",
        )
        st.stop()
    st.session_state.pop(missing_key, None)
    st.session_state[key] = value
    return value


def set_choice(key: str, value: Any) -> None:
    """Set what a :func:`select` box shows (for buttons and links; call before it draws)."""
    st.session_state[key] = value
    st.session_state[f"{key}__n"] = st.session_state.get(f"{key}__n", 0) + 1
    st.session_state.pop(f"{key}__missing", None)


def open_trajectory(
    model: str,
    dataset: str,
    problem: str,
    sample: int,
    step: Any | None = None,
    find: str | None = None,
) -> None:
    """Switch to the Trajectory view of one trajectory (optionally at one step, or at the
    first step that holds ``find``, with find-next)."""
    set_choice("traj_model", model)
    set_choice("traj_dataset", dataset)
    set_choice("traj_problem", str(problem))
    set_choice("traj_sample", int(sample))
    st.session_state.pop("traj_classes", None)  # show every class: the target's included
    st.session_state.pop("traj_step_page", None)
    st.session_state.pop("traj_at", None)  # arriving: the link's step= and find= hold
    params = {"model": model, "dataset": dataset, "problem": str(problem), "sample": str(sample)}
    if step is not None:
        params["step"] = str(step)
    if find and find.strip():
        params["find"] = find.strip()
    st.switch_page(TRAJECTORY_PAGE, query_params=params)


def open_table(**filters: Any) -> None:
    """Switch to the trajectory table, filtered (``models=[...]``, ``problems=[...]``, …)."""
    params: dict[str, Any] = {}
    for name, param in (("models", "m"), ("datasets", "d"), ("classes", "cls"), ("correct", "ans")):
        st.session_state[f"tt_{name}"] = list(filters.get(name) or [])
        if filters.get(name):
            params[param] = [str(v) for v in filters[name]]
    st.session_state["tt_problems"] = ", ".join(map(str, filters.get("problems") or []))
    st.session_state["tt_query"] = filters.get("query", "")
    for key, param in (("tt_problems", "p"), ("tt_query", "q")):
        if st.session_state[key]:
            params[param] = st.session_state[key]
    # the other filters start afresh: the page's memory would bring them back
    for key in ("tt_state", "tt_min_steps", "tt_max_steps", "tt_sort", "tt_desc"):
        st.session_state.pop(key, None)
    st.switch_page(TABLE_PAGE, query_params=params)  # the address holds the filters
