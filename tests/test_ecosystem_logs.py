"""inspect_ai logs and lm-eval ``--log_samples`` files (issue 27 item 1).

The fixtures in tests/fixtures/ecosystem were written by the real tools
(``make_fixtures.py``, versions in ``VERSIONS.txt``). Expected values are read from those
files here with json, zipfile and pyarrow's zstd codec, not through this package's readers:
the model from the eval spec or the results file, the problem from the sample id or the
doc's ``unique_id``, dead ends and correctness from the reply's steps themselves.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import zipfile
from pathlib import Path

import pyarrow as pa
import pytest

from dagmath_viz.cli import main
from dagmath_viz.formats import replies
from dagmath_viz.formats.discovery import load_paths
from dagmath_viz.formats.registry import DATA_SUFFIXES, format_of
from dagmath_viz.formats.sources import SourceReader
from dagmath_viz.generation import client, generate
from dagmath_viz.generation.chains import read_chains
from dagmath_viz.store.uploads import UploadedFile, materialise_uploads

ECO = Path(__file__).parent / "fixtures" / "ecosystem"
EVAL = ECO / "inspect" / "arith.eval"
JSON_LOG = ECO / "inspect" / "arith_2epochs.json"
FREE = ECO / "inspect" / "free_form.eval"
REASONING = ECO / "inspect" / "reasoning.eval"
(SAMPLES,) = (ECO / "lm_eval" / "mock-dagmath-1").glob("samples_*.jsonl")
(RESULTS,) = (ECO / "lm_eval" / "mock-dagmath-1").glob("results_*.json")
(GSM8K,) = (ECO / "lm_eval" / "mock-gsm-1").glob("samples_*.jsonl")
KEYS = ("model", "dataset", "problem_id", "sample_id", "dead_ends", "final_correct")


# --------------------------------------------------------------------------- read alone


def _zip_member(path: Path, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes: stored/deflated through zipfile, zstd (method 93) by hand."""
    if info.compress_type != 93:
        with zipfile.ZipFile(path) as archive:
            return archive.read(info)
    with open(path, "rb") as handle:
        handle.seek(info.header_offset)
        local = handle.read(30)
        name_len, extra_len = struct.unpack("<HH", local[26:30])
        handle.seek(info.header_offset + 30 + name_len + extra_len)
        packed = handle.read(info.compress_size)
    return pa.Codec("zstd").decompress(packed, decompressed_size=info.file_size, asbytes=True)


def _inspect_log(path: Path) -> tuple[dict, list[dict]]:
    """(eval spec, samples) of a log, read without this package."""
    if path.suffix == ".json":
        log = json.loads(path.read_text(encoding="utf-8"))
        return log["eval"], log["samples"]
    with zipfile.ZipFile(path) as archive:
        infos = {i.filename: i for i in archive.infolist()}
    header = json.loads(_zip_member(path, infos["header.json"]))
    samples = [
        json.loads(_zip_member(path, info))
        for name, info in infos.items()
        if name.startswith("samples/")
    ]
    return header["eval"], samples


def _steps_of(reply: str) -> list[dict]:
    """The steps of a scripted reply: the whole text is the JSON, or a ```json fence."""
    fenced = re.search(r"```json\n(.*?)```", reply, re.S)
    return json.loads(fenced.group(1) if fenced else reply)["steps"]


def _judged(steps: list[dict], target: str) -> tuple[list[int], bool]:
    """Dead ends (every step but the last that no step cites) and whether the last
    step's \\boxed{} is the target."""
    cited = {p for s in steps for p in (s["direct_dependent_steps"] or [])}
    dead = [s["step_id"] for s in steps[:-1] if s["step_id"] not in cited]
    boxed = re.findall(r"\\boxed\{([^}]*)\}", steps[-1]["text"])[-1]
    return dead, boxed == target


