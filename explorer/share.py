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
``$DAGMATH_LABELS`` may name several files (``dagmath app --labels A --labels B``, joined
with ``os.pathsep``): labels are added to the first; the others (a colleague's) are read
only, their labels join the filters and the panel lists them beside yours with the two
files' agreement (:func:`dagmath_viz.store.labels.agreement`).
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


def label_paths() -> list[Path]:
    """The label files: yours first (labels are added to it), then any read-only others
    ``$DAGMATH_LABELS`` names; empty when there is no data source and no file named."""
    named = [p for p in os.environ.get(LABELS_ENV, "").split(os.pathsep) if p.strip()]
    if named:
        return [Path(p) for p in dict.fromkeys(named)]
    paths = st.session_state.get("source_paths") or ()
    return [lb.sidecar_path(paths[0])] if paths else []


def labels_path() -> Path | None:
    """The label file labels are added to, or None when there is no source."""
    paths = label_paths()
    return paths[0] if paths else None


def current_labels() -> lb.LabelFile:
    """The labels standing in :func:`labels_path` (empty when it has none yet)."""
    path = labels_path()
    return lb.LabelFile("") if path is None else _labels_of(path)


def other_labels() -> list[lb.LabelFile]:
    """The labels of the other files named (read only), in the order named."""
    return [_labels_of(p) for p in label_paths()[1:]]


def _labels_of(path: Path) -> lb.LabelFile:
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
    """The download buttons (the page as one HTML file; the graph as SVG and PNG, as
    ``dagmath export-html --format svg|png`` writes them) and the label panel below a
    trajectory's view."""
    from dagmath_viz.draw.pictures import find_chromium

    stem = f"trajectory-{slug(rec['problem_id'])}-{int(rec['sample_id'])}"
    cols = st.columns([2.3, 1.1, 1.1, 3], vertical_alignment="center")
    cols[0].download_button(
        "Download as HTML (one offline file)",
        functools.partial(
            _trajectory_page, traj, dict(rec), common.source_roots(), current_labels()
        ),
        file_name=f"{stem}.html",
        mime="text/html",
        key="share_html",
        on_click="ignore",
    )
    cols[1].download_button(
        "Graph as SVG",
        functools.partial(_picture, traj, dict(rec), "svg"),
        file_name=f"{stem}.svg",
        mime="image/svg+xml",
        key="share_svg",
        on_click="ignore",
        help="The graph alone, as drawn here (layers or reading order, as the view chose), "
        "at 1 SVG unit per CSS pixel: for a paper or a slide.",
    )
    chromium = find_chromium()
    cols[2].download_button(
        "Graph as PNG",
        functools.partial(_picture, traj, dict(rec), "png"),
        file_name=f"{stem}.png",
        mime="image/png",
        key="share_png",
        on_click="ignore",
        disabled=chromium is None,
        help="The SVG drawn at twice its size by a local headless Chromium."
        if chromium
        else "PNG needs Chromium (apt-get install chromium, or set DAGMATH_CHROMIUM); "
        "the SVG needs nothing.",
    )
    _label_panel(traj, rec)


def _picture(traj: Trajectory, rec: dict, kind: str) -> bytes:
    from dagmath_viz.draw import pictures

    svg = pictures.trajectory_svg(
        traj, dead_ends=rec.get("dead_ends"), final_correct=rec.get("final_correct")
    )
    return svg.encode() if kind == "svg" else pictures.svg_to_png(svg)


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
        functools.partial(
            _comparison_page, ta, recs[0], tb, recs[1], shown, marks, common.source_roots()
        ),
        file_name=f"compare-{slug(recs[0]['problem_id'])}-{slug(recs[0]['model'])}-"
        f"{int(recs[0]['sample_id'])}-{slug(recs[1]['model'])}-{int(recs[1]['sample_id'])}.html",
        mime="text/html",
        key="share_compare_html",
        on_click="ignore",
    )


