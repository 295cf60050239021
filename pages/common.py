"""Streamlit glue shared by the pages: data source, caches, selectors, downloads.

Not a page itself (``app.py`` lists the pages explicitly). Every number shown comes from
``dagmath_viz``; this module only chooses what to load and how to show it.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dagmath_viz.corpus import Corpus, load_corpus
from dagmath_viz.schema import DagMathError
from dagmath_viz.text import escape_markdown
from dagmath_viz.uploads import StoredUpload, UploadedFile, UploadStore

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_DATA = ROOT / "sample_data" / "runs"
MAX_TABLE_ROWS = 2000


def command_line() -> argparse.Namespace:
    """``--data``/``--answers`` after ``--`` on the streamlit command line (or env vars)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--data")
    parser.add_argument("--answers")
    args, _ = parser.parse_known_args(sys.argv[1:])
    args.data = args.data or os.environ.get("DAGMATH_DATA")
    args.answers = args.answers or os.environ.get("DAGMATH_ANSWERS")
    return args


@st.cache_resource(show_spinner=False, max_entries=4)
def corpus_for(source_id: str, paths: tuple[str, ...], answers: str | None, label: str) -> Corpus:
    """One loaded corpus per data source, shared read-only by every session."""
    return load_corpus(list(paths), answers=answers, label=label)


def _resolve_data_path(raw: str) -> Path:
    path = Path(raw).expanduser().resolve()
    if not path.exists():
        raise DagMathError(f"--data {raw}: no such file or folder")
    return path


def _session_alive(session_id: str) -> bool:
    """Is this Streamlit session still connected? (True when there is no server runtime.)"""
    from streamlit import runtime

    return not runtime.exists() or runtime.get_instance().is_active_session(session_id)


@st.cache_resource(show_spinner=False)
def upload_store() -> UploadStore:
    """The process's one upload store: a private 0700 folder, removed at exit; a closed
    tab's uploads go within a minute (a background sweep asks the runtime)."""
    return UploadStore(is_alive=_session_alive, sweep_every=60.0)


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


def sidebar_data_source() -> Corpus | None:
    """The data-source chooser; loads (once per source) and returns the corpus."""
    args = command_line()
    options = ["Bundled sample data"]
    if args.data:
        options.insert(0, f"--data {args.data}")
    options.append("Uploaded files")
    with st.sidebar:
        st.header("Data source")
        choice = st.radio("Load", options, key="data_source", label_visibility="collapsed")
        answers = args.answers
        if choice == "Uploaded files":
            files = st.file_uploader(
                "JSON, JSONL, answers CSV, or a zip of a results folder",
                type=["json", "jsonl", "csv", "zip"],
                accept_multiple_files=True,
            )
            if not files:
                st.info("Upload trajectories to explore them.")
                return None
            source_id, paths, extra = _upload_source(files)
            label = f"{len(files)} uploaded file(s)"
            answers = None
        else:
            extra = []
            try:
                path = _resolve_data_path(args.data) if choice.startswith("--data") else SAMPLE_DATA
            except DagMathError as exc:
                st.error(escape_markdown(str(exc)))
                return None
            source_id, paths, label = f"path:{path}", (str(path),), str(path)
        with st.spinner(f"Loading and scoring {label} …"):
            try:
                corpus = corpus_for(source_id, paths, answers, label)
            except DagMathError as exc:
                st.error(escape_markdown(f"Could not load {label}: {exc}"))
                return None
        st.session_state["source_id"] = source_id
        st.session_state["extra_issues"] = extra
        st.caption(f"{len(corpus):,} trajectories from {corpus.files_read:,} files")
        if st.button("Reload from disk", help="Clear the cache and read the files again"):
            corpus_for.clear()
            cached_derived.clear()
            st.rerun()
    if len(corpus) == 0:
        st.warning(escape_markdown(f"No trajectories found in {label}."))
    return corpus


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
    with st.expander(
        f":material/warning: {len(table):,} load or scoring problems "
        "(everything readable was still loaded)",
        expanded=False,
    ):
        st.dataframe(table.head(MAX_TABLE_ROWS), hide_index=True, width="stretch")
        if len(table) > MAX_TABLE_ROWS:
            st.caption(f"Showing {MAX_TABLE_ROWS:,} of {len(table):,}; download for all.")
        download(table, "load_problems.csv", "Download the problems (CSV)")


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


def derived(name: str, fn: Callable[[], Any]) -> Any:
    """``fn()`` cached for the current data source under ``name``."""
    return cached_derived(st.session_state.get("source_id", ""), name, fn)


def download(df: pd.DataFrame, file_name: str, label: str = "Download CSV") -> None:
    """A CSV download button for a table."""
    st.download_button(
        label,
        df.to_csv(index=False).encode(),
        file_name=file_name,
        mime="text/csv",
        key=f"dl_{file_name}",
    )


def select(label: str, options: list, key: str, param: str | None = None, **kw) -> Any:
    """A selectbox whose default can come from a URL query parameter (deep links)."""
    if not options:
        return None
    if param and key not in st.session_state:
        wanted = st.query_params.get(param)
        if wanted is not None:
            for opt in options:
                if str(opt) == wanted:
                    st.session_state[key] = opt
    if key in st.session_state and st.session_state[key] not in options:
        del st.session_state[key]
    return st.selectbox(label, options, key=key, **kw)
