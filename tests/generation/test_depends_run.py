"""`dagmath depends` against the scripted chat-completions server: real chains, faults, resume."""

from __future__ import annotations

import csv
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from gen_fake_server import error
from gen_helpers import Labeller, asked_span, run_cli

from dagmath_viz.formats.discovery import load_paths

REPO = Path(__file__).parents[2]


def _chains_file(path: Path, n_chains: int, n_steps: int) -> Path:
    """``n_chains`` records whose solutions split into ``n_steps`` sentences each."""
    rows = []
    for i in range(1, n_chains + 1):
        sentences = [f"Sentence number {k} of chain {i} says something." for k in range(1, n_steps)]
        sentences.append(f"So the answer is $\\boxed{{{i}}}$.")
        rows.append(
            {"problem_id": f"q{i}", "problem": f"Question {i}?", "solution": " ".join(sentences),
             "answer": str(i), "model": "writer"}
        )  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _args(server, inputs: Path, out: Path, *more: str) -> list[str]:
    return ["depends", str(inputs), "--base-url", server.base_url, "--model", "lab",
            "-o", str(out), *more]  # fmt: skip


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _journal(out: Path) -> list[dict]:
    (journal,) = (out / ".dagmath").glob("depends-journal-*.ndjson")
    records = []
    for line in journal.read_bytes().split(b"\n"):
        try:
            records.append(json.loads(line))
        except ValueError:
            continue  # a torn last line
    return records


# --------------------------------------------------------------------------- done when


def test_real_free_form_chains_become_legal_trajectories_that_score(
    tmp_path, serve, fast_backoff, thought_anchors_data
):
    """Every Thought Anchors base_solution.json text (not its chunks) through `depends`,
    then `dagmath score`: each chain is one legal trajectory with the source's keys, its
    published chunks as steps (plus the source's answer where the last chunk lacks it),
    and the class the source's own is_correct gives."""
    server = serve(Labeller(), models=["lab"])
    out = tmp_path / "out"
    assert run_cli(*_args(server, thought_anchors_data, out, "--batch-steps", "40")) == 0
    scored_file = tmp_path / "scored.jsonl"
    assert run_cli("score", out, "-o", scored_file, "-q") == 0
    scored = {(r["model"], r["problem_id"], r["sample_id"]): r for r in _lines(scored_file)}
    assert len(scored) == 20

    expected_requests = 0
    for base in sorted(thought_anchors_data.glob("*/*/problem_*/base_solution.json")):
        source = json.loads(base.read_text())
        published = json.loads((base.parent / "chunks_labeled.json").read_text())
        kind, model = base.parent.parent.name, base.parent.parent.parent.name
        key = (model, base.parent.name.removeprefix("problem_"), 0 if kind[0] == "c" else 1)
        record = scored[key]
        has_answer = f"\\boxed{{{source['answer']}}}" in published[-1]["chunk"]
        n = len(published) + (0 if has_answer else 1)
        expected_requests += math.ceil(n / 40)
        assert record["n_nodes"] == n and record["n_edges"] == n - 1, base
        assert record["errors"] == [] and record["dead_ends"] == [], base
        assert record["class"] == ("perfect" if source["is_correct"] else "incorrect"), base
        assert record["dataset"] == "thought-anchors"
        problem = json.loads((base.parent / "problem.json").read_text())
        assert record["reference_answer"] == problem["gt_answer"]
    assert len(server.chat_requests()) == expected_requests

    # every trajectory names the labeller and the prompt, and the app's loader opens them
    loaded = load_paths([out])
    assert len(loaded.trajectories) == 20 and not loaded.errors
    for line in _lines(out / "thought-anchors.jsonl"):
        depends = line["metadata"]["depends"]
        assert depends["model"] == "lab" and depends["prompt"] == "dagmath-depends-v1"
        assert depends["prompt_digest"].startswith("sha256:")
    (manifest,) = (out / ".dagmath" / "runs").glob("*-depends.json")
    assert json.loads(manifest.read_text())["chains_written"] == 20


