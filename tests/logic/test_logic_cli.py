"""The ``dagmath gsm`` command: generate, solve, export, report, and its error path."""

from __future__ import annotations

import argparse
import json

import pytest

from dagmath_viz.cli.gsm import add_gsm_parser, main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def pipeline(tmp_path, capsys):
    problems, proofs = tmp_path / "problems.jsonl", tmp_path / "proofs.jsonl"
    gen = ["generate", "--problems", "3", "--seed", "4", "--irrelevant", "tree"]
    code, _, err = run(capsys, *gen, "--overlap", "agent", "--depth", "2", "-o", str(problems))
    assert code == 0 and "wrote 3 problems" in err
    code, _, _ = run(capsys, "solve", str(problems), "--strategy", "all", "-o", str(proofs))
    assert code == 0
    return problems, proofs


def test_generate_records(pipeline):
    problems, _ = pipeline
    records = [json.loads(line) for line in problems.read_text().splitlines()]
    assert [r["problem_id"] for r in records] == [0, 1, 2]
    for r in records:
        for key in ("problem_text", "question", "axioms", "answer", "shortest_proof"):
            assert key in r
        assert (r["irrelevant"], r["overlap"], r["control"], r["depth"]) == (
            "tree",
            "agent",
            False,
            2,
        )
        assert r["problem_text"].endswith(r["question"])


def test_solve_records(pipeline):
    _, proofs = pipeline
    records = [json.loads(line) for line in proofs.read_text().splitlines()]
    assert len(records) == 3 * 4
    keys = {
        "problem_id",
        "strategy",
        "proof_text",
        "theorems",
        "answer",
        "correct",
        "efficiency",
        "efficiency_non_axiom",
        "irrelevant",
        "overlap",
        "control",
    }
    assert all(keys <= r.keys() and r["correct"] for r in records)
    assert [r["strategy"] for r in records[:4]] == ["shortest", "dfs", "bfs", "overlap"]


def test_export_and_report(pipeline, tmp_path, capsys):
    _, proofs = pipeline
    out = tmp_path / "dagmath"
    code, _, err = run(capsys, "export", str(proofs), "-o", str(out), "--dataset", "mini")
    assert code == 0 and "wrote 12 files" in err
    assert (out / "gsm-dfs" / "mini" / "problem_2_all_samples.json").is_file()
    code, text, _ = run(capsys, "report", str(proofs))
    assert code == 0 and "shortest" in text and "100.0" in text
    code, text, _ = run(capsys, "report", str(proofs), str(proofs), "--format", "json")
    rows = json.loads(text)
    assert [r["strategy"] for r in rows] == ["shortest", "dfs", "bfs", "overlap"]
    assert all(r["n"] == 6 and r["accuracy"] == 1.0 for r in rows)
    assert rows[0]["efficiency"] == 1.0


def test_generation_is_reproducible(tmp_path, capsys):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path in (a, b):
        assert run(capsys, "generate", "--problems", "2", "--seed", "9", "-o", str(path))[0] == 0
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "in.jsonl: no such file or folder"),
        ("{not json\n", "line 1, column 2: invalid JSON"),
        ('{"problem_id": 1, "axioms": []}\n', "record 1: problem 1: axioms"),
    ],
)
def test_bad_input_is_one_line_on_stderr(tmp_path, capsys, content, message):
    path = tmp_path / "in.jsonl"
    if content is not None:
        path.write_text(content)
    code, out, err = run(capsys, "solve", str(path), "-o", str(tmp_path / "o.jsonl"))
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_report_of_bad_records_fails_cleanly(tmp_path, capsys):
    path = tmp_path / "p.jsonl"
    path.write_text('{"strategy": "dfs"}\n')
    code, _, err = run(capsys, "report", str(path))
    assert code == 1 and "missing field" in err


def test_usage_errors_exit_2(capsys):
    assert main(["generate", "--problems", "0", "-o", "x"]) == 2
    assert "must be at least 1, got 0" in capsys.readouterr().err
    assert main(["solve", "p.jsonl", "--strategy", "random", "-o", "x"]) == 2
    assert "invalid choice: 'random'" in capsys.readouterr().err


def test_every_logic_error_is_a_dagmath_error():
    """The CLI's one handler catches DagMathError: logic errors are in that hierarchy (and
    keep their old bases, so code that caught RuntimeError still does)."""
    from dagmath_viz.logic.generator import GenerationError
    from dagmath_viz.logic.program import ProgramError
    from dagmath_viz.logic.rules import ClosureLimitError
    from dagmath_viz.schema import DagMathError

    for error in (GenerationError, ClosureLimitError, ProgramError):
        assert issubclass(error, DagMathError)
    assert issubclass(GenerationError, RuntimeError) and issubclass(ClosureLimitError, RuntimeError)


