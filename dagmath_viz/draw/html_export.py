"""One self-contained HTML file of a trajectory or of a run report: no server, no network.

A trajectory is the app's own view (:func:`dagmath_viz.draw.render.render_trajectory_html`:
the same truthful graph and linked step list) in an ``<iframe srcdoc>``, beside its problem,
answers and scores as the Trajectory page shows them. A run report holds the Overview's
tables and charts and one such section for each trajectory of a chosen set
(:data:`SELECTIONS`), linked from a table of them. A comparison is two trajectories as the
Compare page shows them: each side's facts, their steps aligned row by row
(:mod:`dagmath_viz.draw.aligned`) and both graphs in one layout and one scale.

Why an iframe: the view's script finds its data by element id, so two views on one page
need two documents; ``srcdoc`` keeps them inside the one file, and opened from ``file://``
they share the page's origin, so the page's script can typeset their steps' math with the
one KaTeX it carries (:mod:`dagmath_viz.draw.offline_assets`).

Safety, as for the view: every piece of model or data text is HTML-escaped (and reaches
scripts only as escaped JSON); Plotly's bundle is inlined once per file with its URLs
neutralised; :func:`check_page` refuses a page that names an external URL.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from dagmath_viz.analysis import metrics, tables
from dagmath_viz.analysis.align import align_texts
from dagmath_viz.draw import figures, paper_figures
from dagmath_viz.draw.aligned import GRAPH_SCALE, render_aligned_html, shared_layout
from dagmath_viz.draw.offline_assets import katex_bundle, neutralise_urls, plotly_bundle
from dagmath_viz.draw.render import render_trajectory_html
from dagmath_viz.schema import DagMathError, Trajectory

__all__ = [
    "COMPARE_GRAPH_HEIGHT",
    "FORMULA_BUDGET",
    "SELECTIONS",
    "VIEW_HEIGHT",
    "ExportedTrajectory",
    "check_page",
    "comparison_html",
    "exported_items",
    "report_html",
    "report_title",
    "shared_source",
    "select_rows",
    "trajectory_html",
]

#: Most formulas one exported file typesets (KaTeX takes ~0.7 ms each on opening the file);
#: later ones show as LaTeX source.
FORMULA_BUDGET = 3000
#: CSS px of each embedded trajectory view (and of a comparison's aligned steps).
VIEW_HEIGHT = 760
#: CSS px of each graph of a comparison (the Compare page's frame).
COMPARE_GRAPH_HEIGHT = 530

#: The sets of trajectories a run report can include, each as (description, row filter).
SELECTIONS: dict[str, str] = {
    "incorrect-dead-ends": "incorrect trajectories with dead ends, most dead ends first",
    "incorrect": "incorrect trajectories, most dead ends first",
    "imperfect": "correct but not closed, most dead ends first",
    "dead-ends": "any trajectory with dead ends, most first",
    "all": "every trajectory, in the table's order",
    "none": "no trajectory (tables and charts only)",
}

_ASSETS = Path(__file__).parent / "assets"
_URL = re.compile(r"https?://", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ExportedTrajectory:
    """A trajectory to export with its scored row (``dead_ends``, ``final_correct``, ...),
    and the labels to list beside it as (step id or None, label, note) triples."""

    trajectory: Trajectory | None
    record: Mapping[str, Any]
    labels: tuple[tuple[Any, str, str], ...] = ()
    unreadable: str | None = None


# --------------------------------------------------------------------------- pages


def trajectory_html(item: ExportedTrajectory, *, selected_step: Any = None) -> str:
    """One trajectory as a self-contained page (view, problem, answers, scores, labels).

    Example:
        >>> from dagmath_viz.schema import Step, Trajectory
        >>> t = Trajectory("m", "d", "1", 0, (Step(1, (), "$x$"), Step(2, (1,), "b")))
        >>> rec = {"dead_ends": (), "final_correct": True, "class": "perfect"}
        >>> page = trajectory_html(ExportedTrajectory(t, rec))
        >>> "http://" in page or "https://" in page, 'data-nodes=&quot;2&quot;' in page
        (False, True)
    """
    rec = item.record
    title = _trajectory_title(rec, item.trajectory)
    body = _trajectory_section(item, "t-1", selected_step=selected_step, level=1)
    return _page(title, body, charts=False)


def report_html(
    scored: pd.DataFrame,
    items: Sequence[ExportedTrajectory] = (),
    *,
    title: str = "Run report",
    selection: str = "",
) -> str:
    """The Overview's tables and charts for ``scored``, then one section per item.

    The numbers are those of :mod:`dagmath_viz.analysis.tables` with the Overview's
    arguments (1000-resample intervals, seed 0), formatted as it formats them.
    """
    parts = [f"<h1>{_esc(title)}</h1>", _report_intro(scored)]
    if scored.empty:
        parts.append("<p>Nothing loaded.</p>")
        return _page(title, "".join(parts), charts=False)
    parts.append(_contents(bool(items)))
    parts.extend(_overview_parts(scored))
    if items:
        parts.append(_items_table(items, selection))
        for i, item in enumerate(items, start=1):
            parts.append(_trajectory_section(item, f"t-{i}", level=2))
    return _page(title, "".join(parts), charts=True)


def comparison_html(
    a: ExportedTrajectory, b: ExportedTrajectory, *, names: tuple[str, str] = ("A", "B")
) -> str:
    """Two trajectories as the Compare page shows them, as a self-contained page.

    Each side's facts (and labels), then their steps aligned row by row
    (:func:`dagmath_viz.analysis.align.align_texts`, drawn by
    :func:`dagmath_viz.draw.aligned.render_aligned_html`), then both graphs in one layout
    and at one scale (100 %). ``names`` head the two sides.

    Raises:
        DagMathError: a side's steps cannot be read (``unreadable`` says why).
    """
    for side, item in zip(names, (a, b), strict=True):
        if item.trajectory is None:
            why = item.unreadable or "its steps were not kept"
            raise DagMathError(f"{side}: the steps cannot be shown: {why}")
    ta, tb = a.trajectory, b.trajectory
    assert ta is not None and tb is not None  # checked above
    ra, rb = a.record, b.record
    title = f"Comparison: {names[0]} and {names[1]}"
    sides = "".join(
        f'<div class="dm-side"><h2>{_esc(_cut(name, 200))}</h2>'
        f"<p>{_esc(_trajectory_title(item.record, item.trajectory))} · "
        f'<span class="dm-class c-{_esc(str(item.record.get("class", "")))}">'
        f"{_esc(str(item.record.get('class', '')))}</span></p>"
        + _table_html(_facts(item.record), f"facts-{'ab'[i]}")
        + (_labels_table(item.labels) if item.labels else "")
        + "</div>"
        for i, (name, item) in enumerate(zip(names, (a, b), strict=True))
    )
    problem = ta.problem_text or tb.problem_text or "(no problem text)"
    aligned = render_aligned_html(
        ta,
        tb,
        align_texts([x.text for x in ta.steps], [x.text for x in tb.steps]),
        dead_a=ra.get("dead_ends") or (),
        dead_b=rb.get("dead_ends") or (),
        correct_a=_bool_or_none(ra.get("final_correct")),
        correct_b=_bool_or_none(rb.get("final_correct")),
        labels=names,
        height_px=VIEW_HEIGHT,
        katex=False,  # the page's one KaTeX typesets these formulas too (export_page.js)
    )
    layout = shared_layout(ta, tb)
    graphs = "".join(
        '<div class="dm-side">'
        f'<iframe class="dm-view" title="step graph of {_esc(_cut(name, 100))}" '
        f'height="{COMPARE_GRAPH_HEIGHT + 4}" srcdoc="'
        + html.escape(
            render_trajectory_html(
                traj,
                dead_ends=rec.get("dead_ends"),
                final_correct=_bool_or_none(rec.get("final_correct")),
                height_px=COMPARE_GRAPH_HEIGHT,
                scale=GRAPH_SCALE,
                show_steps=False,
                layout=layout,
                katex=False,
            ),
            quote=True,
        )
        + '"></iframe></div>'
        for name, traj, rec in ((names[0], ta, ra), (names[1], tb, rb))
    )
    body = (
        f"<h1>{_esc(title)}</h1>"
        '<details class="dm-problem" open><summary>Problem</summary>'
        f'<div class="dm-math">{_esc(_cut(problem, 20_000))}</div></details>'
        f'<div class="dm-sides">{sides}</div>'
        "<h2>Steps aligned</h2><p>Steps aligned by what they state: = the same statement, "
        "≈ the same mathematical content; a row with one side empty is a step only that side "
        "has. Both sides scroll as one; dead ends are orange.</p>"
        f'<iframe class="dm-aligned" title="steps aligned" height="{VIEW_HEIGHT + 4}" '
        f'srcdoc="{html.escape(aligned, quote=True)}"></iframe>'
        f"<h2>Graphs</h2><p>One layout ({_esc(layout)}) and one scale (100 %) for both.</p>"
        f'<div class="dm-sides">{graphs}</div>'
    )
    return _page(title, body, charts=False)


def exported_items(
    corpus: Any, rows: Iterable[int], roots: Sequence[str] = (), labels: Any = None
) -> list[ExportedTrajectory]:
    """The rows of a loaded corpus (:class:`dagmath_viz.run.corpus.Corpus`) as items to
    export: each trajectory loaded, or read back from its scored record's ``source`` under
    ``roots``, with its labels (a :class:`dagmath_viz.store.labels.LabelFile`, or None).
    Each record's ``source`` is given as :func:`shared_source` shows it."""
    from dagmath_viz.formats.sources import SourceReader

    reader = SourceReader(roots=list(roots))
    out = []
    for row in rows:
        rec = corpus.scored.iloc[row].to_dict()
        traj, why = corpus.trajectory(row), None
        if traj is None:
            key = (str(rec["model"]), str(rec["dataset"]), str(rec["problem_id"]))
            traj, why = reader.read(rec["source"] or "", (*key, int(rec["sample_id"])))
        rec["source"] = shared_source(rec.get("source"), roots)
        marks = labels.for_trajectory(rec) if labels is not None else ()
        out.append(ExportedTrajectory(traj, rec, marks, why))
    return out


