"""Sharing and labelling in the app: the HTML download and the label controls.

Not a page. The Trajectory page calls :func:`trajectory_tools` (a "Download as HTML" button
and the label panel); Compare calls :func:`comparison_download` and Overview
:func:`report_download` (the same files as ``dagmath export-html --compare`` and
``--report``); the Trajectories and Dead ends pages call :func:`label_filter`, which adds a
``labels`` column (so labels export with the CSV) and a filter by label.

The files are written when a button is clicked (a callable, ``on_click="ignore"``): a run
report costs a second or more, and a page run should not pay it on every visit.

Where labels live: ``$DAGMATH_LABELS`` when set, else the sidecar beside the data source
(:func:`dagmath_viz.store.labels.sidecar_path`). They are read again whenever the file
changes, so a label made here survives a restart and shows on every page.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dagmath_viz.schema import DagMathError, LoadIssue, Trajectory
from dagmath_viz.store import labels as lb
from dagmath_viz.text import escape_markdown, plain
from explorer import common

#: Environment variable naming the label file (else the sidecar beside the data).
LABELS_ENV = "DAGMATH_LABELS"
#: Label names offered before the file holds any of the user's own.
SUGGESTED = ("verification", "wrong step", "interesting")


def labels_path() -> Path | None:
    """The label file of the loaded data source, or None when there is no source."""
    named = os.environ.get(LABELS_ENV)
    if named:
        return Path(named)
    paths = st.session_state.get("source_paths") or ()
    return lb.sidecar_path(paths[0]) if paths else None


def current_labels() -> lb.LabelFile:
    """The labels standing in :func:`labels_path` (empty when it has none yet)."""
    path = labels_path()
    if path is None:
        return lb.LabelFile("")
    try:
        stat = path.stat()
    except OSError:
        return lb.LabelFile(str(path))
    return _read(str(path), stat.st_mtime_ns, stat.st_size)


@st.cache_data(show_spinner=False, max_entries=8)
def _read(path: str, mtime_ns: int, size: int) -> lb.LabelFile:
    # keyed on the file's time and size: any append (here or elsewhere) reads it again
    try:
        return lb.read_labels(path, missing_ok=True)
    except DagMathError as exc:
        return lb.LabelFile(path, issues=(LoadIssue(path, "", str(exc)),))


def trajectory_tools(traj: Trajectory, rec: Any) -> None:
    """The download button and the label panel below a trajectory's view."""
    st.download_button(
        "Download as HTML (one offline file)",
        functools.partial(_trajectory_page, traj, dict(rec)),
        file_name=f"trajectory-{slug(rec['problem_id'])}-{int(rec['sample_id'])}.html",
        mime="text/html",
        key="share_html",
        on_click="ignore",
    )
    _label_panel(traj, rec)


def comparison_download(
    side_a: tuple[Trajectory, Any], side_b: tuple[Trajectory, Any], names: tuple[str, str]
) -> None:
    """Compare's "Download as HTML": the two trajectories shown, aligned, as one file."""
    marks = current_labels()
    (ta, ra), (tb, rb) = side_a, side_b
    recs = (dict(ra), dict(rb))
    shown = tuple(f"{n} · sample {int(r['sample_id'])}" for n, r in zip(names, recs, strict=True))
    st.download_button(
        "Download this comparison as HTML (one offline file)",
        functools.partial(_comparison_page, ta, recs[0], tb, recs[1], shown, marks),
        file_name=f"compare-{slug(recs[0]['problem_id'])}-{slug(recs[0]['model'])}-"
        f"{int(recs[0]['sample_id'])}-{slug(recs[1]['model'])}-{int(recs[1]['sample_id'])}.html",
        mime="text/html",
        key="share_compare_html",
        on_click="ignore",
    )


def _comparison_page(ta, ra: dict, tb, rb: dict, names, marks: lb.LabelFile) -> bytes:
    from dagmath_viz.draw.html_export import ExportedTrajectory, comparison_html

    a = ExportedTrajectory(ta, ra, marks.for_trajectory(ra))
    b = ExportedTrajectory(tb, rb, marks.for_trajectory(rb))
    return comparison_html(a, b, names=names).encode()


#: The run report's sections, as ``dagmath export-html --report`` writes them by default.
REPORT_SELECTION = "incorrect-dead-ends"
REPORT_LIMIT = 10


def report_download(corpus: Any) -> None:
    """Overview's "Download as HTML": the run report of the loaded data (the Overview's
    tables and charts, by the same calls; then up to :data:`REPORT_LIMIT` trajectories of
    :data:`REPORT_SELECTION`, each its own section)."""
    roots = common.source_roots()
    st.download_button(
        "Download this report as HTML (one offline file)",
        functools.partial(_report_page, corpus, roots, current_labels()),
        file_name="dagmath-report.html",
        mime="text/html",
        key="share_report_html",
        on_click="ignore",
        help=f"The Overview's tables and charts, then up to {REPORT_LIMIT} trajectories: "
        "incorrect ones with dead ends, most dead ends first.",
    )


