"""What every ``dagmath`` sub-command shares: exit codes, errors, output, and the pipeline.

A command module imports from here, never from :mod:`dagmath_viz.cli` itself, so the
package has no import cycle: ``cli/__init__`` imports the command modules, and they import
this module.
"""

from __future__ import annotations

import argparse
import os
import stat
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import orjson

from dagmath_viz import jsonio
from dagmath_viz.formats import json_records
from dagmath_viz.formats.fieldmap import FieldMap
from dagmath_viz.jsonio import write_atomic
from dagmath_viz.schema import DagMathError, InputError
from dagmath_viz.text import printable

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_NOTHING",
    "EXIT_OK",
    "EXIT_PARTIAL",
    "EXIT_USAGE",
    "HelpFormatter",
    "NothingLoadedError",
    "UsageError",
    "add_command",
    "natural",
    "pipeline",
    "positive",
    "printable",
    "say",
    "stdin_paths",
    "write_atomic",
]


#: Exit codes (README "Command line"): one meaning each.
EXIT_OK = 0  # everything asked for was done
EXIT_ERROR = 1  # an error stopped the command (a bad input file, an unwritable output)
EXIT_USAGE = 2  # the command line itself is wrong (argparse's own code)
EXIT_NOTHING = 3  # the inputs were read but held nothing to work on
EXIT_PARTIAL = 4  # results were written, but some input could not be read (named on stderr)
EXIT_INTERNAL = 70  # a bug (EX_SOFTWARE); --verbose shows the traceback
EXIT_INTERRUPTED = 130  # Ctrl-C


#: How chatty the command is: -1 with --quiet, 0 by default, 1 with --verbose.
VERBOSITY = 0


# --------------------------------------------------------------------------- the parser