def shared_source(source: Any, roots: Sequence[str]) -> str:
    """A record's ``source`` as a shared file shows it: from the data folder named down
    (``thought-anchors/<model>/.../chunks_labeled.json``), never the folders above it on
    the machine that wrote the file; a source under no root shows as its file name.

    Example:
        >>> shared_source("/home/a/runs/m/d/p_1.json:item 2", ["/home/a/runs"])
        'runs/m/d/p_1.json:item 2'
        >>> shared_source("/elsewhere/p_1.json", ["/home/a/runs"])
        'p_1.json'
    """
    text = "" if source is None or (isinstance(source, float) and source != source) else str(source)
    if not text:
        return ""
    for root in roots:
        base = str(Path(root).expanduser().resolve())
        rest = text[len(base) :]
        if text.startswith(base) and (not rest or rest[0] in "/:"):
            return Path(base).name + rest  # rest: "/<below>" or ":item N" of a named file
    return text.rsplit("/", 1)[-1]


def report_title(paths: Sequence[str]) -> str:
    """A run report's title from the data paths: their last parts only (no machine path).

    >>> report_title(["/home/a/runs", "/home/a/more/scored.jsonl"])
    'Run report: runs, scored.jsonl'
    """
    names = [Path(p).name or str(p) for p in paths]
    return "Run report: " + (", ".join(names) if names else "data")


