"""The ``dagmath`` command: one parser, one error handler, one module per sub-command.

Adding a sub-command: write a module with ``register(subparsers)`` that adds its parser
with :func:`dagmath_viz.cli.common.add_command` (which adds ``-q``/``-v`` and shows defaults
in ``--help``) and sets its handler with ``parser.set_defaults(func=handler)``, where
``handler(args) -> int`` returns an exit code from :mod:`dagmath_viz.cli.common`. Then add
the module's name to :data:`COMMANDS` and its commands' names to :data:`COMMAND_MODULES`
(a test checks the two agree). A handler never catches errors to print them:
it raises :class:`~dagmath_viz.schema.DagMathError` (``UsageError`` for clashing options,
``NothingLoadedError`` when the inputs hold nothing) or lets an ``OSError`` through, and
:func:`main` turns each into one line on stderr and its exit code. A handler that accepts
options it passes on to another program sets ``pass_through=True`` and finds them in
``args.extra``.

Exit codes (README "Command line"): 0 ok, 1 error, 2 usage, 3 nothing loaded, 4 results
written but some input unreadable, 70 internal error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence

from dagmath_viz import __version__
from dagmath_viz.cli import common
from dagmath_viz.schema import DagMathError

__all__ = ["COMMANDS", "COMMAND_MODULES", "build_parser", "main"]


#: The modules that each ``register(subparsers)`` their sub-commands, in ``--help`` order.
#: Imported when the parser is built: each keeps its heavy imports inside its handlers.
COMMANDS = (
    "dagmath_viz.cli.score",
    "dagmath_viz.cli.report",
    "dagmath_viz.cli.compare",
    "dagmath_viz.cli.simulate",
    "dagmath_viz.cli.app",
    "dagmath_viz.cli.gsm",
    "dagmath_viz.cli.generate",
    "dagmath_viz.cli.completion",
    "dagmath_viz.cli.export_html",
    "dagmath_viz.cli.labels",
)

#: Each sub-command and the module of :data:`COMMANDS` that registers it: ``dagmath NAME
#: ...`` imports that module alone (start-up is part of every run's time); anything else
#: (``dagmath --help``, a name that is not a command) builds the whole parser.
COMMAND_MODULES = {
    "score": "dagmath_viz.cli.score",
    "report": "dagmath_viz.cli.report",
    "compare": "dagmath_viz.cli.compare",
    "simulate": "dagmath_viz.cli.simulate",
    "app": "dagmath_viz.cli.app",
    "gsm": "dagmath_viz.cli.gsm",
    "generate": "dagmath_viz.cli.generate",
    "gold": "dagmath_viz.cli.generate",
    "depends": "dagmath_viz.cli.generate",
    "completion": "dagmath_viz.cli.completion",
    "export-html": "dagmath_viz.cli.export_html",
    "labels": "dagmath_viz.cli.labels",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (never raises, never shows a traceback
    unless ``--verbose`` and the failure is a bug)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv and argv[0] in COMMAND_MODULES else None)
    if not argv:  # bare `dagmath`: what it can do, not a usage error
        try:
            parser.print_help()
        except BrokenPipeError:
            _reader_went_away()
        return common.EXIT_OK
    try:
        args, extra = parser.parse_known_args(argv)
        if extra and not getattr(args, "pass_through", False):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exc:  # --help, --version, or a usage error argparse printed
        return exc.code if isinstance(exc.code, int) else common.EXIT_USAGE
    args.extra = extra
    common.VERBOSITY = -1 if getattr(args, "quiet", False) else int(getattr(args, "verbose", 0))
    prog = "dagmath"  # every runtime error reads "dagmath: error: ..."
    try:
        return int(args.func(args) or 0)
    except common.UsageError as exc:
        _error(prog, f"{exc} (see 'dagmath {args.command} --help')")
        return common.EXIT_USAGE
    except common.NothingLoadedError as exc:
        _error(prog, exc)
        return common.EXIT_NOTHING
    except DagMathError as exc:
        _error(prog, exc)
        return common.EXIT_ERROR
    except BrokenPipeError:
        return _reader_went_away()
    except OSError as exc:
        _error(prog, _os_error_text(exc))
        return common.EXIT_ERROR
    except KeyboardInterrupt:
        print("dagmath: interrupted", file=sys.stderr)
        return common.EXIT_INTERRUPTED
    except ModuleNotFoundError as exc:
        if not exc.name or exc.name.split(".")[0] == "dagmath_viz":
            return _internal(prog, exc)
        # a scoring-only install (README "Install") lacks the app's packages: not a bug
        _error(
            prog,
            f"dagmath {args.command} needs the Python package '{exc.name}', which is not "
            "installed (pip install dagmath-viz installs everything)",
        )
        return common.EXIT_ERROR
    except Exception as exc:
        return _internal(prog, exc)


def _internal(prog: str, exc: Exception) -> int:
    """A bug: say so in one line, and how to see more."""
    if common.VERBOSITY > 0:
        traceback.print_exc()
    hint = "" if common.VERBOSITY > 0 else "; run with --verbose for the traceback"
    _error(prog, f"internal error ({type(exc).__name__}: {exc}){hint}")
    return common.EXIT_INTERNAL


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``dagmath`` parser with every registered sub-command, or with only the one that
    registers ``command`` (a name of :data:`COMMAND_MODULES`): ``dagmath COMMAND ...``
    parses, runs and fails the same either way, its sub-command being the first word."""
    parser = argparse.ArgumentParser(
        prog="dagmath",
        description="Score, report and explore DAG-MATH reasoning trajectories.",
        epilog="Exit codes: 0 ok, 1 error, 2 usage, 3 nothing loaded, 4 results written but "
        "some input unreadable, 70 internal error, 130 interrupted.",
        formatter_class=common.HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"dagmath {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS if command is None else (COMMAND_MODULES[command],):
        importlib.import_module(name).register(sub)
    return parser


def _error(prog: str, message: object) -> None:
    text = " ".join(str(message).split()) or type(message).__name__
    print(f"{prog}: error: {common.printable(text)}", file=sys.stderr)


def _os_error_text(exc: OSError) -> str:
    """``name: reason`` when the error names a file, else the reason alone (never ``: x``)."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    names = [str(n) for n in (exc.filename, exc.filename2) if n not in (None, "")]
    return f"{' -> '.join(names)}: {reason}" if names else reason


def _reader_went_away() -> int:
    """stdout's reader closed it (``dagmath score x | head``): stop quietly, exit 0.

    The reader took what it wanted, so this is not a failure: exit 0 keeps
    ``set -o pipefail`` scripts (and CI) going. Python would complain again while flushing
    stdout at exit; point it at /dev/null first.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return common.EXIT_OK