def test_one_real_chain_through_the_command_opens_on_the_trajectory_page(
    tmp_path, serve, fast_backoff, thought_anchors_data, monkeypatch
):
    """One base_solution.json's text (the incorrect solution of problem 2189: its last
    chunk boxes nothing) through `dagmath depends`, then the app's Trajectory page on the
    output: the published chunks as steps, the source's answer as an added final step,
    every step but the first citing the one before (the scripted labeller), no dead end,
    and the source's own grade."""
    import streamlit as st

    from tests.app.helpers import app_on, on_page

    folder = thought_anchors_data / "deepseek-r1-distill-qwen-14b" / "incorrect_base_solution"
    base = folder / "problem_2189" / "base_solution.json"
    source = json.loads(base.read_text())
    chunks = [c["chunk"] for c in json.loads((base.parent / "chunks_labeled.json").read_text())]
    assert "\\boxed" not in chunks[-1] and source["is_correct"] is False
    server = serve(Labeller(), models=["lab"])
    out = tmp_path / "out"
    assert run_cli(*_args(server, base, out, "--batch-steps", "25")) == 0
    assert sorted(asked_span(r.body) for r in server.chat_requests()) == [
        (1, 25), (26, 50), (51, 61)
    ]  # fmt: skip

    st.cache_resource.clear()
    st.cache_data.clear()
    query = {"model": "deepseek-r1-distill-qwen-14b", "dataset": "thought-anchors",
             "problem": "2189", "sample": "1"}  # fmt: skip
    at = on_page(app_on(monkeypatch, out, **query), "pages/trajectory.py")
    html = at.get("iframe")[0].proto.srcdoc
    data = json.loads(re.search(r'id="dm-data">(.*?)</script>', html, re.S).group(1))
    answer_step = f"The final answer is $\\boxed{{{source['answer']}}}$."
    assert [n["text"] for n in data["nodes"]] == [*chunks, answer_step]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Steps / edges"] == f"{len(chunks) + 1} / {len(chunks)}"
    assert metrics["Dead ends"] == "0"
    assert metrics["Final answer"] == "wrong"  # 420, against the reference 588


def test_a_long_chain_goes_in_batches_that_show_earlier_steps_short(tmp_path, serve, fast_backoff):
    inputs = _chains_file(tmp_path / "long.jsonl", 1, 320)
    server = serve(Labeller(), models=["lab"])
    out = tmp_path / "out"
    args = _args(server, inputs, out, "--batch-steps", "40", "--short-chars", "20")
    assert run_cli(*args) == 0
    requests = server.chat_requests()
    assert sorted(asked_span(r.body) for r in requests) == [(a, a + 39) for a in range(1, 321, 40)]
    last = next(r for r in requests if asked_span(r.body) == (281, 320))
    user = last.body["messages"][1]["content"]
    earlier = user.split("Earlier steps:\n")[1].split("\n\nSteps to label")[0].splitlines()
    assert len(earlier) == 280
    assert all(len(line.split(". ", 1)[1]) <= 20 for line in earlier)
    assert "281. Sentence number 281 of chain 1 says something." in user
    assert last.body["response_format"]["type"] == "json_schema"
    (record,) = _lines(out / "long.jsonl")
    assert len(record["steps"]) == 320
    assert record["steps"][-1]["text"] == "So the answer is $\\boxed{1}$."
    assert record["steps"][300]["direct_dependent_steps"] == [300]


# --------------------------------------------------------------------------- faults