def _expected_inspect(path: Path) -> list[dict]:
    spec, samples = _inspect_log(path)
    out = []
    for sample in samples:
        reply = [m for m in sample["messages"] if m["role"] == "assistant"][-1]["content"]
        dead, correct = _judged(_steps_of(reply), sample["target"])
        out.append({
            "model": spec["model"], "dataset": spec["task"], "problem_id": str(sample["id"]),
            "sample_id": sample["epoch"] - 1, "dead_ends": dead, "final_correct": correct,
        })  # fmt: skip
    return sorted(out, key=lambda r: (r["problem_id"], r["sample_id"]))


def _lm_eval_lines() -> list[dict]:
    return [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines()]


def _expected_lm_eval() -> list[dict]:
    model = json.loads(RESULTS.read_text(encoding="utf-8"))["model_name"]
    task = SAMPLES.name.removeprefix("samples_").rsplit("_", 1)[0]
    out, seen = [], set()
    for line in _lm_eval_lines():
        if line["doc_id"] in seen:
            continue  # the doc again under the second filter
        seen.add(line["doc_id"])
        for k, reply in enumerate(line["resps"][0]):
            dead, correct = _judged(_steps_of(reply), line["target"])
            out.append({
                "model": model, "dataset": task, "problem_id": line["doc"]["unique_id"],
                "sample_id": k, "dead_ends": dead, "final_correct": correct,
            })  # fmt: skip
    return sorted(out, key=lambda r: (r["problem_id"], r["sample_id"]))


def _scored(path: Path, tmp_path: Path, *extra: str) -> list[dict]:
    out = tmp_path / "scored.jsonl"
    assert main(["score", str(path), "-o", str(out), "--no-cache", *extra]) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    got = [{k: r[k] for k in KEYS} for r in records]
    return sorted(got, key=lambda r: (r["problem_id"], r["sample_id"]))


# --------------------------------------------------------------------------- scoring


def test_the_fixtures_are_what_the_tools_wrote() -> None:
    """The facts the readers rely on, seen in the files themselves."""
    with zipfile.ZipFile(EVAL) as archive:
        methods = {i.compress_type for i in archive.infolist()}
        names = archive.namelist()
    assert methods == {93}  # every member zstd: zipfile alone cannot read them
    assert "samples/p/3_epoch_1.json" in names  # a "/" in a sample id makes a folder
    spec, samples = _inspect_log(JSON_LOG)
    assert spec["config"]["epochs"] == 2 and len(samples) == 4
    lines = _lm_eval_lines()
    assert [line["doc_id"] for line in lines] == [0, 1, 2, 0, 1, 2]  # once per filter
    assert {line["filter"] for line in lines} == {"boxed", "whole"}
    assert all(line["resps"] == lines[i % 3]["resps"] for i, line in enumerate(lines))


def test_an_inspect_eval_log_scores_as_the_log_says(tmp_path: Path) -> None:
    expected = _expected_inspect(EVAL)
    assert len(expected) == 3
    assert [e["problem_id"] for e in expected] == ["1", "2", "p/3"]
    assert [e["final_correct"] for e in expected] == [True, True, False]  # 5, 12; 4 != 3
    assert _scored(EVAL, tmp_path) == expected


def test_an_inspect_json_log_with_two_epochs_gives_a_sample_per_epoch(tmp_path: Path) -> None:
    expected = _expected_inspect(JSON_LOG)
    assert [(e["problem_id"], e["sample_id"]) for e in expected] == [
        ("1", 0), ("1", 1), ("2", 0), ("2", 1)
    ]  # fmt: skip
    assert expected[3]["dead_ends"] == [2, 3] and expected[3]["final_correct"] is False
    assert _scored(JSON_LOG, tmp_path) == expected


def test_an_lm_eval_samples_file_gives_a_trajectory_per_doc_and_reply(tmp_path: Path) -> None:
    expected = _expected_lm_eval()
    assert len(expected) == 6  # 3 docs x 2 repeats, not x 2 filters
    assert {e["model"] for e in expected} == {"mock-dagmath-1"}
    assert [e["problem_id"] for e in expected][::2] == ["arith/1", "arith/2", "arith/3"]
    assert _scored(SAMPLES, tmp_path) == expected