def add_command(
    subparsers: argparse._SubParsersAction, name: str, **kwargs
) -> argparse.ArgumentParser:
    """Add a sub-command with the shared options (``-q``, ``-v``) and the help formatter.

    Every command module's ``register(subparsers)`` should add its parsers through this, then
    ``set_defaults(func=handler)`` where ``handler(args) -> exit code``.
    """
    kwargs.setdefault("formatter_class", HelpFormatter)
    # module docstrings make the descriptions: drop their reST quotes for the terminal
    kwargs["description"] = (kwargs.get("description") or kwargs.get("help", "")).replace("``", "")
    return subparsers.add_parser(name, parents=[COMMON, *kwargs.pop("parents", [])], **kwargs)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """``--help`` shows each option's default, and descriptions keep their line breaks.

    A default of None or False is not shown (the help says what no value means), nor one
    the help already mentions.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS):
            return text
        if action.option_strings or action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE):
            text += " (default: %(default)s)"
        return text


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_mutually_exclusive_group()
    group.add_argument(
        "-q", "--quiet", action="store_true", help="print errors only (no progress, no summary)"
    )
    group.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print every load issue, and a traceback if dagmath itself fails",
    )
    return common


COMMON = _common_options()


# --------------------------------------------------------------------------- argument types


def field_map(text: str) -> FieldMap:
    """An argparse type: a field map, ``FIELD=COLUMN,...`` (:class:`FieldMap`)."""
    try:
        return FieldMap.parse(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix(f"--map {text!r}: ")) from None


def add_map_option(parser: argparse.ArgumentParser) -> None:
    """``--map``: read records whose fields are named otherwise (README "Bring your own
    data")."""
    parser.add_argument(
        "--map",
        dest="field_map",
        type=field_map,
        metavar="FIELD=COLUMN,...",
        help="our field = the file's field, e.g. problem_id=unique_id,problem_text=problem",
    )


def positive(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    return _at_least(text, 1)


def natural(text: str) -> int:
    """An argparse type: an integer of at least 0."""
    return _at_least(text, 0)


def positive_float(text: str) -> float:
    """An argparse type: a number greater than 0 (``nan`` is refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def _at_least(text: str, low: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
    return value


# --------------------------------------------------------------------------- input and output


#: The data set a stream's trajectories belong to unless ``--dataset`` names another.
STDIN_DATASET = "stdin"


@contextmanager
def stdin_paths(
    paths: Sequence[str], dataset: str | None = None
) -> Iterator[tuple[list[str], StreamNames]]:
    """``paths`` with ``-`` (standard input) and pipes read into files the loader can read.

    The loader knows a file by its suffix; a pipe has none, so its bytes go to a private
    temporary folder, as ``stdin.json`` when they parse as one JSON document, else as
    ``stdin.jsonl``. The loader names a record's data set after its file's folder, so that
    folder is named ``dataset`` (default :data:`STDIN_DATASET`; it was a bare ``0``, which
    matched no answer key). The folder is removed on exit. Yields the paths to load and
    the names to show for the copies (``<stdin>``, or the pipe's own path).

    Raises:
        UsageError: ``dataset`` cannot be a folder's name.
    """
    dataset = STDIN_DATASET if dataset is None else _folder_name(dataset)
    names = StreamNames()
    if not any(p == "-" or _is_stream(p) for p in paths):
        yield list(paths), names
        return
    with tempfile.TemporaryDirectory(prefix="dagmath-stdin-") as folder:
        out: list[str] = []
        for i, raw in enumerate(paths):
            if raw != "-" and not _is_stream(raw):
                out.append(raw)
                continue
            if raw == "-":
                data = sys.stdin.buffer.read()
            else:
                with open(raw, "rb") as handle:
                    data = handle.read()
            if not data.strip():
                name = "standard input" if raw == "-" else raw
                raise NothingLoadedError(f"{name} is empty: nothing to read")
            target = Path(folder) / f"{i}" / dataset / f"stdin{_suffix(data)}"
            target.parent.mkdir(parents=True)
            target.write_bytes(data)
            out.append(str(target))
            names.names[str(target)] = "<stdin>" if raw == "-" else raw
        yield out, names


def _folder_name(name: str) -> str:
    """``name`` if it can name one folder (the data set of a stream), else a UsageError."""
    if not name.strip() or name in (".", "..") or any(c in name for c in "/\\\0"):
        raise UsageError(f"--dataset {name!r}: a data set name is one folder name (no / or \\)")
    return name


def _is_stream(raw: str) -> bool:
    """A FIFO or character device (``<(cmd)``, ``/dev/stdin``): read like ``-``."""
    try:
        mode = os.stat(raw).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def _suffix(data: bytes) -> str:
    json_suffix, jsonl_suffix = json_records.SUFFIXES
    try:
        jsonio.parse(data)  # one document: JSON; anything else is read as JSONL
    except InputError:
        return jsonl_suffix
    return json_suffix


class StreamNames:
    """Temporary copies of streams, and the names to show for them instead."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def text(self, text: str) -> str:
        """``text`` with each temporary path replaced by the stream's name."""
        for tmp, name in self.names.items():
            text = text.replace(tmp, name)
        return text

    def json_line(self, line: bytes) -> bytes:
        """A scored JSON line whose ``source`` names the stream, not its temporary copy."""
        for tmp, name in self.names.items():
            line = line.replace(orjson.dumps(tmp)[1:-1], orjson.dumps(name)[1:-1])
        return line


def pipeline():
    """The scoring pipeline module: the CLI's one import of it (imported on first use, so
    that ``dagmath --help`` and ``dagmath simulate`` do not load it)."""
    from dagmath_viz.run import pool as module

    return module


# --------------------------------------------------------------------------- errors


class UsageError(DagMathError):
    """The command line is wrong in a way argparse cannot see (two options that clash)."""


class NothingLoadedError(InputError):
    """The inputs were read, but none held anything the command could use."""


# --------------------------------------------------------------------------- terminal output


def say(message: str, *, level: int = 0) -> None:
    """Print ``message`` on stderr when the verbosity is at least ``level``.

    Level 0 is the default output (summaries, the first issues), 1 only with ``--verbose``.
    Errors never go through here: they always print (see :func:`dagmath_viz.cli.main`).
    """
    if VERBOSITY >= level:
        print(printable(message), file=sys.stderr)
