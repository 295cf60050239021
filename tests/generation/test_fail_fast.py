"""A run that cannot succeed stops at once, with one line naming the cause (issue 31 item 1).

The pre-flight check (``GET /models``, else one request of one token) catches a wrong
port, an unknown model and a bad key before the first sample; the breaker stops a run
whose server starts refusing everything mid-way. The proxy-shaped server answers as
LiteLLM does: a wrong model or key is an HTTP 400, not a 401 or 404.
"""

from __future__ import annotations

import csv
import itertools
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from gen_fake_server import Action, drop, error, reply
from gen_helpers import ScriptedModel, run_cli, write_problems

REPO = Path(__file__).resolve().parents[2]
GOOD_KEY = "sk-proxy-good"
SERVED = ["gpt-4o-mini", "qwen2.5-math-7b"]
BAD_KEY_MESSAGE = (
    "Authentication Error, Invalid proxy server token passed. Received API Key = "
    "sk-...oops, Key Hash (Token) =e3b0c442. Unable to find token in cache or "
    "`LiteLLM_VerificationTokenTable`"
)


def _bad_model_message(model: str) -> str:
    return (
        f"/chat/completions: Invalid model name passed in model={model}. Call `/v1/models` "
        "to view available models for your key."
    )


class Proxy:
    """LiteLLM's answers: 400 for a bad key (on every route) and for an unknown model."""

    def __init__(self) -> None:
        self.model = ScriptedModel()

    def gate(self, headers: dict) -> Action | None:
        if headers.get("authorization") != f"Bearer {GOOD_KEY}":
            return error(400, BAD_KEY_MESSAGE)
        return None

    def models(self, headers: dict) -> Action:
        data = [{"id": m, "object": "model", "owned_by": "openai"} for m in SERVED]
        return Action("raw", content=json.dumps({"object": "list", "data": data}))

    def __call__(self, body: dict) -> Action:
        if body.get("model") not in SERVED:
            return error(400, _bad_model_message(body.get("model")))
        if body.get("messages", [{}])[-1].get("content") == "Say OK.":
            return reply("OK")
        return self.model(body)


def _cli(*argv: object, key: str | None = None) -> subprocess.CompletedProcess:
    """``dagmath`` in a process of its own, with retry waits so long that any retry would
    overrun the 30 s the issue allows: passing proves the stop came from the check."""
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env.update(PYTHONPATH=str(REPO), DAGMATH_RETRY_BASE_SECONDS="1000")
    if key is not None:
        env["OPENAI_API_KEY"] = key
    return subprocess.run(
        [sys.executable, "-m", "dagmath_viz", *map(str, argv)],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )


def _one_line(done: subprocess.CompletedProcess) -> str:
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("dagmath: error: ")
    return lines[0]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # closed again: nothing listens there


def test_a_wrong_port_stops_with_one_line(tmp_path):
    problems = write_problems(tmp_path / "p.jsonl", 50)
    url = f"http://127.0.0.1:{_free_port()}/v1"
    done = _cli("generate", problems, "--base-url", url, "--model", "m", "--samples", "8",
                "-o", tmp_path / "out")  # fmt: skip
    assert done.returncode == 1
    line = _one_line(done)
    assert f"cannot connect to {url}" in line and "--base-url" in line


@pytest.mark.parametrize("command", ["generate", "gold"])
def test_an_unknown_model_behind_a_proxy_stops_with_one_line(tmp_path, serve, command):
    problems = tmp_path / "p.jsonl"
    rows = [{"id": i, "problem": f"P{i}", "solution": "7.", "answer": "7"} for i in range(50)]
    problems.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proxy = Proxy()
    server = serve(proxy, models_script=proxy.models, answer_pings=False, gate=proxy.gate)
    done = _cli(command, problems, "--base-url", server.base_url, "--model", "gtp-4o-mini",
                "-o", tmp_path / "out", key=GOOD_KEY)  # fmt: skip
    assert done.returncode == 1
    line = _one_line(done)
    assert "model 'gtp-4o-mini'" in line
    assert "Invalid model name passed in model=gtp-4o-mini" in line
    assert "it lists 'gpt-4o-mini', 'qwen2.5-math-7b'" in line  # what to use instead
    (ping,) = server.chat_requests()  # the one-token check, and no sample
    assert ping.body["max_tokens"] == 1


def test_a_bad_key_behind_a_proxy_stops_with_one_line(tmp_path, serve):
    problems = write_problems(tmp_path / "p.jsonl", 50)
    proxy = Proxy()
    server = serve(proxy, models_script=proxy.models, answer_pings=False, gate=proxy.gate)
    done = _cli("generate", problems, "--base-url", server.base_url, "--model", SERVED[0],
                "-o", tmp_path / "out", key="sk-oops")  # fmt: skip
    assert done.returncode == 1
    line = _one_line(done)
    assert "Authentication Error, Invalid proxy server token passed" in line
    assert "sk-oops" not in line  # the proxy masks it; we never print the key either
    assert len(server.chat_requests()) == 1