def test_lm_evals_gsm8k_target_is_read_after_its_hashes(tmp_path: Path) -> None:
    """lm-eval's gsm8k task logs the whole worked solution as the target ("... #### 72");
    the reference is the number after the last ####. A doc without an id field is its
    doc_id; the model is the results file's model_name."""
    (results,) = GSM8K.parent.glob("results_*.json")
    model = json.loads(results.read_text(encoding="utf-8"))["model_name"]
    lines = [json.loads(line) for line in GSM8K.read_text(encoding="utf-8").splitlines()]
    assert all("####" in line["target"] and "id" not in line["doc"] for line in lines)
    expected = []
    for line in lines:
        reference = line["target"].split("####")[-1].strip()
        (reply,) = line["resps"][0]
        steps = _steps_of(reply)
        cited = {p for s in steps for p in (s["direct_dependent_steps"] or [])}
        boxed = re.findall(r"\\boxed\{([^}]*)\}", steps[-1]["text"])[-1]
        expected.append({
            "model": model, "problem_id": str(line["doc_id"]), "reference_answer": reference,
            "dead_ends": [s["step_id"] for s in steps[:-1] if s["step_id"] not in cited],
            "final_correct": float(boxed) == float(reference),
        })  # fmt: skip
    assert [e["reference_answer"] for e in expected] == ["72", "10"]
    assert [e["final_correct"] for e in expected] == [True, False]  # 72; 12.5 is not 10
    out = tmp_path / "scored.jsonl"
    assert main(["score", str(GSM8K), "-o", str(out), "--no-cache"]) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [{k: r[k] for k in expected[0]} for r in records] == expected


def test_lm_eval_problem_ids_by_the_field_map(tmp_path: Path) -> None:
    got = _scored(SAMPLES, tmp_path, "--map", "problem_id=doc_id")
    assert sorted({r["problem_id"] for r in got}) == ["0", "1", "2"]


def test_lm_eval_without_its_results_file_takes_the_folder_as_the_model(
    tmp_path: Path, monkeypatch
) -> None:
    folder = tmp_path / "org__model-7b"
    folder.mkdir()
    shutil.copy(SAMPLES, folder / SAMPLES.name)
    loaded = load_paths([folder / SAMPLES.name])
    assert {t.model for t in loaded.trajectories} == {"org__model-7b"}
    assert len(loaded.trajectories) == 6 and loaded.issues == ()

    # named from inside the folder, as `dagmath score samples_x.jsonl` there does
    monkeypatch.chdir(folder)
    assert {t.model for t in load_paths([Path(SAMPLES.name)]).trajectories} == {"org__model-7b"}


def test_a_folder_of_logs_reads_each_and_the_results_file_as_a_companion() -> None:
    loaded = load_paths([ECO])
    assert len(loaded.trajectories) == 3 + 4 + 6 + 2
    assert format_of(RESULTS).kind == "companion"
    # the free-form logs' lines, one each; the results file raises none
    assert sorted(Path(i.file).name for i in loaded.issues) == [FREE.name, REASONING.name]


def test_a_free_form_inspect_log_gives_one_line_naming_the_command(tmp_path, capsys) -> None:
    assert main(["score", str(FREE), "-o", str(tmp_path / "s.jsonl"), "--no-cache"]) == 3
    lines = [line for line in capsys.readouterr().err.splitlines() if "free-form" in line]
    assert len(lines) == 1
    assert "`dagmath depends`" in lines[0] and "2 records not read" in lines[0]
    assert str(FREE) in lines[0]
    (issue,) = load_paths([FREE]).issues
    assert "dagmath depends" in issue.message


def test_a_record_is_read_back_from_its_source() -> None:
    for path in (EVAL, JSON_LOG, SAMPLES):
        trajectories = load_paths([path]).trajectories
        last = trajectories[-1]
        traj, why = SourceReader([path]).read(last.source, last.key)
        assert why is None and traj == last, path


def test_the_eval_suffix_comes_from_the_registry_to_uploads(tmp_path: Path) -> None:
    assert ".eval" in DATA_SUFFIXES
    landed: list = []
    issues = materialise_uploads(
        [UploadedFile(EVAL.name, EVAL.read_bytes())], tmp_path, landed=landed
    )
    assert issues == [] and landed[0].name == EVAL.name
    assert len(load_paths([landed[0]]).trajectories) == 3


