"""``--map`` for the problem files people have (MATH-500, GSM8K; issue 27), and the
sampling knobs researchers use (issue 31 item 2), each checked on what reaches the server."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from gen_fake_server import reply
from gen_helpers import ScriptedModel, problem_text, read_samples, run_cli, solution

from dagmath_viz.generation.problems import parse_field_map, read_problems


def _scored(out, tmp_path) -> list[dict]:
    scored = tmp_path / "scored.jsonl"
    assert run_cli("score", out, "-o", scored, "--no-cache", "-j", "1") == 0
    return [json.loads(line) for line in scored.read_text().splitlines()]


def _math500_rows(n: int) -> list[dict]:
    """MATH-500's columns: problem, solution, answer, subject, level, unique_id (a path)."""
    return [
        {
            "problem": problem_text(i),
            "solution": f"Multiply: $7 \\times {i} = {7 * i}$.",
            "answer": str(7 * i),
            "subject": "Prealgebra",
            "level": i,
            "unique_id": f"test/prealgebra/{100 + i}.json",
        }
        for i in range(1, n + 1)
    ]


def _gsm8k_rows(n: int, wrong: int) -> list[dict]:
    """GSM8K's columns: question, and answer = worked solution then '#### <number>'."""
    rows = []
    for i in range(1, n + 1):
        final = 7 * i + (1 if i == wrong else 0)
        worked = f"Seven times {i} is <<7*{i}={7 * i}>>{7 * i}.\n#### {final}"
        rows.append({"question": problem_text(i), "answer": worked})
    return rows


def test_a_math500_shaped_file_runs_with_map(tmp_path, serve, fast_backoff):
    problems = tmp_path / "math500.jsonl"
    problems.write_text("".join(json.dumps(r) + "\n" for r in _math500_rows(3)))
    server = serve(ScriptedModel(wrong={3}))
    out = tmp_path / "out"
    assert run_cli("generate", problems, "--base-url", server.base_url, "--model", "m",
                   "--map", "problem_id=unique_id,problem_text=problem,answer=answer",
                   "-o", out) == 0  # fmt: skip
    folder = out / "m" / "math500"
    files = read_samples(folder)
    # the id keeps its slashes in the records; the file name has '_' for them
    assert sorted(files) == [f"problem_test_prealgebra_{100 + i}.json_all_samples.json"
                             for i in (1, 2, 3)]  # fmt: skip
    (sample,) = files["problem_test_prealgebra_101.json_all_samples.json"]
    assert sample["problem_id"] == "test/prealgebra/101.json"
    assert sample["problem_text"] == problem_text(1)
    verdicts = sorted((r["problem_id"], r["final_correct"]) for r in _scored(out, tmp_path))
    assert verdicts == [
        ("test/prealgebra/101.json", True),
        ("test/prealgebra/102.json", True),
        ("test/prealgebra/103.json", False),  # the scripted model answers 22, not 21
    ]


def test_a_gsm8k_shaped_file_runs_with_map_and_row_numbers(tmp_path, serve, fast_backoff):
    problems = tmp_path / "gsm8k.jsonl"
    # the reference for problem 2 is off by one: the model's 14 must then be scored wrong
    problems.write_text("".join(json.dumps(r) + "\n" for r in _gsm8k_rows(3, wrong=2)))
    server = serve(ScriptedModel())
    out = tmp_path / "out"
    assert run_cli("generate", problems, "--base-url", server.base_url, "--model", "m",
                   "--map", "problem_text=question,answer=answer", "-o", out) == 0  # fmt: skip
    folder = out / "m" / "gsm8k"
    files = read_samples(folder)
    assert sorted(files) == [f"problem_{k}_all_samples.json" for k in (0, 1, 2)]
    assert files["problem_0_all_samples.json"][0]["problem_text"] == problem_text(1)
    answers = [json.loads(line) for line in (folder / "answers.jsonl").read_text().splitlines()]
    assert [(a["problem_id"], a["answer"]) for a in answers] == [(0, "7"), (1, "15"), (2, "21")]
    verdicts = sorted((r["problem_id"], r["final_correct"]) for r in _scored(out, tmp_path))
    assert verdicts == [("0", True), ("1", False), ("2", True)]