def test_a_listed_model_and_good_key_start_at_once(tmp_path, serve, fast_backoff, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", GOOD_KEY)
    problems = write_problems(tmp_path / "p.jsonl", 2)
    proxy = Proxy()
    server = serve(proxy, models_script=proxy.models, answer_pings=False, gate=proxy.gate)
    out = tmp_path / "out"
    assert run_cli("generate", problems, "--base-url", server.base_url, "--model", SERVED[1],
                   "-o", out) == 0  # fmt: skip
    assert len(server.model_lists) == 1
    # listed: no one-token request, only the two samples
    assert [r.body["max_tokens"] if "max_tokens" in r.body else None
            for r in server.chat_requests()] == [None, None]  # fmt: skip


def test_a_401_on_the_model_list_names_the_credentials(tmp_path, serve, fast_backoff, capsys):
    problems = write_problems(tmp_path / "p.jsonl", 3)
    server = serve(ScriptedModel(), models_script=lambda headers: error(401, "invalid api key"))
    code = run_cli("generate", problems, "--base-url", server.base_url, "--model", "m",
                   "-o", tmp_path / "out")  # fmt: skip
    assert code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "refused the credentials (HTTP 401: invalid api key)" in err[0]
    assert server.chat_requests() == [] and server.pings == []


def test_no_preflight_then_the_breaker_stops_identical_400s(tmp_path, serve, fast_backoff, capsys):
    problems = write_problems(tmp_path / "p.jsonl", 20)
    server = serve(lambda body: error(400, _bad_model_message("nope")))
    code = run_cli("generate", problems, "--base-url", server.base_url, "--model", "nope",
                   "--no-preflight", "--concurrency", "1", "--stop-after", "3",
                   "-o", tmp_path / "out")  # fmt: skip
    assert code == 1
    err = capsys.readouterr().err
    assert err.count("dagmath: error:") == 1
    assert "gave every request the same answer (HTTP 400: " in err
    assert "Invalid model name passed in model=nope" in err and "3 in a row" in err
    # three samples, each a structured request and its plain resend: then nothing more
    assert len(server.chat_requests()) == 6
    assert server.model_lists == [] and server.pings == []


def test_different_400s_do_not_trip_the_breaker(tmp_path, serve, fast_backoff, capsys):
    # a prompt too long is that prompt's fault: each says its own length
    problems = write_problems(tmp_path / "p.jsonl", 6)

    sizes = itertools.count(5000, 37)

    def script(body: dict) -> Action:
        return error(400, f"maximum context length is 4096 tokens; you asked for {next(sizes)}")

    server = serve(script)
    code = run_cli("generate", problems, "--base-url", server.base_url, "--model", "m",
                   "--concurrency", "1", "--stop-after", "2", "-o", tmp_path / "out")  # fmt: skip
    assert code == 4  # every sample tried and listed, none stopped the run
    with open(tmp_path / "out" / "failures.csv") as handle:
        assert len(list(csv.DictReader(handle))) == 6
    assert len(server.chat_requests()) == 12


def test_the_breaker_stops_a_server_that_drops_every_connection(
    tmp_path, serve, fast_backoff, capsys
):
    problems = write_problems(tmp_path / "p.jsonl", 10)
    server = serve(lambda body: drop())  # the check passes (pings are answered), then not
    code = run_cli("generate", problems, "--base-url", server.base_url, "--model", "m",
                   "--concurrency", "1", "--retries", "100", "--stop-after", "4",
                   "-o", tmp_path / "out")  # fmt: skip
    assert code == 1
    err = capsys.readouterr().err
    assert err.count("dagmath: error:") == 1
    assert f"cannot connect to {server.base_url}" in err and "stopped after 4 in a row" in err
    assert len(server.chat_requests()) == 4  # not 101 resends of the first sample
    assert len(server.pings) == 1


def test_a_model_refusing_max_tokens_still_passes_the_check(tmp_path, serve, fast_backoff):
    # OpenAI's reasoning models take max_completion_tokens only
    model = ScriptedModel()

    def script(body: dict) -> Action:
        if "max_tokens" in body:
            return error(400, "Unsupported parameter: 'max_tokens' is not supported with "
                         "this model. Use 'max_completion_tokens' instead.")  # fmt: skip
        if body["messages"][-1]["content"] == "Say OK.":
            return reply("OK")
        return model(body)

    server = serve(script, answer_pings=False)
    out = tmp_path / "out"
    assert run_cli("generate", write_problems(tmp_path / "p.jsonl", 2), "--base-url",
                   server.base_url, "--model", "o-model", "-o", out) == 0  # fmt: skip
    checks = [r for r in server.chat_requests() if r.body["messages"][-1]["content"] == "Say OK."]
    assert ["max_tokens" in r.body for r in checks] == [True, False]
    assert len(server.chat_requests()) == 4  # the two checks and the two samples


def test_a_busy_server_at_the_check_only_gets_a_note(tmp_path, serve, fast_backoff, capsys):
    model = ScriptedModel()

    def script(body: dict) -> Action:
        if body["messages"][-1]["content"] == "Say OK.":
            return error(503, "loading the model")
        return model(body)

    server = serve(script, answer_pings=False)
    out = tmp_path / "out"
    assert run_cli("generate", write_problems(tmp_path / "p.jsonl", 2), "--base-url",
                   server.base_url, "--model", "m", "-o", out) == 0  # fmt: skip
    err = capsys.readouterr().err
    assert "dagmath: note: the check request got HTTP 503; starting anyway" in err
