"""Every ``dagmath`` command accepts ``-q``/``-v`` and shows each option's default in
``--help`` (issue 31: ``generate -q`` and ``gold -v`` were "unrecognized arguments")."""

from __future__ import annotations

import argparse

import pytest

from dagmath_viz.cli import build_parser


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(words, parser) for every runnable command, nested ones (``gsm solve``) included."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for name, child in subs[0].choices.items():
        yield from _commands(child, (*path, name))


COMMANDS = list(_commands(build_parser()))
NAMES = [" ".join(words) for words, _ in COMMANDS]


def test_the_walk_finds_every_command():
    for name in ("score", "report", "simulate", "app", "generate", "gold", "gsm solve"):
        assert name in NAMES


@pytest.mark.parametrize(("words", "parser"), COMMANDS, ids=NAMES)
def test_quiet_and_verbose_are_accepted(words, parser):
    flags = {s: a.dest for a in parser._actions for s in a.option_strings}
    assert {
        "-q": "quiet",
        "--quiet": "quiet",
        "-v": "verbose",
        "--verbose": "verbose",
    }.items() <= flags.items()


def _shown(text: str, default: object) -> bool:
    values = {str(default)}
    if isinstance(default, float) and default.is_integer():
        values.add(str(int(default)))  # "(default 600)" for 600.0
    if isinstance(default, list | tuple):
        values.add(",".join(map(str, default)))
    return "default" in text and any(v in text for v in values)


@pytest.mark.parametrize(("words", "parser"), COMMANDS, ids=NAMES)
def test_every_default_is_shown_in_help(words, parser):
    formatter = parser._get_formatter()
    for action in parser._actions:
        if not action.option_strings or action.default in (None, False, argparse.SUPPRESS):
            continue
        # argparse prints no line at all for an option without help
        text = formatter._expand_help(action) if action.help else ""
        assert _shown(text, action.default), (words, action.option_strings, text)


@pytest.mark.parametrize("command", ["generate", "gold", "depends"])
def test_generate_and_gold_say_what_no_value_means(command):
    """Options without a value of their own still say what is used (the server's, none)."""
    (parser,) = [p for words, p in COMMANDS if words == (command,)]
    formatter = parser._get_formatter()
    for action in parser._actions:
        if not action.option_strings or action.required or action.nargs == 0:
            continue  # flags, --help, and the required --base-url, --model, -o
        assert "default" in formatter._expand_help(action), action.option_strings