def select_rows(scored: pd.DataFrame, selection: str, limit: int) -> list[int]:
    """Rows (positions in ``scored``) of a :data:`SELECTIONS` set, at most ``limit``.

    Ties keep the table's order (a stable sort), so the same data always give the same file.
    """
    if selection not in SELECTIONS:
        raise DagMathError(f"unknown selection {selection!r}; one of {', '.join(SELECTIONS)}")
    if selection == "none" or scored.empty:
        return []
    n_dead = scored["dead_ends"].map(lambda d: len(d) if d is not None else 0).to_numpy()
    cls = scored["class"].astype(str).to_numpy()
    keep = {
        "incorrect-dead-ends": (cls == "incorrect") & (n_dead > 0),
        "incorrect": cls == "incorrect",
        "imperfect": cls == "imperfect",
        "dead-ends": n_dead > 0,
        "all": n_dead >= 0,
    }[selection]
    rows = [i for i in range(len(scored)) if keep[i]]
    if selection != "all":
        rows.sort(key=lambda i: -n_dead[i])
    return rows[: max(int(limit), 0)]


def check_page(page: str) -> str:
    """``page`` itself, after checking it names no external URL (``http://``/``https://``).

    Raises:
        RuntimeError: a URL is left (a bug: everything put in is neutralised or escaped).
    """
    found = _URL.search(page)
    if found:
        raise RuntimeError(f"the exported page names an external URL near {found.start()}")
    return page


