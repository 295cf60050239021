"""`dagmath generate` end to end: the real openai client over HTTP to a scripted model."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from gen_helpers import ScriptedModel, read_samples, run_cli, write_problems

MODEL = "acme/dag-model-7b"  # a '/' in the name: the folder must be made safe

# One fault per problem; problems 4, 8 and 12 are answered wrongly.
FAULTS = {
    1: ["429:0.05"],
    2: ["500", "503"],
    3: ["slow:4"],  # beyond --timeout 1.5 (loose enough for a busy machine)
    4: ["truncated"],
    5: ["fenced"],
    6: ["prose"],
    7: ["invalid"],
    8: ["drop"],
    9: ["odd"],  # parseable but illegal: kept
    10: ["garbage"],  # a 200 whose body is no completion
}
WRONG = {4, 8, 12}


def _scored(out: Path, tmp_path: Path) -> list[dict]:
    scored = tmp_path / "scored.jsonl"
    assert run_cli("score", out, "-o", scored, "--no-cache", "-j", "1") == 0
    return [json.loads(line) for line in scored.read_text().splitlines()]


def test_twelve_problems_three_samples_through_every_fault(tmp_path, serve, fast_backoff, capsys):
    problems = write_problems(tmp_path / "toy-set.jsonl", 12)
    model = ScriptedModel(WRONG, FAULTS, refuse_response_format=True)
    server = serve(model)
    out = tmp_path / "out"
    args = (
        "generate", problems, "--base-url", server.base_url, "--model", MODEL,
        "--samples", "3", "--concurrency", "4", "--timeout", "1.5", "-o", out,
    )  # fmt: skip
    assert run_cli(*args) == 0
    err = capsys.readouterr().err

    # the plain-text fallback is announced once, and no later request asks for a schema:
    # the client stops sending one when a plain request is first answered with a completion
    # (only that blames response_format); until then each of the 4 workers may still start
    # structured calls, and the ones already on their way when it is answered may arrive
    assert err.count("refused response_format") == 1
    assert model.refusals >= 1
    sent = server.chat_requests()
    plain = [r for r in sent if "response_format" not in r.body]
    first_answer = min(r.replied for r in plain if r.replied is not None)
    late = [r for r in sent if "response_format" in r.body and r.time > first_answer]
    assert len(late) <= 4, [round(r.time - first_answer, 3) for r in late]

    folder = out / "acme_dag-model-7b" / "toy-set"
    files = read_samples(folder)
    assert len(files) == 12
    for name, samples in files.items():
        assert [s["sample_id"] for s in samples] == [1, 2, 3], name
        assert all(s["metadata"]["model"] == MODEL for s in samples)
    assert sum(len(s) for s in files.values()) == 36
    assert not (out / "failures.csv").exists()
    # the odd solution was kept as the model wrote it
    odd = [
        s
        for s in files["problem_9_all_samples.json"]
        if s["steps"][1]["direct_dependent_steps"] == [3]
    ]
    assert len(odd) == 1
    assert "36 of 36 samples done" in err
    assert f", {len(sent)} requests, " in err  # every request the server saw is counted

    # scoring needs no flags: answers.jsonl sits beside the samples
    records = _scored(out, tmp_path)
    assert len(records) == 36
    assert {r["model"] for r in records} == {MODEL}
    correct = sum(r["final_correct"] for r in records)
    assert correct == 27  # 9 of 12 problems right, 3 samples each
    assert sum(r["class"] == "illegal" for r in records) == 1
    difficulty = {r["problem_id"]: r["difficulty"] for r in records}
    assert difficulty["6"] == 0.5

    # a rerun sends nothing and touches no finished file
    stamps = {p: p.stat().st_mtime_ns for p in folder.iterdir()}
    before = len(server.chat_requests())
    assert run_cli(*args) == 0
    assert len(server.chat_requests()) == before
    assert {p: p.stat().st_mtime_ns for p in folder.iterdir()} == stamps
    assert "36 from an earlier run, 0 now" in capsys.readouterr().err


def test_schema_is_sent_strict_and_prompt_is_the_authors(tmp_path, serve, fast_backoff, capsys):
    problems = write_problems(tmp_path / "p.jsonl", 1)
    server = serve(ScriptedModel())
    out = tmp_path / "out"
    assert (
        run_cli("generate", problems, "--base-url", server.base_url, "--model", "m", "-o", out) == 0
    )
    (request,) = server.chat_requests()
    fmt = request.body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["strict"] is True
    step = fmt["json_schema"]["schema"]["properties"]["steps"]["items"]
    assert step["required"] == ["step_id", "thinking", "direct_dependent_steps", "text"]
    system, user = request.body["messages"]
    assert system["role"] == "system" and "DAG" in system["content"]
    assert user == {
        "role": "user",
        "content": "Problem: Problem P1: what is $7 \\times 1$?\n\nSolution:",
    }
    assert "refused" not in capsys.readouterr().err
    (manifest_file,) = (out / ".dagmath" / "runs").glob("*-generate.json")
    manifest = json.loads(manifest_file.read_text())
    assert manifest["model"] == "m"
    assert manifest["base_url"] == server.base_url
    assert manifest["prompt_hash"].startswith("sha256:")
    assert manifest["parameters"]["samples"] == 1
    assert manifest["prompt_tokens"] == 10 and manifest["completion_tokens"] == 5


def test_retry_after_is_honoured(tmp_path, serve, monkeypatch):
    # a long backoff base: a retry sooner than it proves the header was used instead
    monkeypatch.setenv("DAGMATH_RETRY_BASE_SECONDS", "30")
    problems = write_problems(tmp_path / "p.jsonl", 1)
    server = serve(ScriptedModel(faults={1: ["429:0.4"]}))
    out = tmp_path / "out"
    assert (
        run_cli("generate", problems, "--base-url", server.base_url, "--model", "m", "-o", out) == 0
    )
    first, second = server.chat_requests()
    assert 0.4 <= second.time - first.time < 5


def test_a_sample_that_keeps_failing_is_listed_and_retried_next_run(
    tmp_path, serve, fast_backoff, capsys
):
    problems = write_problems(tmp_path / "p.jsonl", 2)
    model = ScriptedModel(faults={2: ["always-invalid"]})
    server = serve(model)
    out = tmp_path / "out"
    args = ("generate", problems, "--base-url", server.base_url, "--model", "m",
            "--samples", "2", "--attempts", "2", "-o", out)  # fmt: skip
    assert run_cli(*args) == 4
    err = capsys.readouterr().err
    assert "2 samples failed" in err and "failures.csv" in err
    with open(out / "failures.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["problem_id"], r["sample_id"]) for r in rows] == [("2", "1"), ("2", "2")]
    assert all("no JSON object" in r["reason"] and r["attempts"] == "2" for r in rows)
    assert model.count[2] == 4  # two samples, two replies each: bounded
    folder = out / "m" / "p"
    assert not (folder / "problem_2_all_samples.json").exists()

    # the server recovers: the rerun asks only for the two missing samples
    model.faults = {}
    before = len(server.chat_requests())
    assert run_cli(*args) == 0
    assert len(server.chat_requests()) == before + 2
    assert not (out / "failures.csv").exists()
    assert len(read_samples(folder)["problem_2_all_samples.json"]) == 2


def test_transport_retries_are_bounded(tmp_path, serve, fast_backoff, capsys):
    problems = write_problems(tmp_path / "p.jsonl", 1)
    server = serve(ScriptedModel(faults={1: ["500"] * 50}))
    out = tmp_path / "out"
    args = ("generate", problems, "--base-url", server.base_url, "--model", "m",
            "--retries", "2", "-o", out)  # fmt: skip
    assert run_cli(*args) == 4
    assert len(server.chat_requests()) == 3  # the first send and two retries
    with open(out / "failures.csv") as handle:
        (row,) = csv.DictReader(handle)
    assert row["reason"] == "HTTP 500, 3 times"


def test_bad_input_is_reported_before_any_request(tmp_path, serve, fast_backoff, capsys):
    problems = tmp_path / "p.jsonl"
    problems.write_text('{"problem_id": 1, "problem": "ok"}\n{"problem_id": 2}\n')
    server = serve(ScriptedModel())
    code = run_cli(
        "generate", problems, "--base-url", server.base_url, "--model", "m", "-o", tmp_path / "o"
    )
    assert code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"dagmath: error: {problems}: line 2: no problem text (field 'problem' or 'problem_text')"
    ]
    assert server.chat_requests() == []


def test_unauthorised_stops_the_run_with_one_line(tmp_path, serve, fast_backoff, capsys):
    problems = write_problems(tmp_path / "p.jsonl", 5)
    server = serve(lambda body: __import__("gen_fake_server").error(401, "bad key"))
    code = run_cli(
        "generate", problems, "--base-url", server.base_url, "--model", "m",
        "--concurrency", "1", "-o", tmp_path / "o",
    )  # fmt: skip
    assert code == 1
    err = capsys.readouterr().err
    assert "refused the credentials (HTTP 401: bad key)" in err
    assert "Traceback" not in err
    assert len(server.chat_requests()) == 1


def test_the_api_key_is_sent_but_never_written(tmp_path, serve, fast_backoff, monkeypatch, capsys):
    secret = "sk-test-9f8e7d6c5b4a"
    monkeypatch.setenv("MY_KEY", secret)
    problems = write_problems(tmp_path / "p.jsonl", 2)
    server = serve(ScriptedModel(faults={1: ["500"]}))
    out = tmp_path / "out"
    args = ("generate", problems, "--base-url", server.base_url, "--model", "m",
            "--api-key-env", "MY_KEY", "-o", out)  # fmt: skip
    assert run_cli(*args) == 0
    auth = {r.headers.get("authorization") for r in server.chat_requests()}
    assert auth == {f"Bearer {secret}"}
    everything = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    assert secret.encode() not in everything
    assert secret not in "".join(capsys.readouterr())


def test_credentials_in_the_url_are_not_written(tmp_path, serve, fast_backoff, capsys):
    problems = write_problems(tmp_path / "p.jsonl", 1)
    server = serve(ScriptedModel())
    out = tmp_path / "out"
    url = server.base_url.replace("http://", "http://user:pw-secret@")
    assert run_cli("generate", problems, "--base-url", url, "--model", "m", "-o", out) == 0
    everything = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    assert b"pw-secret" not in everything
    assert b'"base_url": "' + server.base_url.encode() + b'"' in everything
    assert "secret" not in "".join(capsys.readouterr())


def test_missing_key_variable_is_an_error(tmp_path, serve, fast_backoff, monkeypatch, capsys):
    monkeypatch.delenv("NOPE_KEY", raising=False)
    problems = write_problems(tmp_path / "p.jsonl", 1)
    server = serve(ScriptedModel())
    code = run_cli("generate", problems, "--base-url", server.base_url, "--model", "m",
                   "--api-key-env", "NOPE_KEY", "-o", tmp_path / "o")  # fmt: skip
    assert code == 1
    assert "NOPE_KEY is not set" in capsys.readouterr().err
    assert server.chat_requests() == []


def test_two_models_with_the_same_folder_name_are_never_mixed(
    tmp_path, serve, fast_backoff, capsys
):
    problems = write_problems(tmp_path / "p.jsonl", 1)
    server = serve(ScriptedModel())
    out = tmp_path / "out"
    base = ("generate", problems, "--base-url", server.base_url, "-o", out)
    assert run_cli(*base, "--model", "org/m") == 0
    assert run_cli(*base, "--model", "org_m") == 1
    assert "already holds samples of the model 'org/m'" in capsys.readouterr().err
    assert len(server.chat_requests()) == 1


def test_no_structured_and_reasoning_content_is_kept(tmp_path, serve, fast_backoff):
    from gen_fake_server import Action
    from gen_helpers import solution

    good = json.dumps(solution(1, "7"))
    server = serve(lambda body: Action("reply", content=good, reasoning="Let me think: 7."))
    problems = write_problems(tmp_path / "p.jsonl", 1)
    out = tmp_path / "out"
    args = ("generate", problems, "--base-url", server.base_url, "--model", "m", "-o", out,
            "--no-structured", "--temperature", "0.7", "--max-tokens", "512")  # fmt: skip
    assert run_cli(*args) == 0
    (request,) = server.chat_requests()
    assert "response_format" not in request.body
    assert request.body["temperature"] == 0.7 and request.body["max_tokens"] == 512
    (sample,) = read_samples(out / "m" / "p")["problem_1_all_samples.json"]
    assert sample["metadata"] == {"reasoning_content": "Let me think: 7.", "model": "m"}
    assert sample["final_answer"] == "The final answer is $\\boxed{7}$."


def test_at_most_k_requests_in_flight(tmp_path, serve, fast_backoff):
    problems = write_problems(tmp_path / "p.jsonl", 8)
    server = serve(ScriptedModel(faults={1: ["429:0.05"], 2: ["500"]}, delay=0.15))
    out = tmp_path / "out"
    args = ("generate", problems, "--base-url", server.base_url, "--model", "m",
            "--concurrency", "3", "-o", out)  # fmt: skip
    assert run_cli(*args) == 0
    assert server.max_in_flight == 3  # used to the full, never beyond


def test_system_prompt_from_a_file(tmp_path, serve, fast_backoff):
    prompt = tmp_path / "authors.txt"
    prompt.write_text("Answer in the DAG-MATH JSON format.\n")
    problems = write_problems(tmp_path / "p.jsonl", 1)
    server = serve(ScriptedModel())
    out = tmp_path / "out"
    args = ("generate", problems, "--base-url", server.base_url, "--model", "m",
            "--system-prompt", prompt, "-o", out)  # fmt: skip
    assert run_cli(*args) == 0
    (request,) = server.chat_requests()
    assert request.body["messages"][0] == {
        "role": "system",
        "content": "Answer in the DAG-MATH JSON format.\n",
    }
    (manifest_file,) = (out / ".dagmath" / "runs").glob("*-generate.json")
    assert json.loads(manifest_file.read_text())["system_prompt"] == "file authors.txt"
    missing = ("generate", problems, "--base-url", server.base_url, "--model", "m",
               "--system-prompt", tmp_path / "nope.txt", "-o", out)  # fmt: skip
    assert run_cli(*missing) == 1
    assert len(server.chat_requests()) == 1


def test_a_dataset_name_that_is_not_a_safe_folder_name_still_scores(tmp_path, serve, fast_backoff):
    problems = write_problems(tmp_path / "p.jsonl", 2)
    server = serve(ScriptedModel(wrong={2}))
    out = tmp_path / "out"
    args = ("generate", problems, "--base-url", server.base_url, "--model", "m",
            "--dataset", "gsm 8k/test", "-o", out)  # fmt: skip
    assert run_cli(*args) == 0
    assert (out / "m" / "gsm_8k_test" / "problem_1_all_samples.json").is_file()
    records = _scored(out, tmp_path)
    verdicts = sorted((r["problem_id"], r["final_correct"]) for r in records)
    assert verdicts == [("1", True), ("2", False)]


def test_a_400_for_one_prompt_fails_that_sample_only(tmp_path, serve, fast_backoff, capsys):
    problems = write_problems(tmp_path / "p.jsonl", 3)
    server = serve(ScriptedModel(faults={2: ["too-long"], 3: ["garbage"]}))
    out = tmp_path / "out"
    args = ("generate", problems, "--base-url", server.base_url, "--model", "m",
            "--concurrency", "1", "-o", out)  # fmt: skip
    assert run_cli(*args) == 4
    err = capsys.readouterr().err
    assert "refused response_format" not in err  # the plain resend failed too: not the schema
    with open(out / "failures.csv") as handle:
        (row,) = csv.DictReader(handle)
    assert row["problem_id"] == "2"
    assert row["reason"] == "HTTP 400: This model's maximum context length is 4096 tokens"
    sent = server.chat_requests()
    p2 = [r for r in sent if "P2:" in r.body["messages"][-1]["content"]]
    assert ["response_format" in r.body for r in p2] == [True, False]  # one plain resend
    p3 = [r for r in sent if "P3:" in r.body["messages"][-1]["content"]]
    assert len(p3) == 2 and all("response_format" in r.body for r in p3)  # garbage resent
    assert len(read_samples(out / "m" / "p")) == 2