def _report_page(corpus: Any, roots: tuple[str, ...], marks: lb.LabelFile) -> bytes:
    from dagmath_viz.draw.html_export import exported_items, report_html, select_rows

    rows = select_rows(corpus.scored, REPORT_SELECTION, REPORT_LIMIT)
    items = exported_items(corpus, rows, roots, marks)
    title = f"Run report: {corpus.label}"
    return report_html(corpus.scored, items, title=title, selection=REPORT_SELECTION).encode()


def _trajectory_page(traj: Trajectory, rec: dict) -> bytes:
    from dagmath_viz.draw.html_export import ExportedTrajectory, trajectory_html

    marks = current_labels().for_trajectory(rec)
    return trajectory_html(ExportedTrajectory(traj, rec, marks)).encode()


def _label_panel(traj: Trajectory, rec: Any) -> None:
    path = labels_path()
    found = current_labels()
    mine = found.for_trajectory(rec)
    with st.expander(f"Labels ({len(mine)})", icon=":material/label:"):
        if path is None:
            st.info("Labels need a data source.")
            return
        st.caption(f"Saved to {escape_markdown(plain(str(path), 300))} (one label a line).")
        for issue in found.issues[:3]:
            st.warning(escape_markdown(plain(str(issue), 300)), icon=":material/warning:")
        for step, name, note in mine:
            where = "whole trajectory" if step is None else f"S{step}"
            row = st.columns([6, 1])
            row[0].text(f"{plain(where, 40)} · {name}" + (f" · {plain(note, 200)}" if note else ""))
            row[1].button(
                "Remove", key=f"share_rm_{where}_{name}", on_click=_remove,
                args=(path, rec, step, name),
            )  # fmt: skip
        steps = ["whole trajectory"] + [f"S{s.step_id}" for s in traj.steps]
        ids: list[Any] = [None] + [s.step_id for s in traj.steps]
        names = sorted({lab.label for lab in found.labels} | set(SUGGESTED))
        cols = st.columns([2, 2, 2, 3])
        cols[0].selectbox("Step", steps, key="share_step")
        cols[1].selectbox("Label", names, key="share_name")
        cols[2].text_input("or a new label", key="share_new", max_chars=lb.MAX_LABEL)
        cols[3].text_input("Note (optional)", key="share_note", max_chars=lb.MAX_NOTE)
        st.button("Add label", key="share_add", on_click=_add, args=(path, dict(rec), steps, ids))
        if message := st.session_state.pop("share_error", None):
            st.error(escape_markdown(plain(message, 400)), icon=":material/error:")


def _add(path: Path, rec: dict, steps: list[str], ids: list[Any]) -> None:
    """The "Add label" button's callback: the widgets' values, saved; the text boxes cleared."""
    state = st.session_state
    name = (state.get("share_new") or state.get("share_name") or "").strip()
    where = state.get("share_step")
    step = ids[steps.index(where)] if where in steps else None
    try:
        label = lb.make_label(
            rec["model"], rec["dataset"], str(rec["problem_id"]), int(rec["sample_id"]),
            name, step_id=step, note=state.get("share_note") or "",
        )  # fmt: skip
        lb.add_label(path, label)
    except (DagMathError, OSError) as exc:
        state["share_error"] = f"Label not saved: {exc}"
        return
    state["share_new"] = state["share_note"] = ""
    st.toast(f"Label “{plain(name, 40)}” saved")


def _remove(path: Path, rec: Any, step: Any, name: str) -> None:
    try:
        label = lb.make_label(
            rec["model"], rec["dataset"], str(rec["problem_id"]), int(rec["sample_id"]),
            name, step_id=step,
        )  # fmt: skip
        lb.remove_label(path, label)
    except (DagMathError, OSError) as exc:
        st.session_state["share_error"] = f"Label not removed: {exc}"


def label_filter(
    frame: pd.DataFrame,
    key: str,
    keys: tuple[str, ...] = ("model", "dataset", "problem", "sample"),
    step: str | None = None,
) -> pd.DataFrame:
    """``frame`` with a ``labels`` column and, when any label exists, a filter by label."""
    found = current_labels()
    if not found.labels:
        return frame
    marks = lb.labels_of_rows(frame, found, keys, step)
    out = frame.assign(labels=[", ".join(m) for m in marks])
    names = sorted({lab.label for lab in found.labels})
    wanted = st.multiselect("Labels", names, key=key, placeholder="any, labelled or not")
    if wanted:
        out = out[[bool(set(m) & set(wanted)) for m in marks]]
    return out


def slug(value: Any) -> str:
    """``value`` as a piece of a file name: letters, digits, ``-`` and ``_``, at most 40."""
    text = "".join(c if c.isalnum() or c in "-_" else "_" for c in str(value))
    return text[:40] or "x"
