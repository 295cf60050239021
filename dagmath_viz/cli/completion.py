"""``dagmath completion bash|zsh``: print a shell completion script for ``dagmath``.

Load it in the current shell with ``source <(dagmath completion bash)`` (or ``zsh``), or
save it where the shell looks: ``dagmath completion bash >
~/.local/share/bash-completion/completions/dagmath``. It completes command names, every
option of each command, the choices of an option that has them, and file names elsewhere.
The script is written from the parser itself, so it never falls behind a new option.
"""

from __future__ import annotations

import argparse
import shlex

from dagmath_viz.cli.common import EXIT_OK, add_command

__all__ = ["bash_script", "register", "zsh_script"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``completion`` to the ``dagmath`` parser."""
    parser = add_command(
        subparsers,
        "completion",
        help="print a shell completion script (bash or zsh)",
        description=__doc__,
    )
    parser.add_argument("shell", choices=("bash", "zsh"), help="the shell to complete in")
    parser.set_defaults(func=run_completion)


def run_completion(args: argparse.Namespace) -> int:
    """The ``completion`` command: the script on stdout."""
    from dagmath_viz.cli import build_parser  # the whole parser; imported late (no cycle)

    parser = build_parser()
    script = bash_script(parser) if args.shell == "bash" else zsh_script(parser)
    print(script, end="")
    return EXIT_OK


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(words, parser) for ``dagmath`` and every command under it, nested ones included."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _walk(child, (*path, name))


def _case(key: str, words: list[str]) -> str:
    return f"        {shlex.quote(key)}) echo {shlex.quote(' '.join(words))} ;;\n"


def bash_script(parser: argparse.ArgumentParser) -> str:
    """A bash completion function for ``parser``'s program (``complete -F _dagmath``)."""
    children, options, choices = "", "", ""
    for path, sub in _walk(parser):
        key = " ".join(path)
        names = [
            name
            for action in sub._actions
            if isinstance(action, argparse._SubParsersAction)
            for name in action.choices
        ]
        if names:
            children += _case(key, names)
        options += _case(key, [s for a in sub._actions for s in a.option_strings])
        for action in sub._actions:
            if action.choices and not isinstance(action, argparse._SubParsersAction):
                values = [str(c) for c in action.choices]
                for flag in action.option_strings or ["@positional"]:
                    choices += _case(f"{key}|{flag}", values)
    return _BASH.format(children=children, options=options, choices=choices)


def zsh_script(parser: argparse.ArgumentParser) -> str:
    """The bash function, loaded through zsh's ``bashcompinit`` (part of every zsh)."""
    return "#compdef dagmath\nautoload -U +X bashcompinit && bashcompinit\n" + bash_script(parser)


_BASH = """\
# dagmath shell completion (written by `dagmath completion`)
_dagmath_children() {{
    case "$1" in
{children}    esac
}}
_dagmath_options() {{
    case "$1" in
{options}    esac
}}
_dagmath_choices() {{
    case "$1" in
{choices}    esac
}}
_dagmath() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    local key="" word i sub
    for ((i = 1; i < COMP_CWORD; i++)); do
        word="${{COMP_WORDS[i]}}"
        for sub in $(_dagmath_children "$key"); do
            if [[ "$word" == "$sub" ]]; then key="${{key:+$key }}$word"; break; fi
        done
    done
    local values
    values="$(_dagmath_choices "$key|$prev")"
    if [[ -n "$values" ]]; then
        COMPREPLY=($(compgen -W "$values" -- "$cur")); return
    fi
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$(_dagmath_options "$key")" -- "$cur")); return
    fi
    values="$(_dagmath_children "$key") $(_dagmath_choices "$key|@positional")"
    if [[ -n "${{values// /}}" ]]; then
        COMPREPLY=($(compgen -W "$values" -- "$cur")); return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}}
complete -o filenames -o bashdefault -F _dagmath dagmath
"""
