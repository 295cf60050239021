"""``dagmath score``: score trajectories and write one JSON line each.

Reads files, folders, ``-`` (standard input) or a pipe; writes to ``-o`` (default
standard output). Exit 0 when everything was read, 4 when results were written but some
input could not be read (each named on stderr), 3 when nothing could be loaded.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

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
from dagmath_viz.schema import DagMathError

__all__ = ["MAX_ISSUES_SHOWN", "register", "report_issues", "run_score"]


MAX_ISSUES_SHOWN = 20


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
        "-o", "--output", default="-", metavar="OUT.jsonl", help="the scored JSONL (- is stdout)"
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
    with stdin_paths(args.paths) as (paths, names):
        checker = _checker(args)
        try:
            if args.dask:
                if args.field_map is not None:
                    raise UsageError("--map cannot be used with --dask (yet): score without it")
                return _score_on_dask(args, paths, names, checker)
            run = pipeline().score_paths(
                paths,
                answers=args.answers,
                workers=args.workers,
                checker=checker,
                progress=_progress(sys.stderr) if common.VERBOSITY >= 0 else None,
                exclude=[args.output, args.errors or "-"],  # never read this run's own output
                fields=args.field_map,
            )
        finally:
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


def _score_on_dask(args: argparse.Namespace, paths: list[str], names, checker) -> int:
    try:
        import distributed  # noqa: F401 - only to say clearly when it is missing

        from dagmath_viz.run.distributed import connect, score_on_dask
    except ImportError as exc:
        raise DagMathError(
            f"--dask needs dask[distributed] installed: pip install 'dagmath-viz[dask]' ({exc})"
        ) from None
    # "local": a cluster of this machine's cores, to try the path; else a scheduler address,
    # checked (reachable, with workers that import dagmath_viz) before any work is sent
    with connect(args.dask):
        run = score_on_dask(
            paths,
            answers=args.answers,
            checker=checker,
            exclude=[args.output],
            progress=_progress(sys.stderr) if common.VERBOSITY >= 0 else None,
        )
        checker.save()
        return _finish_score(args, run, names)


def _progress(stream):
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


def _finish_score(args: argparse.Namespace, run, names: StreamNames) -> int:
    report_issues(run, args.errors, names)
    say(
        f"dagmath: {run.files_read} files read, {len(run)} trajectories loaded, "
        f"{run.n_illegal} illegal, {run.n_unscored} without a reference answer, "
        f"{len(run.unreadable_files)} unreadable files"
    )
    if not len(run):
        shown = ", ".join("standard input" if p == "-" else p for p in args.paths)
        from dagmath_viz.formats.registry import TRAJECTORY_FILES

        why = "" if run.issues else f" (no {TRAJECTORY_FILES} file found)"
        raise NothingLoadedError(
            f"nothing to score: no trajectory could be loaded from {shown}{why}"
        )
    lines = run.lines() if not names.names else map(names.json_line, run.lines())
    write_atomic(args.output, lines)
    return EXIT_PARTIAL if partial(run) else EXIT_OK


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
