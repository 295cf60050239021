"""Resuming `dagmath generate` after kill -9, and the journal that makes it possible."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from gen_helpers import ScriptedModel, read_samples, run_cli, write_problems

from dagmath_viz.generation.store import Journal

REPO = Path(__file__).parents[2]


def _journal_keys(out: Path) -> list[tuple[str, int]]:
    (journal,) = (out / ".dagmath").glob("journal-*.ndjson")
    keys = []
    for line in journal.read_bytes().split(b"\n"):
        try:
            record = json.loads(line)
        except ValueError:
            continue  # the torn last line, if the kill cut one
        keys.append((record["problem_id"], record["sample_id"]))
    return keys


def test_kill_9_mid_run_then_resume(tmp_path, serve, fast_backoff):
    problems = write_problems(tmp_path / "toy.jsonl", 12)
    server = serve(ScriptedModel(wrong={5}, delay=0.05))
    out = tmp_path / "out"
    args = ["generate", str(problems), "--base-url", server.base_url, "--model", "m",
            "--samples", "3", "--concurrency", "2", "-o", str(out)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO), "DAGMATH_RETRY_BASE_SECONDS": "0.01"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "dagmath_viz", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            journals = list((out / ".dagmath").glob("journal-*.ndjson"))
            if journals and journals[0].read_bytes().count(b"\n") >= 8:
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the run finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    finished = set(_journal_keys(out))
    assert 8 <= len(finished) < 36

    before = len(server.chat_requests())
    assert run_cli(*args) == 0
    # only the unfinished samples were asked for again
    assert len(server.chat_requests()) - before == 36 - len(finished)

    keys = _journal_keys(out)
    assert len(keys) == len(set(keys)) == 36
    files = read_samples(out / "m" / "toy")
    assert len(files) == 12
    for samples in files.values():
        assert [s["sample_id"] for s in samples] == [1, 2, 3]
    assert not list(out.rglob("*.tmp"))
    # every sample in the files is whole and the model's own (answer 7i, 7*5+1 for i=5)
    answers = [s["final_answer"] for samples in files.values() for s in samples]
    assert answers.count("The final answer is $\\boxed{36}$.") == 3


def test_journal_drops_a_torn_line_and_appends_cleanly(tmp_path):
    path = tmp_path / ".dagmath" / "journal.ndjson"
    path.parent.mkdir()
    whole = json.dumps({"problem_id": "1", "sample_id": 1, "sample": {"x": 1}})
    path.write_text(whole + "\n" + '{"problem_id": "1", "sample_id": 2, "sam')
    journal = Journal(path, ("problem_id", "sample_id"))
    assert list(journal.entries) == [("1", "1")]
    assert journal.dropped_lines == 1
    journal.append({"problem_id": "1", "sample_id": 2, "sample": {"x": 2}})
    journal.close()
    lines = path.read_text().splitlines()
    assert [json.loads(line)["sample_id"] for line in lines] == [1, 2]
    again = Journal(path, ("problem_id", "sample_id"))
    assert set(again.entries) == {("1", "1"), ("1", "2")}
    again.close()


def test_a_missing_problem_file_is_rebuilt_from_the_journal_without_requests(
    tmp_path, serve, fast_backoff
):
    problems = write_problems(tmp_path / "p.jsonl", 2)
    server = serve(ScriptedModel())
    out = tmp_path / "out"
    args = ("generate", problems, "--base-url", server.base_url, "--model", "m",
            "--samples", "2", "-o", out)  # fmt: skip
    assert run_cli(*args) == 0
    target = out / "m" / "p" / "problem_2_all_samples.json"
    original = target.read_bytes()
    target.unlink()  # as if killed between the journal write and the file write
    (target.parent / ".dagmath-tmp-abc.tmp").write_text("half a fi")
    before = len(server.chat_requests())
    assert run_cli(*args) == 0
    assert len(server.chat_requests()) == before
    assert target.read_bytes() == original
    assert not (target.parent / ".dagmath-tmp-abc.tmp").exists()


def test_resume_holds_only_unfinished_samples_and_repairs_a_corrupt_file(
    tmp_path, serve, fast_backoff
):
    from dagmath_viz.generation.generate import GenerateConfig, _Run
    from dagmath_viz.generation.problems import read_problems

    problems = write_problems(tmp_path / "p.jsonl", 3)
    server = serve(ScriptedModel())
    out = tmp_path / "out"
    args = ("generate", problems, "--base-url", server.base_url, "--model", "m",
            "--samples", "2", "-o", out)  # fmt: skip
    assert run_cli(*args) == 0
    folder = out / "m" / "p"
    good = (folder / "problem_3_all_samples.json").read_bytes()
    (folder / "problem_3_all_samples.json").write_bytes(good[: len(good) // 2])  # torn

    config = GenerateConfig(
        base_url=server.base_url, model="m", out_dir=out, dataset="p", system_prompt="s",
        samples=3,  # one more sample each: every problem is unfinished again
    )  # fmt: skip
    run = _Run(read_problems(problems), config, stream=None)
    run._load_unfinished()
    assert {k: sorted(v) for k, v in run.by_problem.items()} == {
        "1": [1, 2], "2": [1, 2], "3": [1, 2],
    }  # fmt: skip
    assert (folder / "problem_3_all_samples.json").read_bytes() == good  # repaired
    run.journal.close()

    config = GenerateConfig(
        base_url=server.base_url, model="m", out_dir=out, dataset="p", system_prompt="s",
        samples=2,
    )  # fmt: skip
    run = _Run(read_problems(problems), config, stream=None)
    run._load_unfinished()
    assert run.by_problem == {}  # all finished and their files whole: nothing held
    run.journal.close()
