"""``generate``/``gold`` against a hostile server (issue 33 item 11), each input made here.

Deep replies, a gzip bomb, a server that trickles one byte at a time, a gold node SymPy
would compute for ever, terminal escapes in what the server says, two runs on one output
folder, and the mode of the files written. Loops are bounded and stay on loopback.
"""

from __future__ import annotations

import csv
import json
import os
import stat
import zlib
from pathlib import Path

import pytest
from gen_fake_server import Action, error, reply
from gen_helpers import ScriptedModel, read_samples, run_cli, solution, write_problems

from dagmath_viz.generation.bounded import MAX_BODY_BYTES, MAX_BODY_DEPTH
from dagmath_viz.generation.client import extract_json, run_to_completion
from dagmath_viz.generation.gold_checks import ArithmeticChecker
from dagmath_viz.generation.store import FolderLock


def _run(server, problems, out, *extra) -> int:
    return run_cli("generate", problems, "--base-url", server.base_url, "--model", "m",
                   "--concurrency", "1", "-o", out, *extra)  # fmt: skip


def _failures(out: Path) -> list[dict]:
    with open(out / "failures.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def _completion(content: str) -> dict:
    return {
        "id": "x", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": "stop"}],
    }  # fmt: skip


def test_a_reply_nested_100000_deep_fails_its_sample_only(tmp_path, serve, fast_backoff):
    deep_body = '{"choices": ' + "[" * 100_000 + "]" * 100_000 + "}"
    good = json.dumps(solution(2, "14"))
    deep_content = json.dumps(_completion("[" * 100_000 + "]" * 100_000))

    def script(body: dict) -> Action:
        text = body["messages"][-1]["content"]
        if "P1:" in text:
            return Action("raw", content=deep_body)  # the body itself
        if "P3:" in text:
            return Action("raw", content=deep_content)  # the model's text
        return reply(good)

    server = serve(script)
    out = tmp_path / "out"
    assert _run(server, write_problems(tmp_path / "p.jsonl", 3), out, "--attempts", "2") == 4
    reasons = {r["problem_id"]: r["reason"] for r in _failures(out)}
    assert reasons["1"] == (
        f"refused: the response body is JSON nested more than {MAX_BODY_DEPTH} levels deep"
    )
    assert reasons["3"].startswith("no JSON object in the reply")
    assert list(read_samples(out / "m" / "p")) == ["problem_2_all_samples.json"]
    # a refused body is not resent: the same server would send it again
    assert sum("P1:" in r.body["messages"][-1]["content"] for r in server.chat_requests()) == 1


def test_extract_json_passes_over_json_deeper_than_a_solution():
    nested = "[" * 70 + "]" * 70
    assert extract_json('{"steps": ' + nested + "}", "steps") is None
    assert extract_json('{"steps": [[1]]}', "steps") == {"steps": [[1]]}


def _gzip_bomb(inflated: int) -> bytes:
    """``inflated`` bytes of JSON whitespace, gzip-compressed a megabyte at a time."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = b" " * (1024 * 1024)
    parts = [packer.compress(chunk) for _ in range(inflated // len(chunk))]
    return b"".join(parts) + packer.compress(json.dumps(_completion("x")).encode()) + packer.flush()


def test_a_gzip_bomb_is_refused_at_the_inflated_cap(tmp_path, serve, fast_backoff):
    bomb = _gzip_bomb(2 * MAX_BODY_BYTES)
    assert len(bomb) < MAX_BODY_BYTES // 100  # small on the wire: only inflating is caught
    good = json.dumps(solution(2, "14"))

    def script(body: dict) -> Action:
        if "P1:" in body["messages"][-1]["content"]:
            return Action("raw", body=bomb, headers={"Content-Encoding": "gzip"})
        small = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        packed = small.compress(json.dumps(_completion(good)).encode()) + small.flush()
        return Action("raw", body=packed, headers={"Content-Encoding": "gzip"})

    server = serve(script)
    out = tmp_path / "out"
    assert _run(server, write_problems(tmp_path / "p.jsonl", 2), out) == 4
    (row,) = _failures(out)
    assert row["problem_id"] == "1"
    assert (
        row["reason"] == f"refused: the response body inflated more than {MAX_BODY_BYTES >> 20} MB"
    )
    # an ordinary gzip reply still reads: problem 2 is written from one
    assert list(read_samples(out / "m" / "p")) == ["problem_2_all_samples.json"]


def test_an_encoding_not_asked_for_is_refused(tmp_path, serve, fast_backoff):
    server = serve(
        lambda body: Action("raw", body=b"\x28\xb5", headers={"Content-Encoding": "zstd"})
    )
    out = tmp_path / "out"
    assert _run(server, write_problems(tmp_path / "p.jsonl", 1), out) == 4
    (row,) = _failures(out)
    assert "encoded as 'zstd'; only gzip or deflate was asked for" in row["reason"]
    (request,) = server.chat_requests()
    assert request.headers["accept-encoding"] == "gzip, deflate"


def test_a_server_trickling_one_byte_at_a_time_is_timed_out(tmp_path, serve, fast_backoff):
    # each byte comes well within --timeout, so only a deadline on the whole exchange
    # ends it; without one the sample would succeed, after a minute and more
    good = json.dumps(solution(1, "7"))
    server = serve(lambda body: Action("reply", content=good, trickle=0.25))
    out = tmp_path / "out"
    args = ("--timeout", "1.5", "--retries", "0")
    assert _run(server, write_problems(tmp_path / "p.jsonl", 1), out, *args) == 4
    (row,) = _failures(out)
    assert row["reason"] == "the request timed out, 1 times"
    assert read_samples(out / "m" / "p") == {}


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        # SymPy would compute this binomial (50 million digits) for ever, in C
        (r"So $\binom{100000000}{50000000} = 1$.", "the arithmetic check took longer than 1 s"),
        # with powers the claim is not judged at all (see arithmetic_fault)
        (r"So $\binom{10^8}{5 \cdot 10^7} = 1$.", None),
        # and an ordinary false claim is still caught, through the same worker
        (r"So $2 \times 24 = 46$.", r"node 1: $2 \times 24 = 46$ is false"),
    ],
)
def test_gold_arithmetic_runs_behind_a_deadline(node, expected):
    checker = ArithmeticChecker(deadline=1.0)

    async def check() -> str | None:
        try:
            return await checker.fault([node])
        finally:
            await checker.close()

    assert run_to_completion(check) == expected


def test_the_worker_recovers_after_a_deadline():
    checker = ArithmeticChecker(deadline=1.0)

    async def check() -> list:
        try:
            hung = await checker.fault([r"$\binom{100000000}{50000000} = 1$"])
            after = await checker.fault([r"$6 \times 4 = 24$", r"$6 \times 4 = 25$"])
            return [hung, after]
        finally:
            await checker.close()

    hung, after = run_to_completion(check)
    assert hung.startswith("the arithmetic check took longer")
    assert after == r"node 2: $6 \times 4 = 25$ is false"


ESCAPES = "\x1b[2J\x1b]0;pwned\x07\x9b31m"


def test_terminal_escapes_from_the_server_are_shown_escaped(tmp_path, serve, fast_backoff, capsys):
    server = serve(lambda body: error(400, f"bad{ESCAPES}request"))
    out = tmp_path / "out"
    assert _run(server, write_problems(tmp_path / "p.jsonl", 1), out, "-v") == 4
    err = capsys.readouterr().err
    raw = (out / "failures.csv").read_text()
    for text in (err, raw):
        assert not any(c in text for c in "\x1b\x07\x9b")
    (row,) = _failures(out)
    assert row["reason"] == "HTTP 400: bad\\x1b[2J\\x1b]0;pwned\\x07\\x9b31mrequest"
    assert "bad\\x1b[2J" in err  # -v shows the failure as it happens, escaped


def test_a_second_run_on_the_same_folder_is_refused(tmp_path, serve, fast_backoff, capsys):
    server = serve(ScriptedModel())
    out = tmp_path / "out"
    problems = write_problems(tmp_path / "p.jsonl", 2)
    with FolderLock(out):  # another run holds the folder
        assert _run(server, problems, out) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"dagmath: error: {out}: another dagmath run is using this output folder "
        f"(process {os.getpid()}); wait for it to finish, or choose another -o"
    ]
    assert server.chat_requests() == [] and server.pings == []
    assert _run(server, problems, out) == 0  # released: the next run proceeds


@pytest.mark.parametrize("umask", [0o002, 0o077])
def test_files_are_written_with_the_users_umask(tmp_path, serve, fast_backoff, umask):
    server = serve(ScriptedModel(faults={2: ["always-invalid"]}))
    out = tmp_path / "out"
    old = os.umask(umask)
    try:
        assert _run(server, write_problems(tmp_path / "p.jsonl", 2), out, "--attempts", "1") == 4
    finally:
        os.umask(old)
    written = [
        out / "m" / "p" / "problem_1_all_samples.json",
        out / "m" / "p" / "answers.jsonl",
        out / "failures.csv",
        *(out / ".dagmath").glob("journal-*.ndjson"),
        *(out / ".dagmath" / "runs").glob("*-generate.json"),
    ]
    assert len(written) == 5
    for path in written:
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask, path