#: Problem files as Hugging Face's ``datasets`` writes them (tests/fixtures/hf, made by
#: make_hf_fixtures.py): to_json's JSON Lines in a .json file (``/`` written ``\\/``) and
#: to_parquet, the form GSM8K is published in.
HF = Path(__file__).parents[1] / "fixtures" / "hf"


def _hf_rows(path: Path) -> list[dict]:
    """The file's rows, read with pyarrow or json alone."""
    if path.suffix == ".parquet":
        return pq.read_table(path).to_pylist()
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _answering(replies: dict[str, str]):
    """A server script that answers each problem text with its boxed answer."""

    def script(body: dict):
        user = body["messages"][-1]["content"]
        text = user.split("Problem: ", 1)[1].rsplit("\n\nSolution:", 1)[0]
        return reply(json.dumps(solution(1, replies[text])))

    return script


@pytest.mark.parametrize("name", ["gsm8k_shaped.parquet", "gsm8k_shaped.json"])
def test_a_gsm8k_file_as_datasets_writes_it_runs_with_map(name, tmp_path, serve, fast_backoff):
    path = HF / name
    rows = _hf_rows(path)
    finals = [row["answer"].rsplit("####", 1)[1].strip() for row in rows]
    replies = {row["question"]: final for row, final in zip(rows, finals, strict=True)}
    replies[rows[-1]["question"]] += "0"  # the last one answered wrong
    server = serve(_answering(replies))
    out = tmp_path / "out"
    assert run_cli("generate", path, "--base-url", server.base_url, "--model", "m",
                   "--map", "problem_text=question,answer=answer", "-o", out) == 0  # fmt: skip
    folder = out / "m" / "gsm8k_shaped"
    files = read_samples(folder)
    assert sorted(files) == [f"problem_{k}_all_samples.json" for k in range(len(rows))]
    assert [files[f"problem_{k}_all_samples.json"][0]["problem_text"] for k in range(len(rows))] \
        == [row["question"] for row in rows]  # fmt: skip
    answers = [json.loads(line) for line in (folder / "answers.jsonl").read_text().splitlines()]
    assert [(a["problem_id"], a["answer"]) for a in answers] == list(enumerate(finals))
    verdicts = sorted((r["problem_id"], r["final_correct"]) for r in _scored(out, tmp_path))
    assert verdicts == [(str(k), k != len(rows) - 1) for k in range(len(rows))]


def test_a_math500_file_as_to_json_writes_it_runs_with_map(tmp_path, serve, fast_backoff):
    path = HF / "math500_shaped.json"
    assert "test\\/algebra\\/1.json" in path.read_text(encoding="utf-8")  # as datasets wrote it
    rows = _hf_rows(path)
    server = serve(_answering({row["problem"]: row["answer"] for row in rows}))
    out = tmp_path / "out"
    assert run_cli("generate", path, "--base-url", server.base_url, "--model", "m",
                   "--map", "problem_id=unique_id,problem_text=problem,answer=answer",
                   "-o", out) == 0  # fmt: skip
    verdicts = sorted((r["problem_id"], r["final_correct"]) for r in _scored(out, tmp_path))
    assert verdicts == sorted((row["unique_id"], True) for row in rows)
    assert {r["dataset"] for r in _scored(out, tmp_path)} == {"math500_shaped"}


def test_a_map_reads_csv_columns_too(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text('question,final\n"What is 1+1?",2\n"What is 2+2?","#### 4"\n')
    problems = read_problems(path, parse_field_map("problem=question,answer=final"))
    assert [(p.problem_id, p.text, p.answer) for p in problems] == [
        (0, "What is 1+1?", "2"),
        (1, "What is 2+2?", "4"),
    ]
    with pytest.raises(Exception, match=r"line 1: the CSV needs the columns uid$"):
        read_problems(path, parse_field_map("problem_text=question,problem_id=uid"))


def test_ids_that_make_the_same_file_name_are_refused(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "a/b", "problem": "x"}\n{"id": "a_b", "problem": "y"}\n')
    with pytest.raises(Exception, match=r"line 2: problem ids 'a_b' and 'a/b' \(at line 1\)"):
        read_problems(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("problem_id", "'problem_id' is not FIELD=COLUMN"),
        ("title=name", "'title' is not one of problem_id, problem_text, answer"),
        ("problem=q,problem_text=r", "'problem_text' is mapped twice"),
        (",", "no FIELD=COLUMN entry"),
    ],
)
def test_bad_maps_are_usage_errors(tmp_path, capsys, text, message):
    with pytest.raises(ValueError, match=message):
        parse_field_map(text)
    code = run_cli("generate", tmp_path / "p.jsonl", "--base-url", "http://127.0.0.1:9/v1",
                   "--model", "m", "--map", text, "-o", tmp_path / "o")  # fmt: skip
    assert code == 2
    assert message in capsys.readouterr().err


