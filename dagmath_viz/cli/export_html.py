"""``dagmath export-html``: one self-contained file of a trajectory or a run report.

The file opens by double-click: no server, no network, no external URL in it. A trajectory
is the app's graph and linked step list with its problem, answers and scores; ``--report``
writes the Overview's tables and charts with a section per trajectory of ``--select``.
``--compare`` writes two trajectories as the Compare page shows them (each side's facts,
their steps aligned, both graphs in one layout and scale). ``--format svg`` or ``png``
writes the trajectory's graph as a picture instead.

Pick the trajectory with ``--model``, ``--dataset``, ``--problem`` and ``--sample`` (each
narrows the loaded rows; together they must leave one), or ``--longest`` (the one with
most steps among those left). With ``--compare`` give an option twice for A then B where
the sides differ (``--model A --model B``, ``--sample 0 --sample 3``); given once, it holds
for both.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dagmath_viz.cli.common import (
    EXIT_OK,
    EXIT_PARTIAL,
    NothingLoadedError,
    UsageError,
    add_command,
    natural,
    say,
    stdin_paths,
    write_atomic,
)

__all__ = ["SELECT_CHOICES", "register", "run_export"]

#: The names of :data:`dagmath_viz.draw.html_export.SELECTIONS` (spelled out here so that
#: building the parser imports no plotting; a test keeps the two equal).
SELECT_CHOICES = ("incorrect-dead-ends", "incorrect", "imperfect", "dead-ends", "all", "none")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``export-html`` to the ``dagmath`` parser."""
    p = add_command(
        subparsers,
        "export-html",
        help="write a trajectory or a run report as one offline HTML file (or SVG/PNG)",
        description=__doc__,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="data files or folders; - for stdin")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the file to write")
    p.add_argument("--answers", metavar="FILE", help="answers for raw trajectories")
    p.add_argument("--report", action="store_true", help="a run report instead of one trajectory")
    p.add_argument(
        "--compare",
        action="store_true",
        help="two trajectories side by side, aligned (give --model/--sample twice: A, then B)",
    )
    p.add_argument(
        "--select",
        choices=SELECT_CHOICES,
        default="incorrect-dead-ends",
        help="with --report: which trajectories get their own section",
    )
    p.add_argument(
        "--limit", type=natural, default=10, metavar="N", help="with --report: at most N sections"
    )
    for name in ("model", "dataset", "problem", "sample"):
        p.add_argument(
            f"--{name}",
            action="append",
            metavar=name.upper(),
            help=f"the trajectory's {name} (with --compare: twice, for A and B)",
        )
    p.add_argument("--longest", action="store_true", help="the longest of the matching ones")
    p.add_argument("--step", metavar="ID", help="a step selected when the file opens")
    p.add_argument(
        "--format",
        choices=("html", "svg", "png"),
        default="html",
        help="svg/png: the trajectory's graph as a picture (png needs Chromium)",
    )
    p.add_argument(
        "--labels",
        metavar="FILE",
        help="a label file (JSONL) whose labels to show; default: the sidecar beside the first "
        "PATH when there is one (where the app saves them)",
    )
    p.set_defaults(func=run_export)


def run_export(args: argparse.Namespace) -> int:
    """The ``export-html`` command; returns the exit code."""
    from dagmath_viz.run.corpus import load_corpus

    if (args.report or args.compare) and args.format != "html":
        raise UsageError("--format svg/png draws one trajectory; leave out --report/--compare")
    if args.report and args.compare:
        raise UsageError("--report and --compare write different files: choose one")
    if not args.compare:
        twice = [f"--{o}" for o in ("model", "dataset", "problem", "sample")
                 if len(getattr(args, o) or ()) > 1]  # fmt: skip
        if twice:
            raise UsageError(f"{', '.join(twice)} given twice: only --compare takes two sides")
    with stdin_paths(args.paths) as (paths, names):
        corpus = load_corpus(paths, answers=args.answers)
        if corpus.scored.empty:
            shown = ", ".join(names.names.get(p, p) for p in paths)
            raise NothingLoadedError(f"nothing to export in {shown}")
        for issue in corpus.issues[:5]:
            say(names.text(f"dagmath: warning: {issue}"))
        labels = _labels(args.labels, args.paths)
        if args.report:
            data = _report(corpus, paths, args, labels)
        elif args.compare:
            data = _compare(corpus, paths, args, labels)
        else:
            data = _one(corpus, paths, args, labels)
    write_atomic(args.output, data)
    say(f"wrote {args.output} ({len(data) / 1024:,.0f} KB)")
    return EXIT_PARTIAL if any(i.severity == "error" for i in corpus.issues) else EXIT_OK


