"""The efficiency lens's text files given to DAG-MATH commands: ``dagmath score`` and
``dagmath report`` say what the file is and which command reads it, in one line, instead
of "layout not recognised" (``../shared/data/mathgap-sample`` and
``../shared/data/efficiency-paper-examples`` both got only that, with exit 3)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from dagmath_viz.cli import main
from dagmath_viz.cli.gsm import main as gsm_main

PROBLEM = "Ann has 3 kites. Bo has 2 kites more than Ann. How many kites does Bo have?"
PROOF = "1. Ann has 3 kites.\n2. Bo has 2 kites more than Ann.\n3. So Bo has 3 + 2 = 5 kites."
SOLVE = "dagmath gsm solve --text"
SCORE_PROOFS = "dagmath gsm score-proofs"


def run(capsys, *args: str | Path) -> tuple[int, str]:
    code = main([str(a) for a in args])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def _the_line(err: str, path: Path) -> str:
    """The one stderr line about ``path``'s records."""
    (line,) = [x for x in err.splitlines() if x.startswith(f"dagmath: warning: {path}: ")]
    return line


def _told(capsys, path: Path, command: str, tmp_path: Path) -> None:
    """score and report on ``path`` name ``command`` with the file; nothing loads (exit 3)."""
    for argv in (["score", path, "-o", tmp_path / "s.jsonl", "--no-cache"], ["report", path]):
        code, err = run(capsys, *argv)
        assert code == 3, err
        assert "layout not recognised" not in err
        line = _the_line(err, path)
        assert "the efficiency lens's word problems" in line and "not trajectories" in line
        assert f"`{command} {shlex.quote(str(path))} -o OUT.jsonl`" in line


def test_a_tiny_problems_file_and_a_tiny_proofs_file(capsys, tmp_path: Path) -> None:
    problems, proofs = tmp_path / "problems.jsonl", tmp_path / "proofs.jsonl"
    problems.write_text(json.dumps({"id": "a", "text": PROBLEM, "answer": 5}) + "\n", "utf-8")
    proofs.write_text(json.dumps({"id": "a", "text": PROBLEM, "proof": PROOF}) + "\n", "utf-8")
    _told(capsys, problems, SOLVE, tmp_path)
    _told(capsys, proofs, SCORE_PROOFS, tmp_path)
    # the commands named do read them
    assert gsm_main(["solve", "--text", str(problems), "-o", str(tmp_path / "a.jsonl")]) == 0
    assert json.loads((tmp_path / "a.jsonl").read_text("utf-8"))["answer"] == 5
    assert gsm_main(["score-proofs", str(proofs), "-o", str(tmp_path / "p.jsonl")]) == 0
    assert json.loads((tmp_path / "p.jsonl").read_text("utf-8"))["efficiency"] == 1.0


def test_beside_trajectories_it_is_a_warning_not_a_lost_input(capsys, tmp_path: Path) -> None:
    """As the logic-program files of sample_data/: the other lens's data is skipped with a
    note, and the folder's trajectories are scored with exit 0 (not 4: nothing was lost)."""
    (tmp_path / "problems.jsonl").write_text(json.dumps({"id": 1, "text": PROBLEM}) + "\n")
    steps = [{"step_id": 1, "edge": "", "direct_dependent_steps": None, "node": r"\boxed{5}"}]
    run_file = tmp_path / "run.json"
    run_file.write_text(json.dumps([{"problem_id": 1, "sample_id": 0, "steps": steps}]))
    out = tmp_path / "scored.jsonl"
    code, err = run(capsys, "score", tmp_path, "-o", out, "--no-cache")
    assert code == 0, err
    assert len(out.read_text("utf-8").splitlines()) == 1
    assert SOLVE in _the_line(err, tmp_path / "problems.jsonl")


def test_a_text_field_alone_is_no_word_problem(capsys, tmp_path: Path) -> None:
    # no "id": still an unknown layout, not advice to run the efficiency lens on it
    notes = tmp_path / "notes.jsonl"
    notes.write_text(json.dumps({"text": "a note"}) + "\n")
    code, err = run(capsys, "score", notes, "-o", tmp_path / "s.jsonl", "--no-cache")
    assert code == 3 and "layout not recognised" in err and "gsm" not in err


@pytest.mark.parametrize(
    ("fixture", "command"),
    [("mathgap_problems", SOLVE), ("paper_examples", SCORE_PROOFS)],
)
def test_the_shared_files(request, capsys, tmp_path: Path, fixture: str, command: str) -> None:
    path = request.getfixturevalue(fixture)
    _told(capsys, path, command, tmp_path)
    # given as its folder, as the issue ran them: the same line, naming the file
    for argv in (["score", path.parent, "-o", tmp_path / "s.jsonl", "--no-cache"],
                 ["report", path.parent]):  # fmt: skip
        code, err = run(capsys, *argv)
        assert code == 3 and command in _the_line(err, path)
    # and the command named reads every record of the file
    out = tmp_path / "out.jsonl"
    assert gsm_main([*command.split()[2:], str(path), "-o", str(out)]) == 0
    rows = [json.loads(x) for x in out.read_text("utf-8").splitlines()]
    expected = [json.loads(x)["id"] for x in path.read_text("utf-8").splitlines() if x.strip()]
    assert [r["id"] for r in rows] == expected
    assert not [r for r in rows if "error" in r]