def test_sampling_knobs_reach_the_request_and_the_manifest(tmp_path, serve, fast_backoff):
    problems = tmp_path / "p.jsonl"
    rows = [{"id": i, "problem": problem_text(i)} for i in range(1, 6)]
    problems.write_text("".join(json.dumps(r) + "\n" for r in rows))
    server = serve(ScriptedModel())
    out = tmp_path / "out"
    extra = {"chat_template_kwargs": {"enable_thinking": False}, "top_k": 20}
    assert run_cli("generate", problems, "--base-url", server.base_url, "--model", "m",
                   "--top-p", "0.95", "--seed", "1234", "--stop", "</answer>", "--stop", "###",
                   "--extra-body", json.dumps(extra), "--limit", "2", "-o", out) == 0  # fmt: skip
    sent = server.chat_requests()
    assert len(sent) == 2  # --limit 2 of 5 problems
    for request in sent:
        body = request.body
        assert body["top_p"] == 0.95 and body["seed"] == 1234
        assert body["stop"] == ["</answer>", "###"]
        assert body["chat_template_kwargs"] == {"enable_thinking": False}
        assert body["top_k"] == 20
        assert "temperature" not in body and "max_tokens" not in body  # only when given
    assert sorted(read_samples(out / "m" / "p")) == [
        "problem_1_all_samples.json",
        "problem_2_all_samples.json",
    ]
    (manifest,) = (out / ".dagmath" / "runs").glob("*-generate.json")
    parameters = json.loads(manifest.read_text())["parameters"]
    assert parameters["top_p"] == 0.95 and parameters["seed"] == 1234
    assert parameters["stop"] == ["</answer>", "###"] and parameters["extra_body"] == extra


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--extra-body", '{"temperature": 1}'], "'temperature' is set by --temperature"),
        (["--extra-body", '{"model": "x"}'], "'model' is set by --model"),
        (["--extra-body", "[1]"], "expected a JSON object"),
        (["--extra-body", "{oops"], "not JSON"),
        (["--top-p", "0"], "must be above 0 and at most 1"),
        (["--top-p", "1.5"], "must be above 0 and at most 1"),
        (["--temperature", "-1"], "must be 0 or more"),
        (["--limit", "0"], "must be at least 1"),
    ],
)
def test_bad_knobs_are_usage_errors(tmp_path, capsys, args, message):
    code = run_cli("generate", tmp_path / "p.jsonl", "--base-url", "http://127.0.0.1:9/v1",
                   "--model", "m", "-o", tmp_path / "o", *args)  # fmt: skip
    assert code == 2
    assert message in capsys.readouterr().err


def test_quiet_prints_nothing_on_success_and_the_error_on_failure(
    tmp_path, serve, fast_backoff, capsys
):
    problems = tmp_path / "p.jsonl"
    problems.write_text("".join(json.dumps({"id": i, "problem": problem_text(i)}) + "\n"
                                for i in (1, 2)))  # fmt: skip
    server = serve(ScriptedModel(faults={2: ["always-invalid"]}))
    args = ("generate", problems, "--base-url", server.base_url, "--model", "m",
            "--attempts", "1", "-o", tmp_path / "out")  # fmt: skip
    assert run_cli(*args, "-q") == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dagmath: error: 1 samples failed")
    assert run_cli(*args, "-v") == 4  # the failed one is asked for again, and shown
    err = capsys.readouterr().err
    assert "dagmath: problem 2 sample 1 failed: no JSON object in the reply" in err