# --------------------------------------------------------------------------- sections


def _trajectory_section(
    item: ExportedTrajectory, anchor: str, *, selected_step: Any = None, level: int = 2
) -> str:
    rec, traj = item.record, item.trajectory
    h = f"h{level}"
    parts = [
        f'<section class="dm-traj" id="{anchor}">',
        f"<{h}>{_esc(_trajectory_title(rec, traj))}</{h}>",
        f'<p><span class="dm-class c-{_esc(str(rec.get("class", "")))}">'
        f"{_esc(str(rec.get('class', '')))}</span>"
        + (f" · source: <code>{_esc(_cut(str(rec.get('source') or ''), 200))}</code>")
        + "</p>",
        _table_html(_facts(rec), "facts"),
    ]
    for error in list(rec.get("errors") or ())[:20]:
        parts.append(f'<p class="dm-error">{_esc(_cut(str(error), 500))}</p>')
    if item.labels:
        parts.append(_labels_table(item.labels))
    if traj is None:
        why = item.unreadable or "its steps were not kept"
        parts.append(f'<p class="dm-error">The steps cannot be shown: {_esc(why)}.</p>')
        parts.append("</section>")
        return "".join(parts)
    problem = traj.problem_text or "(no problem text)"
    parts.append(
        '<details class="dm-problem" open><summary>Problem</summary>'
        f'<div class="dm-math">{_esc(_cut(problem, 20_000))}</div></details>'
    )
    view = render_trajectory_html(
        traj,
        dead_ends=rec.get("dead_ends"),
        final_correct=_bool_or_none(rec.get("final_correct")),
        height_px=VIEW_HEIGHT,
        selected_step=selected_step,
        katex=False,  # the page's one KaTeX typesets every view's steps (export_page.js)
    )
    parts.append(
        f'<iframe class="dm-view" title="step graph and steps" height="{VIEW_HEIGHT + 4}" '
        f'srcdoc="{html.escape(view, quote=True)}"></iframe>'
    )
    parts.append("</section>")
    return "".join(parts)


def _facts(rec: Mapping[str, Any]) -> pd.DataFrame:
    """The Trajectory page's metric cells and answers, as two columns."""
    verdict = _bool_or_none(rec.get("final_correct"))
    final = None if verdict is None else ("correct" if verdict else "wrong")
    dead = rec.get("dead_ends")
    rows = [
        ("Final answer", final or "unscored"),
        ("Closeness rate", tables.format_percent(rec.get("closeness_rate"))),
        ("Dead ends", str(len(dead) if dead is not None else 0)),
        ("Steps / edges", f"{rec.get('n_nodes')} / {rec.get('n_edges')}"),
        ("Density", tables.format_percent(rec.get("density"))),
        ("Predicted answer", _cut(str(rec.get("predicted_answer") or "—"), 300)),
        ("Reference answer", _cut(str(rec.get("reference_answer") or "—"), 300)),
    ]
    return pd.DataFrame(rows, columns=["", "value"])


def _labels_table(labels: Iterable[tuple[Any, str, str]]) -> str:
    rows = [
        ("whole trajectory" if step is None else f"S{step}", label, note)
        for step, label, note in labels
    ]
    return "<h4>Labels</h4>" + _table_html(
        pd.DataFrame(rows, columns=["step", "label", "note"]), "labels"
    )


def _trajectory_title(rec: Mapping[str, Any], traj: Trajectory | None) -> str:
    get = rec.get
    model = get("model", traj.model if traj else "")
    dataset = get("dataset", traj.dataset if traj else "")
    problem = get("problem_id", traj.problem_id if traj else "")
    sample = get("sample_id", traj.sample_id if traj else "")
    return _cut(f"{model} · {dataset} · problem {problem} · sample {sample}", 300)


