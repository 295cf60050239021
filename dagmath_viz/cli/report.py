"""``dagmath report``: aggregate scored JSONL (or raw trajectories) per model and dataset.

Reads files, folders, ``-`` (standard input, e.g. ``dagmath score run/ | dagmath report -``)
or a pipe. Names are printed with control characters escaped (``\\x1b``), so a model name
cannot drive the terminal; ``--format csv`` neutralises cells that would start a formula
(``=HYPERLINK(…)``, ``@SUM(…)``) as the app's downloads do (:mod:`dagmath_viz.export`).
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import os
import sys

import orjson

from dagmath_viz.cli.common import (
    EXIT_OK,
    EXIT_PARTIAL,
    NothingLoadedError,
    UsageError,
    add_command,
    add_map_option,
    natural,
    pipeline,
    say,
    stdin_paths,
)
from dagmath_viz.cli.score import partial, report_issues
from dagmath_viz.schema import InputError
from dagmath_viz.text import json_printable, printable

__all__ = ["register", "run_report"]

RATE_COLUMNS = {"pass_at_1", "r_hat", "gap", "auc", "accuracy"}
#: Table 1's mean statistics (``--table table1``), shown with one decimal.
GRAPH_MEANS = {"n_nodes", "n_edges", "density_percent", "max_in_degree", "max_out_degree"}


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``report`` to the ``dagmath`` parser."""
    report = add_command(
        subparsers,
        "report",
        help="aggregate scored JSONL (or raw trajectories)",
        description=__doc__,
    )
    report.add_argument(
        "paths", nargs="+", metavar="SCORED.jsonl", help="files or folders; - for stdin"
    )
    report.add_argument("--answers", metavar="FILE", help="answers for raw trajectories")
    add_map_option(report)
    report.add_argument(
        "--by",
        default="model,dataset",
        help="grouping columns, e.g. model,difficulty_group (group k holds difficulty (k-1, k]); "
        "label: count the labels on the loaded trajectories instead (label,model: per model)",
    )
    report.add_argument(
        "--labels",
        metavar="FILE",
        help="with --by label: the label file (JSONL); default: the sidecar beside the first "
        "path (as the app finds it)",
    )
    report.add_argument(
        "--table",
        choices=("leaderboard", "table1", "spread", "closeness", "shift"),
        default="leaderboard",
        help="leaderboard; table1: the paper's Table 1, per group and cohort (All, "
        "Incorrect, Correct, Perfect) the mean #nodes, #edges, density %%, max in-degree and "
        "max out-degree; spread: across-model std of PASS@1, R-hat, AUC within each group "
        "(Table 2's Std row); closeness: accuracy by closeness bin; shift: Appendix F's "
        "Correct -> Perfect shift of each graph statistic, with the gap",
    )
    report.add_argument(
        "--format", choices=("table", "csv", "json"), default="table", help="output format"
    )
    report.add_argument(
        "--wide",
        action="store_true",
        help="--format table: every column of the leaderboard (by default a rate and its "
        "interval share a cell, and the class counts are left to --wide, csv and json)",
    )
    report.add_argument(
        "--intervals",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="95%% intervals over problems (README, Definitions: Hall's skew-corrected t "
        "joined with a Wilson score interval; not a bootstrap)",
    )
    report.add_argument(
        "--bootstrap",
        type=natural,
        default=None,
        metavar="N",
        help="deprecated (it named a bootstrap that is no longer one): 0 is --no-intervals, "
        "any other N --intervals",
    )
    report.set_defaults(func=run_report)


def _intervals(args: argparse.Namespace) -> int:
    """1 with intervals, 0 without: what ``n_boot`` means to the tables now."""
    if args.bootstrap is None:
        return int(args.intervals)
    say("dagmath: warning: --bootstrap N is deprecated; use --intervals or --no-intervals")
    return int(args.bootstrap > 0)


def _scored_frame(paths: list[str], answers: str | None, names, fields=None):
    from dagmath_viz.jsonio import NO_SUCH_FILE
    from dagmath_viz.score.record import records_frame

    missing = [p for p in paths if p != "-" and not os.path.lexists(p)]
    if missing and len(missing) == len(paths):  # nothing to read: said as every command says it
        raise InputError(f"{names.names.get(missing[0], missing[0])}: {NO_SUCH_FILE}")

    run = pipeline().score_paths(paths, answers=answers, fields=fields)
    report_issues(run, None, names)
    records = list(run.records())
    if not records:
        shown = ", ".join(names.names.get(p, p) for p in paths)
        raise NothingLoadedError(f"no scored records found in {shown}")
    return records_frame(records), partial(run)