def _labels(path: str | None, given: list[str]):
    """The label file named, else the sidecar beside the first PATH if it exists (as
    ``report --by label`` and the app find it), else None."""
    from dagmath_viz.store.labels import read_labels, sidecar_path

    if path is None:
        if not given or given[0] == "-":
            return None
        sidecar = sidecar_path(given[0])
        if not sidecar.is_file():
            return None
        path = str(sidecar)
    found = read_labels(path)
    for issue in found.issues[:5]:
        say(f"dagmath: warning: {issue}")
    return found


def _items(corpus, rows, paths, labels):
    from dagmath_viz.draw.html_export import exported_items

    return exported_items(corpus, rows, paths, labels)


def _report(corpus, paths, args, labels) -> bytes:
    from dagmath_viz.draw.html_export import report_html, report_title, select_rows

    rows = select_rows(corpus.scored, args.select, args.limit)
    items = _items(corpus, rows, paths, labels)
    title = report_title([p if p != "-" else "standard input" for p in args.paths])
    return report_html(corpus.scored, items, title=title, selection=args.select).encode()


def _one(corpus, paths, args, labels) -> bytes:
    from dagmath_viz.draw.html_export import trajectory_html

    (item,) = _items(corpus, [_pick(corpus.scored, args)], paths, labels)
    if item.trajectory is None:
        raise NothingLoadedError(f"the steps of this trajectory cannot be read: {item.unreadable}")
    if args.format == "html":
        return trajectory_html(item, selected_step=args.step).encode()
    from dagmath_viz.draw import pictures

    svg = pictures.trajectory_svg(
        item.trajectory,
        dead_ends=item.record.get("dead_ends"),
        final_correct=item.record.get("final_correct"),
    )
    if args.format == "svg":
        return svg.encode()
    return pictures.svg_to_png(svg, Path(args.output).name)


def _compare(corpus, paths, args, labels) -> bytes:
    from dagmath_viz.draw.html_export import comparison_html
    from dagmath_viz.schema import DagMathError

    rows = [_pick(corpus.scored, args, side=0), _pick(corpus.scored, args, side=1)]
    if rows[0] == rows[1]:
        raise UsageError(
            "A and B are the same trajectory: give --model or --sample twice (A, then B)"
        )
    a, b = _items(corpus, rows, paths, labels)
    names = (
        f"A: {a.record['model']} · sample {a.record['sample_id']}",
        f"B: {b.record['model']} · sample {b.record['sample_id']}",
    )
    try:
        return comparison_html(a, b, names=names).encode()
    except DagMathError as exc:
        raise NothingLoadedError(str(exc)) from None


def _pick(scored, args, side: int = 0) -> int:
    """The one row the options name (or the longest of those left, with ``--longest``);
    ``side`` 1 takes each option's second value where it was given twice (B of --compare)."""
    mask = scored["model"].notna()
    for option, column in (
        ("model", "model"),
        ("dataset", "dataset"),
        ("problem", "problem_id"),
        ("sample", "sample_id"),
    ):
        values = getattr(args, option) or []
        if values:
            value = values[min(side, len(values) - 1)]
            mask &= scored[column].astype(str) == str(value)
    rows = [i for i, keep in enumerate(mask.to_numpy()) if keep]
    if not rows:
        which = f" (side {'AB'[side]})" if args.compare else ""
        raise NothingLoadedError(
            f"no loaded trajectory matches --model/--dataset/--problem/--sample{which}"
        )
    if len(rows) > 1 and not args.longest:
        raise UsageError(
            f"{len(rows):,} trajectories match; narrow with --model, --dataset, --problem and "
            "--sample, or take the longest with --longest"
        )
    steps = scored["n_nodes"].to_numpy()
    return max(rows, key=lambda i: (int(steps[i]), -i))