def _report_intro(scored: pd.DataFrame) -> str:
    models = scored["model"].nunique() if not scored.empty else 0
    return (
        f"<p>{len(scored):,} trajectories of {models:,} model(s). PASS@1 and R̂ are means over "
        "problems, each problem weighing the same; intervals are 95% intervals over problems "
        "(Hall's skewness-corrected t joined with a Wilson score interval). Δ = PASS@1 − R̂. "
        "AUC is the area under A(τ).</p>"
    )


def _contents(with_items: bool) -> str:
    links = [
        ("leaderboard", "Leaderboard"),
        ("spread", "PASS@1 against R̂ across models"),
        ("difficulty", "By difficulty group"),
        ("auc", "AUC curves"),
        ("table1", "Graph statistics by cohort"),
        ("classes", "Trajectories by class"),
    ]
    if with_items:
        links.append(("trajectories", "Trajectories in this report"))
    return (
        '<nav class="dm-contents"><b>Contents</b> '
        + " · ".join(f'<a href="#{a}">{_esc(t)}</a>' for a, t in links)
        + "</nav>"
    )


def _overview_parts(df: pd.DataFrame) -> list[str]:
    """The Overview page's sections, in its order, with its tables and charts."""
    models_df, strategies_df = tables.split_logic_strategies(df)  # as the Overview
    board = tables.leaderboard(models_df, n_boot=1000)
    colours = figures.assign_model_colours(df["model"].unique())
    out = ['<h2 id="leaderboard">Leaderboard</h2>']
    if board["small_sample"].any():
        out.append(
            f'<p class="dm-warn">Some rows rest on fewer than {metrics.SMALL_SAMPLE} problems: '
            "their intervals are wide and less reliable.</p>"
        )
    out.append(_table_html(tables.leaderboard_display(board), "leaderboard"))
    if not strategies_df.empty:
        note = _esc(tables.LOGIC_STRATEGIES_NOTE)
        out.append(f"<p><b>Logic-program strategies</b> (not models). {note}</p>")
        strategy_board = tables.leaderboard(strategies_df, n_boot=1000)
        out.append(_table_html(tables.leaderboard_display(strategy_board), "strategies"))

    out.append('<h2 id="spread">PASS@1 against R̂ across models</h2>')
    out.append(_figure_html(paper_figures.spread_figure(board)))
    spread = tables.model_spread(models_df, board=board)
    out.append(_table_html(tables.spread_display(spread), "spread"))

    out.append('<h2 id="difficulty">By difficulty group</h2>')
    by_diff = tables.by_difficulty(df)
    if by_diff.empty:
        out.append("<p>No difficulty is known for these data.</p>")
    else:
        out.append(_figure_html(paper_figures.difficulty_figure(by_diff, colours)))
        out.append(_table_html(_rates_display(by_diff), "by_difficulty"))

    out.append('<h2 id="auc">AUC curves</h2>')
    curve = metrics.auc_curve(df)
    if curve.empty:
        out.append("<p>No trajectory has a reference answer, so there is no AUC curve.</p>")
    else:
        out.append(_figure_html(figures.auc_figure(curve, colours=colours)))

    out.append('<h2 id="table1">Graph statistics by cohort (the paper\'s Table 1)</h2>')
    out.append(_table_html(tables.table1_display(tables.table1(df)), "table1"))

    out.append('<h2 id="classes">Trajectories by class</h2>')
    counts = tables.class_counts_table(df)
    out.append(_figure_html(figures.class_counts_figure(counts)))
    out.append(_table_html(counts, "class_counts"))
    return out


def _rates_display(table: pd.DataFrame) -> pd.DataFrame:
    shown = table.drop(columns=["small_sample"], errors="ignore").copy()
    for col in ("pass_at_1", "r_hat", "gap", "auc"):
        if col in shown:
            shown[col] = shown[col].map(tables.format_percent)
    return shown


