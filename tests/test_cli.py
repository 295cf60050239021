"""The ``dagmath`` command (dagmath_viz/cli/): score and report end to end, every bad-input
exit, the exit codes, ``-`` for stdin, --quiet/--verbose, and escaped names."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from dagmath_viz.cli import main

REPO = Path(__file__).parents[1]
REPORT_KEYS = {
    "model", "dataset", "n_problems", "n_trajectories", "pass_at_1", "r_hat", "gap", "auc",
    "pass_at_k", "class_counts", "cohort_stats",
}  # fmt: skip
COHORT_KEYS = {"n_nodes", "n_edges", "density", "max_in_degree", "max_out_degree", "n"}


def dagmath(*args: str | Path) -> subprocess.CompletedProcess:
    """Run the command as a user would, in a fresh interpreter."""
    proc = subprocess.run(
        [sys.executable, "-m", "dagmath_viz", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def run(capsys, *args: str | Path) -> tuple[int, str, str]:
    """Run the command in this process (fast); returns (exit code, stdout, stderr)."""
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_summary_line_counts_one_file_and_one_trajectory_in_the_singular(capsys, tmp_path):
    # one file holding one two-step trajectory: "1 file read, 1 trajectory loaded"
    data = tmp_path / "m" / "d" / "problem_1_all_samples.json"
    data.parent.mkdir(parents=True)
    steps = [
        {"step_id": 1, "thinking": "", "direct_dependent_steps": [], "text": "x = 2"},
        {"step_id": 2, "thinking": "", "direct_dependent_steps": [1], "text": "\\boxed{2}"},
    ]
    data.write_text(json.dumps([{"problem_id": 1, "sample_id": 0, "steps": steps}]))
    code, _out, err = run(capsys, "score", data, "-o", tmp_path / "s.jsonl")
    assert code == 0, err
    assert err.splitlines()[-1] == (
        "dagmath: 1 file read, 1 trajectory loaded, 0 illegal, "
        "1 without a reference answer, 0 unreadable files"
    )


# --------------------------------------------------------------------------- the real few-shot data


@pytest.mark.shared
def test_fewshot_score_then_report(shared_data: Path, tmp_path: Path) -> None:
    scored = tmp_path / "scored.jsonl"
    proc = dagmath("score", shared_data, "-o", scored)
    assert proc.returncode == 0, proc.stderr
    # fewshot_solutions.json + 4 gold files + answers.json; 4 + 4 trajectories
    assert proc.stderr.splitlines()[-1] == (
        "dagmath: 6 files read, 8 trajectories loaded, 0 illegal, "
        "0 without a reference answer, 0 unreadable files"
    )
    assert len(read_jsonl(scored)) == 8

    report = dagmath("report", scored, "--format", "json")
    assert report.returncode == 0, report.stderr
    groups = json.loads(report.stdout)
    assert [(g["model"], g["dataset"]) for g in groups] == [
        ("dagmath-authors-fewshot", "dagmath-fewshot"),
        ("gold", "gold"),
    ]
    for g in groups:
        assert REPORT_KEYS <= set(g)
        assert g["pass_at_1"] == 1 and g["r_hat"] == 1 and g["auc"] == 1 and g["gap"] == 0
        assert (g["n_problems"], g["n_trajectories"]) == (4, 4)
        assert g["pass_at_k"] == {"1": 1.0}
        assert g["class_counts"]["perfect"] == 4
        cohorts = g["cohort_stats"]
        assert set(cohorts) == {"All", "Incorrect", "Correct", "Perfect"}
        assert all(set(c) == COHORT_KEYS for c in cohorts.values())
        # means of the hand counts (see test_scoring.FEWSHOT_STATS):
        # N (22+26+25+38)/4 = 111/4, E (30+34+36+65)/4 = 165/4,
        # max in (4+4+3+6)/4 = 17/4, max out (3+3+4+5)/4 = 15/4
        for name in ("All", "Correct", "Perfect"):
            cell = cohorts[name]
            assert cell["n"] == 4
            assert (cell["n_nodes"], cell["n_edges"]) == pytest.approx((27.75, 41.25))
            assert (cell["max_in_degree"], cell["max_out_degree"]) == pytest.approx((4.25, 3.75))
        assert cohorts["Incorrect"]["n"] == 0


# --------------------------------------------------------------------------- a run with bad files


def test_mixed_run_scores_every_good_trajectory(data_dir: Path, tmp_path: Path) -> None:
    scored = tmp_path / "out" / "scored.jsonl"
    proc = dagmath("score", data_dir / "mixed_run", "-o", scored)
    assert proc.returncode == 4  # results written, but a file and a line were unreadable
    lines = proc.stderr.splitlines()
    # answers.json + 3 official files + extra.jsonl; 2 + 2 + 0 + 2 trajectories
    assert lines[-1] == (
        "dagmath: 5 files read, 6 trajectories loaded, 1 illegal, "
        "1 without a reference answer, 1 unreadable file"
    )
    assert any("extra.jsonl: line 2: column 30: invalid JSON" in x for x in lines)
    assert any("problem_3_all_samples.json: file: line 3, column 28" in x for x in lines)
    records = {(r["model"], r["problem_id"], r["sample_id"]): r for r in read_jsonl(scored)}
    assert {k: r["class"] for k, r in records.items()} == {
        ("model_a", "1", 0): "perfect",
        ("model_a", "1", 1): "imperfect",  # step 3 is a dead end
        ("model_a", "2", 0): "illegal",  # step 2 cites the later step 3
        ("model_a", "2", 1): "incorrect",  # 2 is not 1/2
        ("gold", "9", 0): "perfect",
        ("m2", "11", 1): "unscored",
    }
    imperfect = records[("model_a", "1", 1)]
    assert imperfect["dead_ends"] == [3] and imperfect["closeness_rate"] == pytest.approx(4 / 5)
    illegal = records[("model_a", "2", 0)]
    assert illegal["final_correct"] is True and illegal["closed"] is False
    (error,) = illegal["errors"]
    assert "problem_2_all_samples.json" in error
    assert "problem 2 sample 0: step 2: parent 3 is not an earlier step" in error
    unscored = records[("m2", "11", 1)]
    assert unscored["final_correct"] is None and unscored["perfect"] is None


@pytest.fixture(scope="module")
def mixed_scored(data_dir: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("mixed") / "scored.jsonl"
    assert main(["score", str(data_dir / "mixed_run"), "-o", str(out)]) == 4
    return out


def test_report_json_on_the_mixed_run(capsys, mixed_scored: Path) -> None:
    capsys.readouterr()
    code, out, _ = run(capsys, "report", mixed_scored, "--format", "json", "--bootstrap", "0")
    assert code == 0
    groups = {(g["model"], g["dataset"]): g for g in json.loads(out)}
    a = groups[("model_a", "algebra")]
    # p1: perfect + imperfect -> PASS@1 1, PRR 1/2; p2: illegal right + wrong -> 1/2, 0
    # PASS@1 (1 + 1/2)/2 = 3/4; R̂ (1/2 + 0)/2 = 1/4
    # AUC: p1 (1 + 4/5)/2 = 9/10, p2 (2/3 + 0)/2 = 1/3 -> (9/10 + 1/3)/2 = 37/60
    assert (a["pass_at_1"], a["r_hat"], a["auc"]) == pytest.approx((0.75, 0.25, 37 / 60))
    assert a["class_counts"] == {
        "perfect": 1,
        "imperfect": 1,
        "incorrect": 1,
        "illegal": 1,
        "unscored": 0,
    }
    only_unscored = groups[("m2", "mixed_run")]
    assert only_unscored["pass_at_1"] is None and only_unscored["pass_at_k"] == {}


def test_report_csv_and_table(capsys, mixed_scored: Path) -> None:
    capsys.readouterr()
    code, out, _ = run(capsys, "report", mixed_scored, "--format", "csv", "--bootstrap", "0")
    assert code == 0
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(out))}
    assert float(rows["model_a"]["pass_at_1"]) == pytest.approx(0.75)
    code, out, _ = run(capsys, "report", mixed_scored, "--bootstrap", "0")
    assert code == 0
    # the table prints rates in percent, the unit in the column's header
    assert "PASS@1 %" in out and " 75.0 " in out and " 25.0 " in out


def test_report_by_model(capsys, mixed_scored: Path) -> None:
    capsys.readouterr()
    code, out, _ = run(
        capsys, "report", mixed_scored, "--by", "model", "--format", "json", "--bootstrap", "0"
    )
    assert code == 0
    groups = json.loads(out)
    assert [g["model"] for g in groups] == ["gold", "m2", "model_a"]
    assert "dataset" not in groups[0]


def test_score_to_stdout_and_errors_file(capsys, data_dir: Path, tmp_path: Path) -> None:
    errors = tmp_path / "errors.txt"
    code, out, err = run(capsys, "score", data_dir / "mixed_run", "--errors", errors)
    assert code == 4
    assert len(out.splitlines()) == 6  # -o defaults to stdout
    assert len(errors.read_text(encoding="utf-8").splitlines()) == 2
    assert err.splitlines()[-1].startswith("dagmath: 5 files read")


# --------------------------------------------------------------------------- nothing to score


def test_nothing_to_score_is_a_one_line_failure(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "out.jsonl"
    proc = dagmath("score", empty, "-o", out)
    assert proc.returncode != 0
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("dagmath: error: nothing to score")
    assert not out.exists()


BAD_SCORE_CASES = [
    # files to create, extra arguments, fragment of the last stderr line, exit code
    pytest.param({}, ["MISSING"], "nothing to score", 3, id="missing-path"),
    pytest.param({"bad.json": "[{"}, [], "nothing to score", 3, id="only-invalid-json"),
    pytest.param(
        {"ok.jsonl": '{"steps": [{"step_id": 1, "text": "1"}]}\n', "key.json": '{"1": }'},
        ["--answers", "key.json"],
        "key.json: line 1, column 7: invalid JSON",
        1,
        id="invalid-answers-file",
    ),
    pytest.param(
        {"ok.jsonl": "{}\n"}, ["--answers", "none.json"], "no such file", 1, id="no-answers-file"
    ),
]


@pytest.mark.parametrize(("files", "extra", "fragment", "code"), BAD_SCORE_CASES)
def test_bad_score_input(capsys, tmp_path: Path, files: dict, extra: list, fragment: str, code):
    for name, content in files.items():
        (tmp_path / name).write_text(content, encoding="utf-8")
    args = [str(tmp_path / a) if a in {"MISSING", "key.json", "none.json"} else a for a in extra]
    paths = [] if "MISSING" in extra else [str(tmp_path)]
    got, _, err = run(capsys, "score", *paths, *args, "-o", tmp_path / "o.jsonl")
    assert got == code
    assert fragment in err.splitlines()[-1]


BAD_REPORT_CASES = [
    # scored-file content, extra arguments, fragment of the error, exit code
    pytest.param("", [], "no scored records found", 3, id="empty-file"),
    pytest.param(
        '{"model": "m", "dataset": "d", "problem_id": "1", "n_nodes": "x", "dead_ends": [],'
        ' "closeness_rate": 1, "class": "perfect"}\n',
        [],
        "no scored records found",
        3,
        id="bad-scored-record",
    ),
    pytest.param(None, ["--by", "model,colour"], "unknown column(s) colour", 2, id="unknown-by"),
]


@pytest.mark.parametrize(("content", "extra", "fragment", "code"), BAD_REPORT_CASES)
def test_bad_report_input(capsys, tmp_path: Path, mixed_scored, content, extra, fragment, code):
    path = mixed_scored
    if content is not None:
        path = tmp_path / "scored.jsonl"
        path.write_text(content, encoding="utf-8")
    capsys.readouterr()
    got, _, err = run(capsys, "report", path, *extra)
    assert got == code
    assert fragment in err


def test_bad_input_never_shows_a_traceback(tmp_path: Path) -> None:
    # a scored record with text where a number belongs, next to raw and broken files
    (tmp_path / "scored.jsonl").write_text(
        '{"model": "m", "dataset": "d", "problem_id": "1", "n_nodes": 1, "n_edges": 0,'
        ' "density": 0, "max_in_degree": 0, "max_out_degree": 0, "dead_ends": [],'
        ' "closeness_rate": "high", "closed": true, "final_correct": true, "class": "perfect"}\n',
        encoding="utf-8",
    )
    (tmp_path / "broken.json").write_text("[1, 2", encoding="utf-8")
    proc = dagmath("report", tmp_path, "--format", "json")  # asserts no Traceback
    assert proc.returncode == 3  # nothing could be loaded
    assert "'closeness_rate' is 'high'" in proc.stderr


def test_version(capsys) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("dagmath ")


# --------------------------------------------------------------------------- conventions

GOOD_LINE = '{"model": "m", "problem_id": "1", "steps": [{"step_id": 1, "text": "\\\\boxed{2}"}]}'


def test_score_reads_stdin_and_names_it(tmp_path: Path) -> None:
    """``-`` is standard input; the records and the issues call it <stdin>, not a temp file."""
    proc = subprocess.run(
        [sys.executable, "-m", "dagmath_viz", "score", "-", "--no-cache"],
        input=GOOD_LINE + "\n{broken\n",
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 4, proc.stderr  # one record scored, one line refused
    (record,) = [json.loads(x) for x in proc.stdout.splitlines()]
    assert record["model"] == "m" and record["n_nodes"] == 1
    assert record["source"].startswith("<stdin>")
    assert "<stdin>: line 2" in proc.stderr and "dagmath-stdin-" not in proc.stderr


@pytest.mark.parametrize(
    ("flags", "dataset"), [([], "stdin"), (["--dataset", "math500"], "math500")]
)
def test_a_piped_array_gets_a_named_dataset(tmp_path: Path, flags: list, dataset: str) -> None:
    """A DAG-MATH array through stdin was data set "0" (its temporary folder), so an answer
    key keyed by data set matched nothing (issue 31)."""
    sample = [
        {"problem_id": 5, "sample_id": 0, "steps": [
            {"step_id": 1, "thinking": "t", "direct_dependent_steps": None, "text": r"\boxed{3}"}
        ]},
    ]  # fmt: skip
    answers = tmp_path / "answers.csv"
    answers.write_text(f"dataset,problem_id,answer\n{dataset},5,3\nother,5,4\n")
    proc = subprocess.run(
        [sys.executable, "-m", "dagmath_viz", "score", "-", "--no-cache", "-q",
         "--answers", str(answers), *flags],
        input=json.dumps(sample), cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (record,) = [json.loads(x) for x in proc.stdout.splitlines()]
    assert record["dataset"] == dataset
    assert record["reference_answer"] == "3" and record["final_correct"] is True


@pytest.mark.parametrize("name", ["../up", "a/b", ".", ""])
def test_a_dataset_name_must_be_a_folder_name(capsys, name: str) -> None:
    code, _, err = run(capsys, "score", "-", "--dataset", name)
    assert code == 2 and "--dataset" in err and "one folder name" in err


def test_score_pipes_into_report(tmp_path: Path, data_dir: Path) -> None:
    """``dagmath score ... | dagmath report -``: one record per trajectory reaches report."""
    score = subprocess.Popen(
        [sys.executable, "-m", "dagmath_viz", "score", str(data_dir / "mixed_run"), "-q"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    report = subprocess.run(
        [
            sys.executable,
            "-m",
            "dagmath_viz",
            "report",
            "-",
            "--format",
            "json",
            "--bootstrap",
            "0",
        ],
        cwd=REPO,
        stdin=score.stdout,
        capture_output=True,
        text=True,
        timeout=120,
    )
    score.stdout.close()
    assert score.wait(timeout=120) == 4 and score.stderr.read() == b""  # -q: nothing on stderr
    assert report.returncode == 0, report.stderr
    groups = {(g["model"], g["dataset"]): g for g in json.loads(report.stdout)}
    assert groups[("model_a", "algebra")]["n_trajectories"] == 4  # as in the mixed-run test


@pytest.mark.parametrize(
    ("stdin", "fragment"),
    [
        ("", "standard input is empty"),
        ("not json at all\n", "<stdin>: line 1"),
        ("[]\n", "no scored records found in <stdin>"),
    ],
    ids=["empty", "not-json", "no-record"],
)
def test_a_pipe_with_nothing_valid_says_why(stdin: str, fragment: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "dagmath_viz", "report", "-"],
        input=stdin,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 3
    assert fragment in proc.stderr
    assert "Traceback" not in proc.stderr


def test_quiet_and_verbose(capsys, data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.jsonl"
    code, _, err = run(capsys, "score", data_dir / "mixed_run", "-o", out, "--quiet")
    assert code == 4 and err == ""
    code, _, err = run(capsys, "score", data_dir / "mixed_run", "-o", out, "-v")
    assert code == 4
    assert err.count("dagmath: error: ") == 2 and "files read" in err
    code, _, err = run(capsys, "score", data_dir / "mixed_run", "-o", out, "-q", "-v")
    assert code == 2 and "not allowed with" in err


def test_verbose_shows_every_issue(capsys, tmp_path: Path) -> None:
    """Beyond 20 issues the default output stops and says how to see the rest; -v shows all."""
    lines = [GOOD_LINE] + [f"{{bad {i}" for i in range(25)]
    (tmp_path / "many.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "o.jsonl"
    code, _, err = run(capsys, "score", tmp_path / "many.jsonl", "-o", out, "--no-cache")
    assert code == 4
    assert err.count("invalid JSON") == 20 and "... 5 more issues" in err
    code, _, err = run(capsys, "score", tmp_path / "many.jsonl", "-o", out, "--no-cache", "-v")
    assert err.count("invalid JSON") == 25 and "more issues" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "x.jsonl", "--bootstrap", "-5"],
        ["report", "x.jsonl", "--bootstrap", "many"],
        ["score", "x", "--workers", "0"],
        ["simulate", "t.json", "--policy", "uniform", "--samples", "0", "-o", "d"],
        ["score", "x", "--no-such-option"],
        ["app", "stray"],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_2_without_a_traceback(capsys, argv: list[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "Traceback" not in err


def test_help_shows_defaults(capsys) -> None:
    assert main(["report", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert (
        "(default: model,dataset)" in text and "interval; not a bootstrap) (default: True)" in text
    )
    assert "(default: table)" in text and "(default: None)" not in text
    assert main(["score", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: -)" in text and "(default: every CPU" in text


def test_errors_name_their_file_and_never_an_empty_one(capsys, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    # the output's folder is a file: the error names the path that failed
    code, _, err = run(
        capsys, "score", REPO / "tests" / "data" / "mixed_run", "-o", blocker / "o.jsonl", "-q"
    )
    assert code == 1
    (line,) = err.splitlines()
    assert line.startswith(f"dagmath: error: {blocker}") and ": :" not in line


def test_an_os_error_without_a_name_prints_only_its_reason() -> None:
    from dagmath_viz.cli import _os_error_text

    assert _os_error_text(OSError(28, "No space left on device")) == "No space left on device"
    assert _os_error_text(OSError(2, "No such file", "a.json")) == "a.json: No such file"
    assert _os_error_text(OSError("odd")) == "odd"


def test_a_closed_stdout_is_quiet(data_dir: Path) -> None:
    """``dagmath score ... | head -1``: no 'Broken pipe' message, no traceback."""
    proc = subprocess.run(
        f"{sys.executable} -m dagmath_viz score {data_dir / 'mixed_run'} -q | head -c 10",
        shell=True,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert len(proc.stdout) == 10
    assert proc.stderr == ""


def test_a_closed_pipe_exits_0_under_pipefail() -> None:
    """``set -o pipefail; dagmath score ... | head -1`` succeeds (issue 31: it exited 1).

    The run's output (about 400 kB) is far more than a pipe holds (64 kB on Linux), so
    ``head`` closing its end makes the writer's next write fail for real.
    """
    run_dir = REPO / "sample_data" / "runs" / "sim-focus-2.4"
    command = f"{sys.executable} -m dagmath_viz score {run_dir} -q --no-cache"
    whole = subprocess.run(command, shell=True, cwd=REPO, capture_output=True, timeout=120)
    assert whole.returncode == 0 and len(whole.stdout) > 4 * 65536
    proc = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command} | head -1"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert json.loads(proc.stdout)["source"].startswith(str(run_dir))


def test_bare_dagmath_prints_help() -> None:
    proc = dagmath()
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.startswith("usage: dagmath ")
    listed = [line.split()[0] for line in proc.stdout.splitlines() if line.startswith("    ")]
    for name in ("score", "report", "app", "generate", "completion"):
        assert name in listed, name


def _complete(script: str, *words: str) -> list[str]:
    """What bash offers after ``words`` (the last one being typed), with ``script`` loaded."""
    quoted = " ".join(f"'{w}'" for w in words)
    probe = (
        f"source {script}; COMP_WORDS=(dagmath {quoted}); COMP_CWORD={len(words)}; "
        '_dagmath; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    proc = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_completion_prints_a_script(shell: str) -> None:
    proc = dagmath("completion", shell)
    assert proc.returncode == 0 and proc.stderr == ""
    assert "complete -o filenames -o bashdefault -F _dagmath dagmath" in proc.stdout
    assert proc.stdout.startswith("#compdef dagmath\n") == (shell == "zsh")


def test_bash_completion_completes_commands_options_and_choices(tmp_path: Path) -> None:
    script = tmp_path / "dagmath.bash"
    script.write_text(dagmath("completion", "bash").stdout)
    assert _complete(script, "sc") == ["score"]
    assert set(_complete(script, "g")) == {"generate", "gold", "gsm"}
    assert _complete(script, "score", "--no-c") == ["--no-cache"]
    assert _complete(script, "gsm", "so") == ["solve"]  # nested commands
    assert "--quiet" in _complete(script, "gsm", "solve", "--")
    assert _complete(script, "completion", "") == ["bash", "zsh"]
    (tmp_path / "run_a.jsonl").write_text("")
    assert _complete(script, "score", str(tmp_path / "run_")) == [str(tmp_path / "run_a.jsonl")]


def test_an_internal_error_is_one_line_and_a_hint(capsys, monkeypatch) -> None:
    from dagmath_viz.cli import report

    def boom(args):
        raise KeyError("surprise")

    monkeypatch.setattr(report, "run_report", boom)
    monkeypatch.setattr(report, "register", _register_with(boom, report.register))
    assert main(["report", "x"]) == 70
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error (KeyError: 'surprise')" in err
    assert "--verbose" in err
    assert main(["report", "x", "--verbose"]) == 70
    assert "Traceback" in capsys.readouterr().err  # asked for


def test_a_missing_third_party_package_is_one_line_not_a_bug(capsys, monkeypatch) -> None:
    """A scoring-only install (README "Install") has no openai: `generate` says what it
    needs (exit 1), where it said "internal error" (exit 70)."""
    from dagmath_viz.cli import report

    def needs_openai(args):
        raise ModuleNotFoundError("No module named 'openai'", name="openai")

    monkeypatch.setattr(report, "register", _register_with(needs_openai, report.register))
    assert main(["report", "x"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "dagmath: error: dagmath report needs the Python package 'openai', which is not "
        "installed (pip install dagmath-viz installs everything)\n"
    )

    def our_own_bug(args):
        raise ModuleNotFoundError("No module named 'dagmath_viz.nope'", name="dagmath_viz.nope")

    monkeypatch.setattr(report, "register", _register_with(our_own_bug, report.register))
    assert main(["report", "x"]) == 70  # a module of ours missing is a bug


def _register_with(handler, register):
    def wrapped(sub):
        register(sub)
        sub.choices["report"].set_defaults(func=handler)

    return wrapped


HOSTILE = "m\x1b[2J\x1b]0;owned\x07\u202e24\x9b"


def test_report_never_prints_control_characters_raw(capsys, tmp_path: Path) -> None:
    """Escape codes and bidi overrides in a model name are shown escaped, in every format."""
    line = GOOD_LINE.replace('"model": "m"', f'"model": {json.dumps(HOSTILE)}')
    (tmp_path / "run.jsonl").write_text(line + "\n", encoding="utf-8")
    scored = tmp_path / "scored.jsonl"
    assert main(["score", str(tmp_path / "run.jsonl"), "-o", str(scored), "--no-cache"]) == 0
    capsys.readouterr()
    for fmt in ("table", "csv", "json"):
        code, out, err = run(capsys, "report", scored, "--format", fmt, "--bootstrap", "0")
        assert code == 0
        for raw in ("\x1b", "\x07", "\u202e", "\x9b"):
            assert raw not in out + err, (fmt, raw)
        if fmt == "json":  # the same name, written with JSON escapes
            assert json.loads(out)[0]["model"] == HOSTILE
        else:
            assert "m\\x1b[2J\\x1b]0;owned\\x07\\u202e24\\x9b" in out


def test_no_import_cycle_in_the_cli_package() -> None:
    """Command modules take only ``common`` from the package whose ``main`` imports them (at
    import time); never ``main`` or the parser."""
    import ast

    modules = list((REPO / "dagmath_viz" / "cli").glob("*.py"))
    for path in modules:
        if path.name == "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top_level = [n for n in tree.body if isinstance(n, ast.ImportFrom | ast.Import)]
        for node in top_level:
            if isinstance(node, ast.ImportFrom) and node.module == "dagmath_viz.cli":
                assert {a.name for a in node.names} <= {"common"}, path
            if isinstance(node, ast.Import):
                assert "dagmath_viz.cli" not in {a.name for a in node.names}, path


# --------------------------------------------------------------------------- output files


def test_output_to_dev_null_leaves_the_device(capsys, data_dir: Path) -> None:
    """``-o /dev/null`` writes through: the device stays a device (a rename would have
    replaced it with a regular file, as root for the whole machine)."""
    import stat as st

    before = Path("/dev/null").stat()
    code, _, _ = run(capsys, "score", data_dir / "mixed_run", "-o", "/dev/null", "-q")
    assert code == 4
    after = Path("/dev/null").stat()
    assert st.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert st.S_IMODE(after.st_mode) == st.S_IMODE(before.st_mode)


def test_output_to_a_fifo_writes_through(capsys, data_dir: Path, tmp_path: Path) -> None:
    import os
    import stat as st
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    code, _, _ = run(capsys, "score", data_dir / "mixed_run", "-o", fifo, "-q")
    reader.join(timeout=60)
    assert code == 4 and st.S_ISFIFO(fifo.lstat().st_mode)
    assert len(got[0].splitlines()) == 6  # the mixed run's six trajectories
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_output_through_a_symlink_keeps_the_link_and_the_mode(capsys, data_dir, tmp_path):
    import os
    import stat as st

    real = tmp_path / "real.jsonl"
    real.write_text("old\n")
    real.chmod(0o640)
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    code, _, _ = run(capsys, "score", data_dir / "mixed_run", "-o", link, "-q")
    assert code == 4 and link.is_symlink()
    assert len(real.read_text().splitlines()) == 6
    assert st.S_IMODE(real.stat().st_mode) == 0o640
    new = tmp_path / "new.jsonl"
    old_mask = os.umask(0o022)
    try:
        run(capsys, "score", data_dir / "mixed_run", "-o", new, "-q")
    finally:
        os.umask(old_mask)
    assert st.S_IMODE(new.stat().st_mode) == 0o644  # the umask's, not mkstemp's 0600


def test_the_app_server_gets_two_malloc_arenas_unless_the_user_chose() -> None:
    from dagmath_viz.cli.app import app_environment

    env = app_environment({"PATH": "/usr/bin"})
    assert env == {"PATH": "/usr/bin", "MALLOC_ARENA_MAX": "2"}
    assert app_environment({"MALLOC_ARENA_MAX": "8"})["MALLOC_ARENA_MAX"] == "8"


def test_app_labels_name_the_label_files_mine_first(tmp_path) -> None:
    import os

    from dagmath_viz.cli.app import labels_environment
    from dagmath_viz.schema import InputError

    theirs = tmp_path / "theirs.jsonl"
    theirs.write_text('{"dagmath_labels": 1}\n')
    mine = tmp_path / "new" / "mine.jsonl"  # may not exist yet: the first label makes it
    env = labels_environment([str(mine), str(theirs)])
    assert env == {"DAGMATH_LABELS": f"{mine}{os.pathsep}{theirs}"}
    assert labels_environment(None) == {}
    with pytest.raises(InputError, match="only the first may be new"):
        labels_environment([str(theirs), str(tmp_path / "gone.jsonl")])
    with pytest.raises(InputError, match="a folder, not a label file"):
        labels_environment([str(tmp_path)])
