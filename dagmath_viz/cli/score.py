"""``dagmath score``: score trajectories and write one JSON line each.

Reads files, folders, ``-`` (standard input) or a pipe; writes to ``-o`` (default
standard output): JSONL, or one typed table when the name ends in .parquet or .csv
(read any of them back with dagmath_viz.read_scored). Exit 0 when everything was read,
4 when results were written but some input could not be read (each named on stderr), 3
when nothing could be loaded.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dagmath_viz import jsonio
from dagmath_viz.cli import common
from dagmath_viz.cli.common import (
    EXIT_OK,
    EXIT_PARTIAL,
    NothingLoadedError,
    StreamNames,
    UsageError,
    add_command,
    add_map_option,
    pipeline,
    positive,
    say,
    stdin_paths,
    write_atomic,
)
from dagmath_viz.progress import Progress
from dagmath_viz.schema import DagMathError
from dagmath_viz.text import counted

__all__ = ["MAX_ISSUES_SHOWN", "register", "report_issues", "run_score"]


MAX_ISSUES_SHOWN = 20
#: Output suffixes written as one table (``dagmath_viz.store.results.SUFFIXES``).
TABLE_SUFFIXES = (".parquet", ".csv")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``score`` to the ``dagmath`` parser."""
    score = add_command(
        subparsers,
        "score",
        help="score trajectories and write one JSON line each",
        description=__doc__,
    )
    score.add_argument(
        "paths", nargs="+", metavar="PATH", help="files or folders (recursive); - for stdin"
    )
    score.add_argument("--answers", metavar="FILE", help="reference answers (JSON, JSONL, CSV)")
    add_map_option(score)
    score.add_argument(
        "--dataset",
        metavar="NAME",
        help="the data set of trajectories read from - or a pipe, which have no folder to "
        f"name it (default: {common.STDIN_DATASET})",
    )
    score.add_argument(
        "-o",
        "--output",
        default="-",
        metavar="OUT",
        help="where the scored records go, in the format its suffix names: .parquet or .csv "
        "(one typed table), else JSONL; - is stdout, as JSONL",
    )
    score.add_argument("--errors", metavar="FILE", help="also write every load issue here")
    score.add_argument(
        "-j",
        "--workers",
        type=positive,
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
    score.set_defaults(func=run_score)


def run_score(args: argparse.Namespace) -> int:
    """The ``score`` command; returns the exit code."""
    with stdin_paths(args.paths, args.dataset) as (paths, names):
        checker = _checker(args)
        progress = Progress("scoring", unit="files") if common.VERBOSITY >= 0 else None
        try:
            if args.dask:
                if args.field_map is not None:
                    raise UsageError("--map cannot be used with --dask (yet): score without it")
                return _score_on_dask(args, paths, names, checker, progress)
            run = pipeline().score_paths(
                paths,
                answers=args.answers,
                workers=args.workers,
                checker=checker,
                progress=progress,
                exclude=[args.output, args.errors or "-"],  # never read this run's own output
                fields=args.field_map,
            )
        finally:
            if progress is not None:
                progress.close()  # the bar ends before any other line is printed
            checker.save()
            checker.close()
        return _finish_score(args, run, names)


def _checker(args: argparse.Namespace):
    from dagmath_viz.answers.check import AnswerChecker, default_cache_file

    if args.no_cache:
        return AnswerChecker()
    if args.cache_dir:
        return AnswerChecker(cache_file=Path(args.cache_dir) / default_cache_file().name)
    return AnswerChecker(cache_file=default_cache_file())


def _score_on_dask(
    args: argparse.Namespace, paths: list[str], names, checker, progress: Progress | None
) -> int:
    try:
        import distributed  # noqa: F401 - only to say clearly when it is missing

        from dagmath_viz.run.distributed import connect, score_on_dask, watched, worker_grace
    except ImportError as exc:
        raise DagMathError(
            f"--dask needs dask[distributed] installed: pip install 'dagmath-viz[dask]' ({exc})"
        ) from None
    # "local": a cluster of this machine's cores, to try the path; else a scheduler address,
    # checked (reachable, with workers that import dagmath_viz) before any work is sent;
    # a cluster lost mid-run is one line (exit 1), and Dask's own logs stay off stderr
    grace = worker_grace()  # a bad $DAGMATH_DASK_WORKER_GRACE stops the run before it starts
    client = connect(args.dask, quiet=common.VERBOSITY <= 0)
    with client, watched(client, f"--dask {args.dask}", grace):
        run = score_on_dask(
            paths,
            answers=args.answers,
            checker=checker,
            exclude=[args.output],
            progress=progress,
        )
        if progress is not None:
            progress.close()
        checker.save()
        return _finish_score(args, run, names)


def _finish_score(args: argparse.Namespace, run, names: StreamNames) -> int:
    report_issues(run, args.errors, names)
    say(
        f"dagmath: {counted(run.files_read, 'file')} read, "
        f"{counted(len(run), 'trajectory', 'trajectories')} loaded, "
        f"{run.n_illegal:,} illegal, {run.n_unscored:,} without a reference answer, "
        f"{counted(len(run.unreadable_files), 'unreadable file')}"
    )
    if not len(run):
        shown = ", ".join("standard input" if p == "-" else p for p in args.paths)
        from dagmath_viz.formats.registry import TRAJECTORY_FILES

        why = "" if run.issues else f" (no {TRAJECTORY_FILES} file found)"
        raise NothingLoadedError(
            f"nothing to score: no trajectory could be loaded from {shown}{why}"
        )
    lines = run.lines() if not names.names else map(names.json_line, run.lines())
    write_atomic(args.output, _output_bytes(args.output, lines))
    return EXIT_PARTIAL if partial(run) else EXIT_OK


def _output_bytes(output: str, lines):
    """The JSON lines as they are, or as one Parquet or CSV table when ``output``'s suffix
    names one (:mod:`dagmath_viz.store.results`: the same records, typed columns)."""
    suffix = Path(output).suffix.lower() if output != "-" else ""
    if suffix not in TABLE_SUFFIXES:
        return lines  # JSONL needs no pandas: it is not imported
    from dagmath_viz.store import results

    data = b"".join(lines)  # Dask hands back chunks that need not end at a line
    table = results.scored_table(d.value for d in jsonio.parse_lines(data))
    return results.table_bytes(table, suffix)


def report_issues(result, errors_file: str | None, names: StreamNames | None = None) -> None:
    """Print the first issues of a load (all with ``--verbose``); all go to ``errors_file``."""
    names = names or StreamNames()
    issues = [names.text(str(i)) for i in result.issues]
    severities = [i.severity for i in result.issues]
    shown = len(issues) if common.VERBOSITY > 0 else MAX_ISSUES_SHOWN
    for severity, issue in list(zip(severities, issues, strict=True))[:shown]:
        say(f"dagmath: {severity}: {issue}")
    if len(issues) > shown:
        hint = f" (all in {errors_file})" if errors_file else " (--errors FILE or -v for all)"
        say(f"dagmath: ... {len(issues) - shown} more issues{hint}")
    if errors_file:
        write_atomic(errors_file, b"".join(i.encode() + b"\n" for i in issues))


def partial(run) -> bool:
    """True when a file, line or record was refused: data was lost, not just filled in."""
    return any(issue.severity == "error" for issue in run.issues)
