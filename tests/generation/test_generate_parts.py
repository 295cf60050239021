"""The pieces of `dagmath generate`: problems files, JSON extraction, names, URLs."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

from dagmath_viz.generation.client import (
    FatalAPIError,
    extract_json,
    public_url,
    run_to_completion,
)
from dagmath_viz.generation.problems import read_problems, safe_name
from dagmath_viz.generation.prompts import DEFAULT_SYSTEM_PROMPT, SOLUTION_SCHEMA, prompt_hash
from dagmath_viz.progress import Progress
from dagmath_viz.schema import DagMathError

SOLUTION = {"steps": [{"step_id": 1, "thinking": "t", "direct_dependent_steps": None, "text": "x"}]}


# --------------------------------------------------------------------------- problems files


def test_problems_from_jsonl_json_and_csv_agree(tmp_path):
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text(
        '{"problem_id": 1, "problem": "One?", "answer": 1, "difficulty": 0.5}\n\n'
        '{"id": "b-2", "problem_text": "Two?", "solution": "Because."}\n'
    )
    as_json = tmp_path / "a.json"
    as_json.write_text(
        json.dumps(
            [
                {"problem_id": 1, "problem": "One?", "answer": 1, "difficulty": 0.5},
                {"id": "b-2", "problem_text": "Two?", "solution": "Because."},
            ]
        )
    )
    as_csv = tmp_path / "a.csv"
    as_csv.write_text(
        'id,problem,answer,difficulty,solution\n1,One?,1,0.5,\nb-2,"Two?",,,Because.\n'
    )
    for path in (jsonl, as_json, as_csv):
        first, second = read_problems(path)
        assert (first.key, first.text, first.answer, first.difficulty) == ("1", "One?", "1", 0.5)
        assert (second.key, second.text, second.answer, second.solution) == (
            "b-2",
            "Two?",
            None,
            "Because.",
        )
    assert read_problems(jsonl)[0].problem_id == 1  # an int stays an int in the output


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        # each bad file is named with the place of its first fault
        (
            "p.jsonl",
            '{"problem_id": 1, "problem": "x"}\n{oops\n',
            "p.jsonl: line 2, column 2: invalid JSON",
        ),
        ("p.jsonl", '{"problem": "x"}\n', "p.jsonl: line 1: no problem_id (or id)"),
        (
            "p.jsonl",
            '{"id": 1, "problem": "x"}\n{"id": "1", "problem": "y"}\n',
            "line 2: problem id '1' repeats the one at line 1",
        ),
        (
            "p.jsonl",
            '{"id": "../x", "problem": "x"}\n',
            "line 1: problem_id '../x' cannot name a file",
        ),
        (
            "p.jsonl",
            '{"id": 1, "problem": "x", "difficulty": "hard"}\n',
            "line 1: difficulty 'hard' is not a number",
        ),
        (
            "p.jsonl",
            '{"id": 1, "problem": "x", "answer": [1]}\n',
            "line 1: answer must be text or a number",
        ),
        ("p.jsonl", "[1, 2]\n", "line 1: expected an object, found list"),
        ("p.json", '{"a": 1}', "p.json: expected a JSON list of problems"),
        (
            "p.json",
            '[{"id": 1, "problem": "x"}, {"id": 2, "problem": ""}]',
            "p.json: record 2: no problem text",
        ),
        ("p.csv", "id,question\n1,x\n", "p.csv: line 1: the CSV needs the columns"),
        ("p.csv", 'id,problem\n1,"multi\nline"\n2,\n', "p.csv: line 4: no problem text"),
        ("p.jsonl", "", "p.jsonl: no problems found"),
        ("p.txt", "x", "p.txt: expected a .jsonl, .json, .csv, .ndjson, .jsonl.gz or .parquet"),
        ("p.ndjson", '{"id": 1, "problem": "x"}\n{"id": 2,\n', "p.ndjson: line 2, column"),
        ("p.parquet", "not parquet", "p.parquet: not a readable Parquet file"),
        ("p.jsonl.gz", "not gzip", "p.jsonl.gz: not a readable gzip file"),
        # to_json's JSON Lines in a .json file: a bad line is named as in a .jsonl
        (
            "p.json",
            '{"id": 1, "problem": "x"}\n{"id": 1, "problem": "y"}\n',
            "p.json: line 2: problem id '1' repeats the one at line 1",
        ),
    ],
)
def test_bad_problems_files_are_located(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(DagMathError) as caught:
        read_problems(path)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_unreadable_problems_file(tmp_path):
    # the project's one wording for a missing file (jsonio), and a located bad byte
    with pytest.raises(DagMathError, match="missing.jsonl: no such file or folder"):
        read_problems(tmp_path / "missing.jsonl")
    (tmp_path / "bin.jsonl").write_bytes(b'{"id": 1, "problem": "\xff"}')
    with pytest.raises(DagMathError, match=r"line 1, column 23: .*not UTF-8: byte 0xff"):
        read_problems(tmp_path / "bin.jsonl")


# --------------------------------------------------------------------------- replies


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (json.dumps(SOLUTION), SOLUTION),
        ("```json\n" + json.dumps(SOLUTION) + "\n```", SOLUTION),
        ("Here you go:\n```\n" + json.dumps(SOLUTION) + "\n```\nanything else?", SOLUTION),
        ("<think>use {x} and {y: 2}</think>\n" + json.dumps(SOLUTION), SOLUTION),
        ("The JSON: " + json.dumps(SOLUTION) + " -- end.", SOLUTION),
        ('{"other": 1} then ' + json.dumps(SOLUTION), SOLUTION),
        ('{"steps": [{"step_id": 1', None),  # truncated
        ("no JSON at all", None),
        ("", None),
    ],
)
def test_extract_json(text, expected):
    assert extract_json(text, "steps") == expected


def test_extract_json_scan_is_bounded():
    text = "{" * 100_000 + json.dumps(SOLUTION)
    assert extract_json(text, "steps") is None  # gives up instead of scanning forever


@pytest.mark.parametrize(
    ("url", "public"),
    [
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("https://u:p@api.example.com/v1?key=s#frag", "https://api.example.com/v1"),
        ("http://[::1]:8000/v1", "http://[::1]:8000/v1"),
    ],
)
def test_public_url(url, public):
    assert public_url(url) == public


@pytest.mark.parametrize(
    ("name", "safe"),
    [
        ("gpt-4o-mini", "gpt-4o-mini"),
        ("Qwen/Qwen2.5-Math-7B-Instruct", "Qwen_Qwen2.5-Math-7B-Instruct"),
        (".hidden", "hidden"),
        ("../../etc", "_.._etc"),
        ("a b:c", "a_b_c"),
        ("", "_"),
    ],
)
def test_safe_name(name, safe):
    assert safe_name(name) == safe


def test_prompt_hash_changes_with_the_prompt():
    assert prompt_hash(DEFAULT_SYSTEM_PROMPT, SOLUTION_SCHEMA) == prompt_hash(
        DEFAULT_SYSTEM_PROMPT, SOLUTION_SCHEMA
    )
    assert prompt_hash(DEFAULT_SYSTEM_PROMPT + " ", SOLUTION_SCHEMA) != prompt_hash(
        DEFAULT_SYSTEM_PROMPT, SOLUTION_SCHEMA
    )


def test_default_prompt_examples_are_valid_closed_solutions():
    # the two examples inside our prompt must themselves follow the format they teach
    from dagmath_viz.formats.records import parse_record
    from dagmath_viz.score.reference import score_trajectory

    blocks = DEFAULT_SYSTEM_PROMPT.split("Solution:\n")[1:]
    assert len(blocks) == 2
    for block in blocks:
        example, _ = json.JSONDecoder().raw_decode(block)
        traj, issues = parse_record(example, "prompt", "example", 0)
        assert not issues
        score = score_trajectory(traj)
        assert score.closed and not score.errors


class _Stream:
    def __init__(self, tty: bool) -> None:
        self.text = ""
        self.tty = tty

    def write(self, s: str) -> None:
        self.text += s

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return self.tty


def test_progress_plain_lines_and_tty_bar():
    plain = _Stream(tty=False)
    progress = Progress("generate", total=4, already=1, stream=plain, interval=3600)
    progress.show(force=True)
    progress.advance(ok=True)  # within the interval: no line
    progress.advance(ok=False)
    progress.advance(ok=True)  # the last one: always a line
    lines = plain.text.splitlines()
    # the one reporter's line (dagmath_viz/progress.py): before any unit of this run, no
    # rate and no ETA; at the end, the failure counted and nothing left
    assert lines[0] == "dagmath: generate: 1/4, ? /s, 0:00 elapsed, ETA ?"
    assert lines[-1].startswith("dagmath: generate: 3/4, 1 failed, ")
    assert lines[-1].endswith(", ETA 0:00")
    assert len(lines) == 2
    tty = _Stream(tty=True)
    bar = Progress("generate", total=2, already=0, stream=tty)
    bar.advance(ok=True)
    bar.advance(ok=True)
    bar.close()
    assert "\r" in tty.text and "[" + "#" * 30 + "]" in tty.text and tty.text.endswith("\n")


# --------------------------------------------------------------------------- sync entry point


def _in_a_thread_with_a_running_loop(caller):
    """Run ``caller()`` (a coroutine function) in a fresh thread whose own loop is running,
    whatever this test session's thread is doing (Playwright's sync API runs one here)."""
    outcome = {}

    def run() -> None:
        try:
            outcome["result"] = asyncio.run(caller())
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def test_runs_complete_inside_a_thread_whose_event_loop_is_running():
    # A Jupyter cell, or a test session driving Playwright's sync API, already runs a loop
    # in the caller's thread, where asyncio.run refuses to start.
    async def answer() -> int:
        return 42

    async def caller() -> int:
        return run_to_completion(answer)

    assert _in_a_thread_with_a_running_loop(caller) == 42


def test_an_error_inside_a_run_reaches_the_caller():
    async def fail() -> None:
        raise FatalAPIError("refused")

    async def caller() -> None:
        run_to_completion(fail)

    with pytest.raises(FatalAPIError, match="refused"):
        _in_a_thread_with_a_running_loop(caller)