def _items_table(items: Sequence[ExportedTrajectory], selection: str) -> str:
    rows = []
    for i, item in enumerate(items, start=1):
        r = item.record
        dead = r.get("dead_ends")
        rows.append(
            {
                "#": i,
                "model": r.get("model"),
                "dataset": r.get("dataset"),
                "problem": r.get("problem_id"),
                "sample": r.get("sample_id"),
                "class": r.get("class"),
                "steps": r.get("n_nodes"),
                "dead ends": len(dead) if dead is not None else 0,
                "closeness": tables.format_percent(r.get("closeness_rate")),
            }
        )
    what = SELECTIONS.get(selection, selection)
    links = {i: f"#t-{i + 1}" for i in range(len(rows))}
    return (
        '<h2 id="trajectories">Trajectories in this report</h2>'
        f"<p>{len(rows)} trajectories: {_esc(what)}. Click a row's number to open it.</p>"
        + _table_html(pd.DataFrame(rows), "trajectories", links=links)
    )


# --------------------------------------------------------------------------- building blocks


def _table_html(df: pd.DataFrame, name: str, links: Mapping[int, str] | None = None) -> str:
    """An HTML table of ``df`` with every cell escaped; ``links[i]`` makes row i's first cell
    a link to that anchor."""
    head = "".join(f"<th>{_esc(str(c))}</th>" for c in df.columns)
    rows = []
    for i, values in enumerate(df.itertuples(index=False, name=None)):
        cells = [_cell(v) for v in values]
        if links and i in links and cells:
            cells[0] = f'<a href="{_esc(links[i])}">{cells[0]}</a>'
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (
        f'<table class="dm-table" data-table="{_esc(name)}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _cell(value: Any) -> str:
    """How a table cell shows: the Overview's "–" for unknown values, else ``str``."""
    try:
        missing = value is None or bool(pd.isna(value))
    except (TypeError, ValueError):  # a list or an array: not a scalar "missing"
        missing = False
    return _esc(tables.MISSING if missing else _cut(str(value), 300))


_SCRIPT_BODY = re.compile(r"(<script[^>]*>)(.*?)(</script>)", re.DOTALL)


def _figure_html(fig: Any) -> str:
    """A Plotly figure as a ``<div>`` drawn by the page's one Plotly bundle."""
    div = fig.to_html(
        full_html=False,
        include_plotlyjs=False,
        config={"displaylogo": False, "responsive": True},
    )
    # the figure's JSON sits in a script: no "</" may end it early, no URL may be spelled out
    return _SCRIPT_BODY.sub(
        lambda m: m.group(1) + neutralise_urls(m.group(2).replace("</", "<\\/")) + m.group(3),
        div,
    )


def _page(title: str, body: str, *, charts: bool) -> str:
    katex = katex_bundle()
    conf = {"formula_budget": FORMULA_BUDGET}
    head = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # belt and braces: even a URL we missed could not be fetched from this file
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; "
        "img-src data: blob:; font-src data:; frame-src 'self' about: data:; "
        "child-src 'self' about: data:\">",
        f"<title>{_esc(title)}</title>",
        "<style>" + _asset("export_page.css") + "</style>",
    ]
    if katex is not None:
        head.append("<script>" + katex.script + "</script>")
    if charts:
        head.append("<script>" + plotly_bundle() + "</script>")
    note = (
        f"Math typeset offline by KaTeX {katex.version} (as MathML)."
        if katex is not None
        else "Math is shown as LaTeX source (no offline typesetter was found)."
    )
    page = (
        "".join(head)
        + "</head><body><main>"
        + body
        + f"<footer>Written by dagmath export-html. {_esc(note)} This file needs no "
        "network and no server.</footer></main>"
        + '<script type="application/json" id="dm-export">'
        + json.dumps(conf)
        + "</script><script>"
        + _asset("export_page.js")
        + "</script></body></html>"
    )
    if "innerHTML" in _asset("export_page.js"):
        raise RuntimeError("the export page script would use innerHTML")
    return check_page(page)


@cache
def _asset(name: str) -> str:
    return (_ASSETS / name).read_text(encoding="utf-8")


_URL_IN_TEXT = re.compile(r"(https?):(//)", re.IGNORECASE)


def _esc(text: str) -> str:
    """HTML-escaped text; a URL in it shows as typed but is spelled with entities
    (``http:&#47;&#47;``), so the file names no URL."""
    return _URL_IN_TEXT.sub(r"\1:&#47;&#47;", html.escape(text, quote=True))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _bool_or_none(value: Any) -> bool | None:
    if value is None:
        return None
    try:
        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        return None
    return bool(value)
