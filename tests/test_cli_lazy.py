"""``dagmath COMMAND`` imports only COMMAND's module; everything else builds the whole parser.

Start-up is part of every run's time (``dagmath score`` on a warm cache is a few seconds),
so the parser of ``dagmath score ...`` registers ``score`` alone. What a user sees must not
change: ``dagmath --help`` lists every command, and each command parses, helps and fails
exactly as it does in the whole parser.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import subprocess
import sys

import pytest

from dagmath_viz import cli

# every sub-command of `dagmath`, by hand, and the module that adds it
EXPECTED = {
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


def _registered(module: str) -> list[str]:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    importlib.import_module(module).register(sub)
    return list(sub.choices)


def test_the_table_names_what_each_module_registers() -> None:
    assert cli.COMMAND_MODULES == EXPECTED
    found = {name: module for module in cli.COMMANDS for name in _registered(module)}
    assert found == EXPECTED
    assert set(cli.COMMAND_MODULES.values()) == set(cli.COMMANDS)


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue(), err.getvalue()


def _run_whole(argv: list[str]) -> tuple[int, str, str]:
    """What the whole parser prints for ``argv`` (as every run did before)."""
    parser = cli.build_parser()
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            parser.parse_args(argv)
            code = 0
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def test_top_level_help_lists_every_command() -> None:
    code, out, _ = _run(["--help"])
    assert code == 0
    listed = out.split("COMMAND", 2)[-1]
    for name in ("score", "report", "simulate", "app", "gsm", "generate", "gold"):
        assert f"\n    {name} " in listed or f"\n    {name}\n" in listed, name
    assert (code, out) == _run_whole(["--help"])[:2]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_command_helps_as_in_the_whole_parser(name: str) -> None:
    code, out, err = _run([name, "--help"])
    assert code == 0 and out.startswith(f"usage: dagmath {name} ")
    assert (code, out, err) == _run_whole([name, "--help"])


@pytest.mark.parametrize(
    "argv",
    [["score"], ["score", "--bogus", "x"], ["gsm"], ["gsm", "bogus"], ["simulate"], ["gold"]],
)
def test_each_usage_error_reads_as_in_the_whole_parser(argv: list[str]) -> None:
    code, out, err = _run(argv)
    assert code == 2 and "usage: dagmath " in err and "error: " in err
    assert (code, out, err) == _run_whole(argv)


def test_bare_dagmath_prints_the_whole_help() -> None:
    code, out, err = _run([])
    assert (code, err) == (0, "")
    assert out == _run_whole(["--help"])[1]


@pytest.mark.parametrize("argv", [["scor", "x"], ["-q", "score"], ["--version", "score"]])
def test_anything_but_a_command_first_builds_the_whole_parser(argv: list[str]) -> None:
    assert _run(argv)[:2] == _run_whole(argv)[:2]


def test_score_imports_no_other_command() -> None:
    code = (
        "import sys\n"
        "from dagmath_viz.cli import main\n"
        "assert main(['score', '/nonexistent/dagmath-lazy-test', '-q']) == 3\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('dagmath_viz'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split())
    assert "dagmath_viz.cli.score" in loaded
    others = {m for m in EXPECTED.values() if m != "dagmath_viz.cli.score"}
    assert not loaded & (others | {"dagmath_viz.analysis.simulate", "dagmath_viz.logic.export"})
