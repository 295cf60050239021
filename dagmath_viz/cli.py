"""The ``dagmath`` command: score, report, simulate, gsm.

Bad input never produces a traceback: every expected failure is a :class:`DagMathError`
or an ``OSError`` turned into one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import orjson

from dagmath_viz import __version__
from dagmath_viz.schema import DagMathError

__all__ = ["main"]

MAX_ISSUES_SHOWN = 20
EXIT_NOTHING = 2


def _progress(stream) -> callable:
    """A one-line progress bar on ``stream`` when it is a terminal, else nothing."""
    if not stream.isatty():
        return None

    def show(done: int, total: int) -> None:
        width = 30
        filled = width * done // max(total, 1)
        stream.write(f"\rscoring [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done >= total:
            stream.write("\n")
        stream.flush()

    return show


def _report_issues(result, errors_file: str | None) -> None:
    """Print the first issues of a load (anything with ``.issues``); all go to ``errors_file``."""
    issues = result.issues
    for issue in issues[:MAX_ISSUES_SHOWN]:
        print(f"dagmath: {issue.severity}: {issue}", file=sys.stderr)
    if len(issues) > MAX_ISSUES_SHOWN:
        hint = f" (all in {errors_file})" if errors_file else " (use --errors FILE for all)"
        print(f"dagmath: ... {len(issues) - MAX_ISSUES_SHOWN} more issues{hint}", file=sys.stderr)
    if errors_file:
        _write_atomic(errors_file, b"".join(str(i).encode() + b"\n" for i in issues))


def _write_atomic(target: str, data: bytes | Iterable[bytes]) -> None:
    """Write ``data`` (bytes, or chunks of it) to ``target`` (or stdout for "-") via a
    temporary file in its folder, so a reader never sees half a file."""
    chunks = [data] if isinstance(data, bytes) else data
    if target == "-":
        sys.stdout.buffer.writelines(chunks)
        sys.stdout.flush()
        return
    path = Path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb", buffering=2**20) as handle:
            handle.writelines(chunks)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _checker(args: argparse.Namespace):
    from dagmath_viz.answers import AnswerChecker, default_cache_file

    if args.no_cache:
        return AnswerChecker()
    if args.cache_dir:
        return AnswerChecker(cache_file=Path(args.cache_dir) / default_cache_file().name)
    return AnswerChecker(cache_file=default_cache_file())


def cmd_score(args: argparse.Namespace) -> int:
    checker = _checker(args)
    try:
        if args.dask:
            return _score_on_dask(args, checker)
        from dagmath_viz.pipeline import score_paths

        run = score_paths(
            args.paths,
            answers=args.answers,
            workers=args.workers,
            checker=checker,
            progress=_progress(sys.stderr),
            exclude=[args.output, args.errors or "-"],  # never read this run's own output
        )
    finally:
        checker.save()
        checker.close()
    return _finish_score(args, run)


def _score_on_dask(args: argparse.Namespace, checker) -> int:
    try:
        from distributed import Client

        from dagmath_viz.distributed import score_on_dask
    except ImportError as exc:
        raise DagMathError(f"--dask needs dask[distributed] installed ({exc})") from None
    # "local": a cluster of this machine's cores, to try the path; else a scheduler address
    client = Client(dashboard_address=None) if args.dask == "local" else Client(args.dask)
    with client:
        run = score_on_dask(
            args.paths, answers=args.answers, checker=checker, exclude=[args.output]
        )
        checker.save()
        return _finish_score(args, run)


def _finish_score(args: argparse.Namespace, run) -> int:
    _report_issues(run, args.errors)
    print(
        f"dagmath: {run.files_read} files read, {len(run)} trajectories loaded, "
        f"{run.n_illegal} illegal, {run.n_unscored} without a reference answer, "
        f"{len(run.unreadable_files)} unreadable files",
        file=sys.stderr,
    )
    if not len(run):
        print(
            "dagmath: error: nothing to score: no trajectory could be loaded from "
            + ", ".join(args.paths),
            file=sys.stderr,
        )
        return EXIT_NOTHING
    _write_atomic(args.output, run.lines())
    return 0


def _scored_frame(paths: Sequence[str], answers: str | None):
    from dagmath_viz.pipeline import score_paths
    from dagmath_viz.scoring import records_frame

    run = score_paths(paths, answers=answers)
    _report_issues(run, None)
    records = list(run.records())
    if not records:
        raise DagMathError("no scored records found in " + ", ".join(paths))
    return records_frame(records)


def cmd_report(args: argparse.Namespace) -> int:
    from dagmath_viz.metrics import summarise
    from dagmath_viz.tables import format_percent, grouping_frame, report_table

    df = _scored_frame(args.paths, args.answers)
    by = [c.strip() for c in args.by.split(",") if c.strip()]
    df = grouping_frame(df, by)  # adds derived columns (difficulty_group); refuses unknown ones
    if args.format == "json" and args.table == "leaderboard":
        rows = summarise(df, by=by, n_boot=args.bootstrap)
        sys.stdout.buffer.write(
            orjson.dumps(rows, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY) + b"\n"
        )
        return 0
    table = report_table(df, args.table, by, n_boot=args.bootstrap)
    if args.format == "json":
        sys.stdout.write(table.to_json(orient="records", indent=2) + "\n")
        return 0
    if args.format == "csv":
        sys.stdout.write(table.to_csv(index=False))
        return 0
    shown = table.copy()
    for col in shown.columns:
        rate = col in {"pass_at_1", "r_hat", "gap", "auc", "accuracy"}
        if rate or col.endswith(("_low", "_high", "_mean", "_std")):
            shown[col] = shown[col].map(format_percent)
    sys.stdout.write(shown.to_string(index=False) + "\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dagmath", description="Score and report DAG-MATH reasoning trajectories."
    )
    parser.add_argument("--version", action="version", version=f"dagmath {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    score = sub.add_parser("score", help="score trajectories and write one JSON line each")
    score.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (recursive)")
    score.add_argument("--answers", metavar="FILE", help="reference answers (JSON, JSONL, CSV)")
    score.add_argument(
        "-o",
        "--output",
        default="-",
        metavar="OUT.jsonl",
        help="where to write the scored JSONL (default: stdout)",
    )
    score.add_argument("--errors", metavar="FILE", help="also write every load issue here")
    score.add_argument(
        "-j",
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="processes that read and measure files (default: every CPU; small runs use one)",
    )
    score.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="keep answer verdicts between runs here (default: $DAGMATH_CACHE_DIR, else "
        "~/.cache/dagmath-viz)",
    )
    score.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the verdict cache"
    )
    score.add_argument(
        "--dask",
        metavar="SCHEDULER",
        help="score on a Dask cluster: a scheduler address such as tcp://host:8786, or "
        "'local' for one on this machine (see docs/scaling.md)",
    )
    score.set_defaults(func=cmd_score)

    report = sub.add_parser("report", help="aggregate scored JSONL (or raw trajectories)")
    report.add_argument("paths", nargs="+", metavar="SCORED.jsonl")
    report.add_argument("--answers", metavar="FILE", help="answers for raw trajectories")
    report.add_argument(
        "--by",
        default="model,dataset",
        help="grouping columns, e.g. model,difficulty_group (group k holds difficulty (k-1, k])",
    )
    report.add_argument(
        "--table",
        choices=("leaderboard", "spread", "closeness", "shift"),
        default="leaderboard",
        help="leaderboard; spread: across-model std of PASS@1, R-hat, AUC within each group "
        "(Table 2's Std row); closeness: accuracy by closeness bin; shift: Appendix F's "
        "Correct -> Perfect shift of each graph statistic, with the gap",
    )
    report.add_argument("--format", choices=("table", "csv", "json"), default="table")
    report.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        metavar="N",
        help="0 turns the 95%% intervals off; any other value keeps them (they are now "
        "Hall's skew-corrected t intervals over problems, not a bootstrap)",
    )
    report.set_defaults(func=cmd_report)

    # Imported here, not at the top: `dagmath score` should not pay for pandas and the
    # logic package at start-up (their parsers only need argparse).
    from dagmath_viz.cli_simulate import add_simulate_parser
    from dagmath_viz.generation.cli import register as register_generation
    from dagmath_viz.logic.cli import add_gsm_parser

    add_simulate_parser(sub)
    add_gsm_parser(sub)
    register_generation(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except DagMathError as exc:
        print(f"dagmath: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"dagmath: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("dagmath: interrupted", file=sys.stderr)
        return 130