def test_generate_and_the_log_readers_share_one_reply_parser() -> None:
    assert client.extract_json is replies.extract_json
    assert generate.check_solution is replies.check_solution


# --------------------------------------------------------------------------- bad files


def test_broken_logs_are_named_and_the_others_still_load(tmp_path: Path) -> None:
    data = EVAL.read_bytes()
    (tmp_path / "truncated.eval").write_bytes(data[: len(data) // 2])
    (tmp_path / "not_a_zip.eval").write_bytes(b"PK but no zip at all")
    broken = JSON_LOG.read_text(encoding="utf-8")
    (tmp_path / "cut.json").write_text(broken[: len(broken) // 2], encoding="utf-8")
    shutil.copy(EVAL, tmp_path / "good.eval")
    loaded = load_paths([tmp_path])
    assert len(loaded.trajectories) == 3  # good.eval
    issues = {Path(i.file).name: i for i in loaded.issues}
    assert set(issues) == {"truncated.eval", "not_a_zip.eval", "cut.json"}
    assert issues["truncated.eval"].message.startswith("not a readable .eval log")
    assert issues["not_a_zip.eval"].message.startswith("not a readable .eval log")
    assert "invalid JSON" in issues["cut.json"].message or "line" in issues["cut.json"].message


def test_a_damaged_member_is_named_and_the_other_samples_load(tmp_path: Path) -> None:
    data = bytearray(EVAL.read_bytes())
    with zipfile.ZipFile(EVAL) as archive:
        info = archive.getinfo("samples/2_epoch_1.json")
    local = data[info.header_offset : info.header_offset + 30]
    start = info.header_offset + 30 + sum(struct.unpack("<HH", local[26:30]))
    data[start + info.compress_size // 2] ^= 0xFF  # one byte of its zstd data flipped
    bad = tmp_path / "damaged.eval"
    bad.write_bytes(bytes(data))
    loaded = load_paths([bad])
    assert sorted(t.problem_id for t in loaded.trajectories) == ["1", "p/3"]
    (issue,) = loaded.issues
    assert issue.location == "row 2" and "samples/2_epoch_1.json" in issue.message


def test_a_sample_without_a_reply_is_named(tmp_path: Path) -> None:
    log = json.loads(JSON_LOG.read_text(encoding="utf-8"))
    sample = log["samples"][1]
    sample["messages"] = sample["messages"][:1]
    sample["output"] = {"choices": []}
    sample["error"] = {"message": "RuntimeError: the model went away"}
    path = tmp_path / "errored.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    loaded = load_paths([path])
    assert len(loaded.trajectories) == 3
    (issue,) = loaded.issues
    assert issue.location == "row 2"
    assert issue.message == (
        "sample 2 epoch 1: no assistant reply (the sample failed: "
        "'RuntimeError: the model went away')"
    )


def test_a_json_that_only_looks_like_an_inspect_log_is_not_taken_for_one(tmp_path) -> None:
    plain = tmp_path / "records.json"
    plain.write_text('[{"steps": [], "note": "\\"eval\\": {\\"task\\""}]', encoding="utf-8")
    assert format_of(plain).name == "JSON records"
    wrong = tmp_path / "samples_task_2026-01-01T00-00-00.jsonl"
    wrong.write_text('{"problem_id": 1, "steps": []}\n', encoding="utf-8")
    assert format_of(wrong).name == "JSON records"


@pytest.mark.parametrize("path", [EVAL, JSON_LOG, SAMPLES], ids=lambda p: p.suffix)
def test_each_log_is_claimed_by_its_format(path: Path) -> None:
    names = {".eval": "inspect_ai log", ".json": "inspect_ai log", ".jsonl": "lm-eval samples"}
    assert format_of(path).name == names[path.suffix]


def test_a_multiple_choice_lm_eval_file_is_one_line_not_one_per_doc(tmp_path: Path) -> None:
    """A loglikelihood task's ``resps`` hold [log-probability, is-greedy] pairs, no text."""
    pairs = [[[-1.5, False]], [[-0.2, True]]]
    lines = [{"doc_id": i, "doc": {"id": f"q{i}"}, "target": 0, "resps": pairs} for i in range(3)]
    path = tmp_path / "samples_mmlu_2026-01-01T00-00-00.000001.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert format_of(path).name == "lm-eval samples"
    loaded = load_paths([path])
    assert loaded.trajectories == ()
    (issue,) = loaded.issues
    assert issue.location == "file" and "writes no reply" in issue.message


def test_the_command_the_free_form_line_names_reads_the_log() -> None:
    """`dagmath depends` reads the free-form log's chains, keyed as the log says."""
    spec, samples = _inspect_log(FREE)
    chains = read_chains(FREE)
    assert [(c.model, c.problem_id, c.sample_id) for c in chains] == [
        (spec["model"], str(s["id"]), s["epoch"] - 1) for s in samples
    ]
    assert [c.reference_answer for c in chains] == [s["target"] for s in samples]
    assert chains[0].steps[0] == "One and one make two."  # the text inside <think>


def test_the_eval_zip_caps_are_kept(monkeypatch) -> None:
    from dagmath_viz.formats import inspect_log

    with zipfile.ZipFile(EVAL) as archive:
        infos = archive.infolist()
    sizes = {i.filename: i.file_size for i in infos}
    monkeypatch.setattr(inspect_log, "MAX_MEMBERS", len(infos) - 1)
    (issue,) = load_paths([EVAL]).issues
    assert issue.message == f".eval log of {len(infos)} members; at most {len(infos) - 1} are read"
    monkeypatch.setattr(inspect_log, "MAX_MEMBERS", len(infos))
    # a member over the per-member cap is named; the header and the smaller samples load
    monkeypatch.setattr(inspect_log, "MAX_MEMBER_BYTES", sizes["samples/1_epoch_1.json"] - 1)
    loaded = load_paths([EVAL])
    assert len(loaded.trajectories) == 2
    assert [i.message for i in loaded.issues] == [
        f"member 'samples/1_epoch_1.json': inflates to {sizes['samples/1_epoch_1.json']} "
        f"bytes; at most {sizes['samples/1_epoch_1.json'] - 1}"
    ]
    monkeypatch.setattr(inspect_log, "MAX_MEMBER_BYTES", 2**30)
    monkeypatch.setattr(inspect_log, "MAX_INFLATED_BYTES", sizes["header.json"] + 10)
    loaded = load_paths([EVAL])
    assert loaded.trajectories == ()
    (issue,) = loaded.issues
    assert issue.location == "file" and "inflate to over" in issue.message


def test_a_reasoning_models_thinking_is_the_chain_depends_reads() -> None:
    """inspect_ai logs a reasoning model's thinking as a ``reasoning`` part beside the
    ``text`` part: the thinking is the chain split into steps (the text would be only the
    answer), the answer after it is the final step; redacted reasoning holds no text."""
    _spec, samples = _inspect_log(REASONING)
    parts = {
        str(s["id"]): [m for m in s["messages"] if m["role"] == "assistant"][-1]["content"]
        for s in samples
    }
    chains = {c.problem_id: c for c in read_chains(REASONING)}
    assert sorted(chains) == sorted(parts) == ["r1", "r2"]
    (thinking,) = [p["reasoning"] for p in parts["r1"] if p["type"] == "reasoning"]
    (text,) = [p["text"] for p in parts["r1"] if p["type"] == "text"]
    r1 = chains["r1"].steps
    assert len(r1) == 4 and " ".join(r1[:-1]) == thinking  # three sentences of thinking
    boxed = re.search(r"\\boxed\{(\d+)\}", text).group(1)
    assert r1[-1] == f"The final answer is $\\boxed{{{boxed}}}$."
    assert chains["r1"].source_answer == boxed == chains["r1"].reference_answer
    assert [p["redacted"] for p in parts["r2"] if p["type"] == "reasoning"] == [True]
    (text,) = [p["text"] for p in parts["r2"] if p["type"] == "text"]
    assert chains["r2"].steps == (text,)