def test_a_reply_citing_a_later_step_is_asked_again_with_the_error(tmp_path, serve, fast_backoff):
    inputs = _chains_file(tmp_path / "c.jsonl", 1, 5)
    server = serve(Labeller(faults={1: ["later"]}), models=["lab"])
    out = tmp_path / "out"
    assert run_cli(*_args(server, inputs, out)) == 0
    first, second = server.chat_requests()
    assert len(first.body["messages"]) == 2
    retry = second.body["messages"]
    assert retry[:2] == first.body["messages"]
    assert retry[2]["role"] == "assistant" and '"step_id": 1' in retry[2]["content"]
    assert "step 1 cites step 6, which is not an earlier step" in retry[3]["content"]
    (entry,) = _journal(out)
    assert entry["attempts"] == 2
    assert entry["rejections"] == ["step 1 cites step 6, which is not an earlier step"]
    (record,) = _lines(out / "c.jsonl")
    assert [s["direct_dependent_steps"] for s in record["steps"]] == [None, [1], [2], [3], [4]]


def test_a_model_that_keeps_citing_later_steps_fails_that_chain_clearly(
    tmp_path, serve, fast_backoff, capsys
):
    inputs = _chains_file(tmp_path / "c.jsonl", 2, 12)
    # chain 2's second batch (steps 11-12) never gets it right
    model = Labeller(faults={11: ["always-later"]})
    server = serve(model, models=["lab"])
    out = tmp_path / "out"
    args = _args(server, inputs, out, "--batch-steps", "10", "--concurrency", "1")
    assert run_cli(*args) == 4
    # both chains' batch 11-12 fail: 3 replies each (--label-attempts 3)
    assert model.count[11] == 6 and model.count[1] == 2
    assert "2 chains were not labelled" in capsys.readouterr().err
    with open(out / "failures.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["problem_id"], r["steps"], r["attempts"]) for r in rows] == [
        ("q1", "11-12", "3"), ("q2", "11-12", "3"),
    ]  # fmt: skip
    assert rows[0]["reason"] == "step 11 cites step 13, which is not an earlier step"
    assert not (out / "c.jsonl").exists() or (out / "c.jsonl").read_text() == ""

    # a rerun with a model that answers well asks only for the failed batches
    model.faults = {}
    before = len(server.chat_requests())
    assert run_cli(*args) == 0
    assert len(server.chat_requests()) - before == 2
    assert [r["problem_id"] for r in _lines(out / "c.jsonl")] == ["q1", "q2"]
    assert not (out / "failures.csv").exists()


def test_broken_json_is_asked_for_again(tmp_path, serve, fast_backoff):
    inputs = _chains_file(tmp_path / "c.jsonl", 1, 4)
    server = serve(Labeller(faults={1: ["broken"]}), models=["lab"])
    out = tmp_path / "out"
    assert run_cli(*_args(server, inputs, out)) == 0
    assert len(server.chat_requests()) == 2
    (record,) = _lines(out / "c.jsonl")
    assert len(record["steps"]) == 4


def test_broken_json_every_time_fails_with_the_reason(tmp_path, serve, fast_backoff):
    inputs = _chains_file(tmp_path / "c.jsonl", 1, 4)
    server = serve(Labeller(faults={1: ["broken"] * 9}), models=["lab"])
    out = tmp_path / "out"
    assert run_cli(*_args(server, inputs, out, "--attempts", "2")) == 4
    assert len(server.chat_requests()) == 2
    with open(out / "failures.csv", newline="") as handle:
        (row,) = csv.DictReader(handle)
    assert row["reason"].startswith("no JSON object in the reply")


def test_a_timeout_is_retried_and_a_server_that_always_times_out_fails(
    tmp_path, serve, fast_backoff
):
    inputs = _chains_file(tmp_path / "c.jsonl", 1, 4)
    server = serve(Labeller(faults={1: ["slow:3"]}), models=["lab"])
    out = tmp_path / "out"
    assert run_cli(*_args(server, inputs, out, "--timeout", "0.5")) == 0
    assert len(server.chat_requests()) == 2

    server = serve(Labeller(faults={1: ["slow:3"] * 5}), models=["lab"])
    out = tmp_path / "out2"
    args = _args(server, inputs, out, "--timeout", "0.5", "--retries", "1")
    assert run_cli(*args) == 4
    with open(out / "failures.csv", newline="") as handle:
        (row,) = csv.DictReader(handle)
    assert row["reason"] == "the request timed out, 2 times"


