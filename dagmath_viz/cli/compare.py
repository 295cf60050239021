"""``dagmath compare``: paired outcomes of two models (or runs) over the problems they share.

Per problem: both right / only A / only B / both wrong, on the answer and on perfect
reasoning (closed and right), with the counts and the paired test of the Overview (the mean
per-problem difference A − B with its 95 % interval). A side is a model or one sample id of
a model (``MODEL@SAMPLE``): ``--models m@0,m@1`` pairs a Thought Anchors model's correct
and incorrect solutions. Reads what ``dagmath report`` reads (raw trajectories, scored
JSONL, folders, ``-``).
"""

from __future__ import annotations

import argparse
import csv
import io
import sys

import orjson

from dagmath_viz.cli.common import (
    EXIT_OK,
    EXIT_PARTIAL,
    NothingLoadedError,
    UsageError,
    add_command,
    pipeline,
    stdin_paths,
)
from dagmath_viz.cli.score import partial, report_issues
from dagmath_viz.text import json_printable, printable

__all__ = ["register", "run_compare"]

#: The per-problem columns written, in order.
COLUMNS = (
    "dataset",
    "problem_id",
    "answer_cell",
    "perfect_cell",
    "a_n",
    "a_pass_at_1",
    "a_prr",
    "b_n",
    "b_pass_at_1",
    "b_prr",
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``compare`` to the ``dagmath`` parser."""
    p = add_command(
        subparsers,
        "compare",
        help="paired outcomes of two models per shared problem",
        description=__doc__,
    )
    p.add_argument("paths", nargs="+", metavar="RUN", help="files or folders; - for stdin")
    p.add_argument(
        "--models",
        metavar="A,B",
        help="the two sides, each MODEL or MODEL@SAMPLE (needed unless exactly two models "
        "are loaded)",
    )
    p.add_argument("--answers", metavar="FILE", help="answers for raw trajectories")
    p.add_argument(
        "--rule",
        choices=("majority", "any", "all"),
        default="majority",
        help="with several samples per problem, a side is right when more than half / at "
        "least one / all of its scored samples are",
    )
    p.add_argument(
        "--format", choices=("table", "csv", "json"), default="table", help="output format"
    )
    p.set_defaults(func=run_compare)


def _scored(paths: list[str], answers: str | None, names):
    from dagmath_viz.score.record import records_frame

    run = pipeline().score_paths(paths, answers=answers)
    report_issues(run, None, names)
    records = list(run.records())
    if not records:
        shown = ", ".join(names.names.get(p, p) for p in paths)
        raise NothingLoadedError(f"no scored records found in {shown}")
    return records_frame(records), partial(run)


def _sides(spec: str | None, models: list[str]):
    from dagmath_viz.analysis.paired import parse_side
    from dagmath_viz.schema import DagMathError

    if spec is None:
        if len(models) != 2:
            shown = ", ".join(models[:8]) + (" ..." if len(models) > 8 else "")
            raise UsageError(f"{len(models)} models loaded ({shown}): choose two with --models")
        spec = ",".join(models)
    parts = [p.strip() for p in spec.split(",")]
    if len(parts) != 2 or not all(parts):
        raise UsageError(f"--models takes two names separated by a comma, got {spec!r}")
    try:
        return [parse_side(p, models) for p in parts]
    except DagMathError as exc:
        raise UsageError(str(exc)) from None


def run_compare(args: argparse.Namespace) -> int:
    """The ``compare`` command; returns the exit code."""
    from dagmath_viz.analysis.paired import paired_outcomes, summarise_pair
    from dagmath_viz.schema import DagMathError

    with stdin_paths(args.paths) as (paths, names):
        df, lost = _scored(paths, args.answers, names)
    a, b = _sides(args.models, sorted(df["model"].astype(str).unique()))
    try:
        table = paired_outcomes(df, a, b, args.rule)
    except DagMathError as exc:
        raise UsageError(str(exc)) from None
    if table.empty:
        raise NothingLoadedError(f"{a.label} and {b.label} share no scored problem")
    summary = summarise_pair(table, a, b, args.rule)
    done = EXIT_PARTIAL if lost else EXIT_OK
    rows = table[list(COLUMNS)]
    if args.format == "json":
        data = {**summary.as_dict(), "problems": rows.to_dict(orient="records")}
        out = orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY)
        sys.stdout.buffer.write(json_printable(out) + b"\n")
    elif args.format == "csv":
        buf = io.StringIO()
        rows.to_csv(buf, index=False, quoting=csv.QUOTE_MINIMAL)
        sys.stdout.write(printable(buf.getvalue()))
    else:
        sys.stdout.write(_text(summary, rows))
    sys.stdout.flush()
    return done


def _text(summary, rows) -> str:
    from dagmath_viz.analysis.paired import CELL_LABELS, CELLS
    from dagmath_viz.analysis.tables import format_percent

    lines = [
        f"A = {printable(summary.a.label, one_line=True)}, "
        f"B = {printable(summary.b.label, one_line=True)}: "
        f"{summary.n_problems} shared problems (rule: {summary.rule})",
    ]
    if summary.note:
        lines.append("note: " + summary.note)
    head = "measure".ljust(10) + "".join(CELL_LABELS[c].rjust(12) for c in CELLS)
    lines += ["", head]
    for measure, counts in summary.counts.items():
        lines.append(measure.ljust(10) + "".join(str(counts[c]).rjust(12) for c in CELLS))
    lines.append("")
    for metric, name in (("pass_at_1", "PASS@1"), ("prr", "PRR")):
        d = summary.differences[metric]
        few = " (few problems)" if d.small else ""
        lines.append(
            f"{name}(A) - {name}(B) = {format_percent(d.estimate)}, 95% interval "
            f"[{format_percent(d.low)}, {format_percent(d.high)}]{few}"
        )
    shown = rows.copy()
    for col in ("answer_cell", "perfect_cell"):
        shown[col] = shown[col].map(CELL_LABELS)
    for col in ("a_pass_at_1", "a_prr", "b_pass_at_1", "b_prr"):
        shown[col] = shown[col].map(format_percent)
    for col in ("dataset", "problem_id"):
        shown[col] = shown[col].map(lambda v: printable(str(v), one_line=True))
    lines += ["", shown.to_string(index=False), ""]
    return "\n".join(lines)