def _comparison_page(
    ta, ra: dict, tb, rb: dict, names, marks: lb.LabelFile, roots: tuple[str, ...]
) -> bytes:
    from dagmath_viz.draw.html_export import ExportedTrajectory, comparison_html, shared_source

    for rec in (ra, rb):  # no path of this machine above the data folder in a shared file
        rec["source"] = shared_source(rec.get("source"), roots)
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
    from dagmath_viz.draw.html_export import report_title

    roots = common.source_roots()
    names = list(st.session_state.get("source_paths") or ()) or [corpus.label]
    st.download_button(
        "Download this report as HTML (one offline file)",
        functools.partial(_report_page, corpus, roots, current_labels(), report_title(names)),
        file_name="dagmath-report.html",
        mime="text/html",
        key="share_report_html",
        on_click="ignore",
        help=f"The Overview's tables and charts, then up to {REPORT_LIMIT} trajectories: "
        "incorrect ones with dead ends, most dead ends first.",
    )


def _report_page(corpus: Any, roots: tuple[str, ...], marks: lb.LabelFile, title: str) -> bytes:
    from dagmath_viz.draw.html_export import exported_items, report_html, select_rows

    rows = select_rows(corpus.scored, REPORT_SELECTION, REPORT_LIMIT)
    items = exported_items(corpus, rows, roots, marks)
    return report_html(corpus.scored, items, title=title, selection=REPORT_SELECTION).encode()


def _trajectory_page(
    traj: Trajectory, rec: dict, roots: tuple[str, ...], labels: lb.LabelFile
) -> bytes:
    from dagmath_viz.draw.html_export import ExportedTrajectory, shared_source, trajectory_html

    marks = labels.for_trajectory(rec)
    rec["source"] = shared_source(rec.get("source"), roots)
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
        others = other_labels()
        for issue in [i for f in (found, *others) for i in f.issues][:3]:
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
        names = sorted({lab.label for f in (found, *others) for lab in f.labels} | set(SUGGESTED))
        cols = st.columns([2, 2, 2, 3])
        cols[0].selectbox("Step", steps, key="share_step")
        cols[1].selectbox("Label", names, key="share_name")
        cols[2].text_input("or a new label", key="share_new", max_chars=lb.MAX_LABEL)
        cols[3].text_input("Note (optional)", key="share_note", max_chars=lb.MAX_NOTE)
        st.button("Add label", key="share_add", on_click=_add, args=(path, dict(rec), steps, ids))
        if message := st.session_state.pop("share_error", None):
            st.error(escape_markdown(plain(message, 400)), icon=":material/error:")
        for other in others:
            _other_file(found, other, rec)


def _other_file(mine: lb.LabelFile, other: lb.LabelFile, rec: Any) -> None:
    """A read-only file's labels on this trajectory, and its agreement with yours over
    every item (step or whole trajectory) both files label, as ``dagmath labels agree``."""
    name = plain(Path(other.path).name, 80)
    got = lb.agreement(mine, other)
    pct = "–" if got.percent is None else f"{100 * got.percent:.1f}%"
    kappa = "–" if got.kappa is None else f"{got.kappa:.3f}"
    st.markdown(
        f"**{escape_markdown(name)}** (read only) · agreement with yours over the "
        f"{got.both:,} items both label: same labels on {got.agreed:,} ({pct}), Cohen's "
        f"kappa {kappa} · only yours {got.only_a:,}, only theirs {got.only_b:,}"
    )
    theirs = [
        ("whole trajectory" if step is None else f"S{step}", label, plain(note, 200))
        for step, label, note in other.for_trajectory(rec)
    ]
    if theirs:
        table = pd.DataFrame(theirs, columns=["step", "label", "note"])
        st.dataframe(common.visible(table), hide_index=True, key=f"share_other_{name}")
    else:
        st.caption("No labels on this trajectory in that file.")


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
    """``frame`` with a ``labels`` column and, when any label exists, a filter by label
    (the labels of every file loaded, yours and the read-only others)."""
    files = [current_labels(), *other_labels()]
    found = lb.LabelFile("", tuple(lab for f in files for lab in f.labels))
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