# --------------------------------------------------------------------------- resume


def test_kill_9_mid_run_then_resume_without_duplicates(tmp_path, serve, fast_backoff):
    inputs = _chains_file(tmp_path / "c.jsonl", 6, 30)
    server = serve(Labeller(delay=0.1), models=["lab"])
    out = tmp_path / "out"
    args = _args(server, inputs, out, "--batch-steps", "10", "--concurrency", "1")
    env = {**os.environ, "PYTHONPATH": str(REPO), "DAGMATH_RETRY_BASE_SECONDS": "0.01"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "dagmath_viz", *args],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        journal = out / ".dagmath" / "depends-journal-c.ndjson"
        while time.monotonic() < deadline and proc.poll() is None:
            if journal.exists() and journal.read_bytes().count(b"\n") >= 7:
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the run finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    done = {(e["chain"], e["span"]) for e in _journal(out)}
    assert 7 <= len(done) < 18

    before = len(server.chat_requests())
    assert run_cli(*args) == 0
    assert len(server.chat_requests()) - before == 18 - len(done)
    entries = [(e["chain"], e["span"]) for e in _journal(out)]
    assert len(entries) == len(set(entries)) == 18
    records = _lines(out / "c.jsonl")
    assert [r["problem_id"] for r in records] == [f"q{i}" for i in range(1, 7)]
    for record in records:
        parents = [s["direct_dependent_steps"] for s in record["steps"]]
        assert parents == [None] + [[k] for k in range(1, 30)]
    assert not list(out.rglob("*.tmp"))

    # a third run sends nothing and changes nothing
    before, data = len(server.chat_requests()), (out / "c.jsonl").read_bytes()
    assert run_cli(*args) == 0
    assert len(server.chat_requests()) == before
    assert (out / "c.jsonl").read_bytes() == data


def test_a_journal_entry_edited_out_of_shape_is_asked_for_again(tmp_path, serve, fast_backoff):
    inputs = _chains_file(tmp_path / "c.jsonl", 1, 6)
    server = serve(Labeller(), models=["lab"])
    out = tmp_path / "out"
    args = _args(server, inputs, out, "--batch-steps", "3")
    assert run_cli(*args) == 0
    journal = out / ".dagmath" / "depends-journal-c.ndjson"
    entries = sorted(_journal(out), key=lambda e: e["span"])  # "1-3", "4-6"
    entries[1]["parents"] = [[9], [4], [5]]  # step 4 citing step 9: no run accepts that
    journal.write_text("".join(json.dumps(e) + "\n" for e in entries))
    before = len(server.chat_requests())
    assert run_cli(*args) == 0
    assert [asked_span(r.body) for r in server.chat_requests()[before:]] == [(4, 6)]
    (record,) = _lines(out / "c.jsonl")
    assert record["steps"][3]["direct_dependent_steps"] == [3]


def test_a_server_without_structured_output_gets_plain_json_requests(
    tmp_path, serve, fast_backoff, capsys
):
    labeller = Labeller()

    def script(body: dict):
        if "response_format" in body:
            return error(400, "response_format is not supported by this server")
        return labeller(body)

    inputs = _chains_file(tmp_path / "c.jsonl", 2, 4)
    server = serve(script, models=["lab"])
    out = tmp_path / "out"
    assert run_cli(*_args(server, inputs, out, "--concurrency", "1")) == 0
    err = capsys.readouterr().err
    assert "asking for plain JSON text instead" in err
    assert "dagmath: depends: 2/2 batches, " in err  # the progress line
    assert "2 of 2 chains labelled (0 from an earlier run, 2 now), 0 failed" in err
    sent = [r.body for r in server.chat_requests()]
    # the first request is refused and resent plain; the second chain's goes plain at once
    assert ["response_format" in b for b in sent] == [True, False, False]
    assert len(_lines(out / "c.jsonl")) == 2
    (manifest,) = (out / ".dagmath" / "runs").glob("*-depends.json")
    assert json.loads(manifest.read_text())["structured_output_used"] is False
