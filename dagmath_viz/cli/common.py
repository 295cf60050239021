"""What every ``dagmath`` sub-command shares: exit codes, errors, output, and the pipeline.

A command module imports from here, never from :mod:`dagmath_viz.cli` itself, so the
package has no import cycle: ``cli/__init__`` imports the command modules, and they import
this module.
"""

from __future__ import annotations

import argparse
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import orjson

from dagmath_viz import jsonio
from dagmath_viz.jsonio import write_atomic
from dagmath_viz.schema import DagMathError, InputError

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


@contextmanager
def stdin_paths(paths: Sequence[str]) -> Iterator[tuple[list[str], StreamNames]]:
    """``paths`` with ``-`` (standard input) and pipes read into files the loader can read.

    The loader knows a file by its suffix; a pipe has none, so its bytes go to a private
    temporary folder, as ``stdin.json`` when they parse as one JSON document, else as
    ``stdin.jsonl``. The folder is removed on exit. Yields the paths to load and the
    names to show for the copies (``<stdin>``, or the pipe's own path).
    """
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
            target = Path(folder) / f"{i}" / f"stdin{_suffix(data)}"
            target.parent.mkdir()
            target.write_bytes(data)
            out.append(str(target))
            names.names[str(target)] = "<stdin>" if raw == "-" else raw
        yield out, names


def _is_stream(raw: str) -> bool:
    """A FIFO or character device (``<(cmd)``, ``/dev/stdin``): read like ``-``."""
    try:
        mode = os.stat(raw).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def _suffix(data: bytes) -> str:
    try:
        jsonio.parse(data)  # one document: JSON; anything else is read as JSONL
    except InputError:
        return ".jsonl"
    return ".json"


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


# C0 and C1 control characters (tab and newline excepted), DEL, the bidirectional
# controls that can make "24" display as "42", and the characters that show as nothing
# (zero-width space and joiners, word joiner, BOM, soft hyphen: "good-model\u200b" would
# print as "good-model"): shown as visible escapes, never sent raw.
_BIDI_AND_C1 = (
    r"\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e"
    r"\u2060-\u2064\u2066-\u2069\u3164\ufeff\uffa0"
)
_CONTROL = re.compile(rf"[\x00-\x08\x0b-\x1f{_BIDI_AND_C1}]")
_CONTROL_IN_LINE = re.compile(rf"[\x00-\x1f{_BIDI_AND_C1}]")


def say(message: str, *, level: int = 0) -> None:
    """Print ``message`` on stderr when the verbosity is at least ``level``.

    Level 0 is the default output (summaries, the first issues), 1 only with ``--verbose``.
    Errors never go through here: they always print (see :func:`dagmath_viz.cli.main`).
    """
    if VERBOSITY >= level:
        print(printable(message), file=sys.stderr)


def printable(text: object, *, one_line: bool = False) -> str:
    """``text`` with control characters shown as ``\\x1b``-style escapes.

    Model names, file names and messages come from untrusted files: an escape sequence in
    them must not move the cursor, recolour the terminal or reorder what is shown.
    ``one_line`` also escapes tabs and newlines.
    """
    pattern = _CONTROL_IN_LINE if one_line else _CONTROL
    return pattern.sub(_escape, str(text))


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def json_printable(data: bytes) -> bytes:
    """JSON text with C1, DEL and bidi controls written as ``\\uXXXX`` (same JSON value)."""
    text = data.decode("utf-8")
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")