def test_a_closure_too_big_is_one_line(tmp_path, capsys, monkeypatch):
    """An input whose closure overruns the limit ends as one line and exit 1, not a traceback."""
    from dagmath_viz.logic import rules

    problems = tmp_path / "p.jsonl"
    assert main(["generate", "--problems", "1", "-o", str(problems), "-q"]) == 0
    monkeypatch.setattr(rules.closure, "__defaults__", (1,) * len(rules.closure.__defaults__))
    code, out, err = run(capsys, "solve", str(problems), "-o", str(tmp_path / "o.jsonl"))
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "closure exceeded" in err


def test_plugs_into_another_parser(tmp_path):
    parser = argparse.ArgumentParser(prog="dagmath")
    add_gsm_parser(parser.add_subparsers(dest="command"))
    out = tmp_path / "p.jsonl"
    args = parser.parse_args(["gsm", "generate", "--problems", "1", "-o", str(out)])
    assert args.func(args) == 0 and out.is_file()


def test_quiet_silences_every_gsm_summary(tmp_path):
    """-q prints errors only: generate --paired, solve --text and score-proofs (with
    --export) wrote their summaries whatever -q said."""
    import subprocess
    import sys

    problems, answers = tmp_path / "p.jsonl", tmp_path / "a.jsonl"
    proofs, scored = tmp_path / "proofs.jsonl", tmp_path / "s.jsonl"
    proofs.write_text(
        json.dumps(
            {
                "id": 1,
                "text": "Ann has 3 kites. Bo has 2 kites more than Ann. "
                "How many kites does Bo have?",
                "proof": "Ann has 3 kites. Bo has 2 kites more than Ann. So Bo has 5 kites.",
            }
        )
        + "\n",
        "utf-8",
    )
    commands = [
        ["generate", "--problems", "1", "--seed", "4", "--paired", "-o", str(problems)],
        ["solve", "--text", str(problems), "-o", str(answers)],
        ["score-proofs", str(proofs), "-o", str(scored), "--export", str(tmp_path / "x")],
    ]
    for argv in commands:
        loud = subprocess.run(
            [sys.executable, "-m", "dagmath_viz", "gsm", *argv], capture_output=True, text=True
        )
        assert loud.returncode == 0 and "wrote" in loud.stderr, (argv, loud.stderr)
        quiet = subprocess.run(
            [sys.executable, "-m", "dagmath_viz", "gsm", *argv, "-q"],
            capture_output=True,
            text=True,
        )
        assert (quiet.returncode, quiet.stderr) == (0, ""), (argv, quiet.stderr)
    assert json.loads(scored.read_text("utf-8"))["exact_match"] is True


@pytest.mark.parametrize("command", ["solve --text", "score-proofs"])
def test_unreadable_records_set_the_exit_code(tmp_path, capsys, command):
    """README's exit codes: 0 every record read, 4 some unreadable (the rest written, each
    unreadable one named on stderr), 3 none could be read. Both commands said 0 for all three."""
    good = {
        "id": "g",
        "text": "Ann has 3 kites. Bo has 2 kites more than Ann. How many kites does Bo have?",
        "proof": "Ann has 3 kites. Bo has 2 kites more than Ann. So Bo has 5 kites.",
    }
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    argv = [*command.split(), str(src), "-o", str(out)]

    src.write_text(json.dumps(good) + "\n", "utf-8")
    assert run(capsys, *argv)[0] == 0

    src.write_text(json.dumps(good) + '\n{"id": "n"}\nnot json\n', "utf-8")
    code, _, err = run(capsys, *argv)
    assert code == 4
    rows = [json.loads(x) for x in out.read_text("utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["g", "n", None]
    assert "error" not in rows[0] and "error" in rows[1] and "error" in rows[2]
    assert f"dagmath: error: {src}: line 2: " in err
    assert f"dagmath: error: {src}: line 3, column 1: invalid JSON" in err

    src.write_text('{"id": "n"}\n', "utf-8")
    code, _, err = run(capsys, *argv)
    assert code == 3 and "none of its 1 records could be read" in err
    src.write_text("", "utf-8")
    code, _, err = run(capsys, *argv)
    assert code == 3 and f"{src}: it holds no record" in err