def run_report(args: argparse.Namespace) -> int:
    """The ``report`` command; returns the exit code."""
    from dagmath_viz.analysis.metrics import summarise
    from dagmath_viz.analysis.tables import (
        compact_leaderboard,
        grouping_frame,
        logic_strategy_models,
        report_table,
    )
    from dagmath_viz.schema import DagMathError

    by = [c.strip() for c in args.by.split(",") if c.strip()]
    n_boot = _intervals(args)
    with stdin_paths(args.paths) as (paths, names):
        df, lost = _scored_frame(paths, args.answers, names, args.field_map)
    try:  # adds derived columns (difficulty_group); refuses unknown ones
        df = grouping_frame(df, [c for c in by if c != "label"])
    except DagMathError as exc:  # a wrong --by is a usage error
        raise UsageError(str(exc)) from None
    done = EXIT_PARTIAL if lost else EXIT_OK
    if "label" in by:
        table, unread = _label_table(df, by, args.labels, paths)
        return _write_table(table, args.format, EXIT_PARTIAL if unread else done)
    if args.format == "json" and args.table == "leaderboard":
        rows = summarise(df, by=by, n_boot=n_boot)
        data = orjson.dumps(rows, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY)
        sys.stdout.buffer.write(json_printable(data) + b"\n")
        sys.stdout.flush()
        return done
    table = report_table(df, args.table, by, n_boot=n_boot)
    compact = args.table == "leaderboard" and not args.wide
    return _write_table(
        compact_leaderboard(table, logic_strategy_models(df))
        if compact and args.format == "table"
        else table,
        args.format,
        done,
    )


def _label_table(df, by: list[str], named: str | None, paths: list[str]):
    """``--by label``: the label counts of the loaded trajectories, and whether any line of
    the label file could not be read (each such line is named on stderr)."""
    from dagmath_viz.schema import DagMathError
    from dagmath_viz.store.labels import label_counts, labels_within, read_labels, sidecar_path

    if named is None and (not paths or paths[0] == "-"):
        raise UsageError("--by label on standard input needs --labels FILE")
    path = named if named is not None else str(sidecar_path(paths[0]))
    if not os.path.exists(path):
        where = "" if named else " (the sidecar beside the data; name another with --labels)"
        raise InputError(f"{path}: no such label file{where}")
    found = read_labels(path)
    for issue in found.issues:
        say(f"dagmath: {issue.severity}: {printable(str(issue), one_line=True)}")
    kept, outside = labels_within(found, df)
    if outside:
        say(f"dagmath: note: {outside:,} label(s) in {path} name trajectories not loaded here; "
            "not counted")  # fmt: skip
    others = [c for c in by if c != "label"]
    try:
        table = label_counts([kept], by=others, scored=df)
    except DagMathError as exc:
        raise UsageError(str(exc)) from None
    return table, any(i.severity == "error" for i in found.issues)


def _write_table(table, fmt: str, done: int) -> int:
    """``table`` on standard output as a text table, CSV or JSON; returns ``done``."""
    from dagmath_viz.analysis.tables import format_percent

    if fmt == "json":
        text = table.to_json(orient="records", indent=2) + "\n"
        sys.stdout.buffer.write(json_printable(text.encode("utf-8")))
        sys.stdout.flush()
        return done
    if fmt == "csv":
        from dagmath_viz.export import neutralise_formulas

        out = io.StringIO()
        neutralise_formulas(table).to_csv(out, index=False, quoting=csv.QUOTE_MINIMAL)
        sys.stdout.write(printable(out.getvalue()))
        return done
    if table.empty:
        sys.stdout.write("(no rows)\n")
        return done
    shown = table.copy()
    for col in shown.columns:
        if col in GRAPH_MEANS:  # the paper prints Table 1's means with one decimal
            shown[col] = shown[col].map(lambda v: "–" if math.isnan(v) else f"{v:.1f}")
        elif col in RATE_COLUMNS or col.endswith(("_low", "_high", "_mean", "_std")):
            shown[col] = shown[col].map(format_percent)
        else:  # by value, not dtype: pandas 3 keeps text in its own str dtype
            shown[col] = shown[col].map(
                lambda v: printable(v, one_line=True) if isinstance(v, str) else v
            )
    sys.stdout.write(shown.to_string(index=False) + "\n")
    return done
