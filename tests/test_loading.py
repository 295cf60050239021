"""loading.py: both official layouts, JSONL, answer keys, and every way a file can be bad."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dagmath_viz.formats.answer_keys import load_answer_key
from dagmath_viz.formats.discovery import load_paths
from dagmath_viz.schema import InputError, Step

# Step counts of the four real solutions, counted from the files' step lists (last step_id:
# 22, 26, 25, 38; ids run 1..N without gaps in every file).
FEWSHOT_STEPS = {"1": 22, "2": 26, "3": 25, "4": 38}
FEWSHOT_ANSWERS = {"1": "144", "2": "3/7", "3": "2", "4": "17"}


def write_json(path: Path, obj) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def write_jsonl(path: Path, *objs) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    return path


def sample(problem_id=1, sample_id=0, answer_text="6", **extra) -> dict:
    """A tiny model-output record: one given, one answer step citing it."""
    return {
        "problem_id": problem_id,
        "sample_id": sample_id,
        "problem_text": "p",
        "steps": [
            {"step_id": 1, "thinking": "given", "direct_dependent_steps": None, "text": "x = 6"},
            {
                "step_id": 2,
                "thinking": "so",
                "direct_dependent_steps": [1],
                "text": f"The final answer is $\\boxed{{{answer_text}}}$.",
            },
        ],
        "final_answer": f"The final answer is $\\boxed{{{answer_text}}}$.",
        **extra,
    }


def by_problem(result) -> dict:
    return {t.problem_id: t for t in result.trajectories}


# --------------------------------------------------------------------------- the real few-shot data


@pytest.mark.shared
def test_fewshot_model_output_layout(shared_data: Path) -> None:
    result = load_paths([shared_data / "fewshot_solutions.json"])
    assert result.issues == ()
    assert result.files_read == 1
    got = by_problem(result)
    assert {pid: len(t.steps) for pid, t in got.items()} == FEWSHOT_STEPS
    for t in got.values():
        assert t.model == "dagmath-authors-fewshot"  # metadata.model
        assert t.dataset == "dagmath-fewshot"  # the parent folder
        assert t.sample_id == 0
        # model output: final_answer is the last step's text, not a reference
        assert t.reference_answer is None
        assert t.steps[0].justification and t.steps[0].text
    # problem 1: step 1 is a given (null parents), step 18 cites 10, 12, 14, 17
    assert got["1"].steps[0].parents == ()
    step_18 = got["1"].steps[17]
    assert (step_18.step_id, step_18.parents) == (18, (10, 12, 14, 17))


@pytest.mark.shared
def test_fewshot_answers_file_supplies_references(shared_data: Path) -> None:
    result = load_paths(
        [shared_data / "fewshot_solutions.json"], answers=shared_data / "answers.json"
    )
    assert {t.problem_id: t.reference_answer for t in result.trajectories} == FEWSHOT_ANSWERS


@pytest.mark.shared
def test_fewshot_gold_layout(shared_data: Path) -> None:
    result = load_paths([shared_data / "gold"])
    assert result.issues == ()
    assert result.files_read == 4
    got = by_problem(result)
    assert {pid: len(t.steps) for pid, t in got.items()} == FEWSHOT_STEPS
    # gold files: final_answer is the reference itself
    assert {pid: t.reference_answer for pid, t in got.items()} == FEWSHOT_ANSWERS
    assert {(t.model, t.dataset) for t in got.values()} == {("gold", "gold")}


@pytest.mark.shared
def test_fewshot_both_layouts_hold_the_same_graphs(shared_data: Path) -> None:
    result = load_paths([shared_data])
    # 1 model-output file + 4 gold files + answers.json
    assert result.files_read == 6
    assert len(result.trajectories) == 8
    layouts: dict[str, dict] = {}
    for t in result.trajectories:
        layouts.setdefault(t.model, {})[t.problem_id] = t
    model_out, gold = layouts["dagmath-authors-fewshot"], layouts["gold"]
    for pid in FEWSHOT_STEPS:
        assert [(s.step_id, s.parents) for s in model_out[pid].steps] == [
            (s.step_id, s.parents) for s in gold[pid].steps
        ]
        # the folder's answers.json reaches the model-output records
        assert model_out[pid].reference_answer == gold[pid].reference_answer


def test_shared_data_fixture_skips_or_fails(tmp_path: Path) -> None:
    """The real conftest, copied into a repo with no ../shared: skip, or fail when required."""
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    shutil.copy(Path(__file__).parent / "conftest.py", repo / "tests" / "conftest.py")
    (repo / "tests" / "test_uses_shared.py").write_text(
        "def test_it(shared_data):\n    assert shared_data\n", encoding="utf-8"
    )

    def run(require: str | None) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if k != "DAGMATH_REQUIRE_SHARED"}
        if require is not None:
            env["DAGMATH_REQUIRE_SHARED"] = require
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-rs", "-p", "no:cacheprovider", "tests"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    skipped = run(None)
    assert skipped.returncode == 0, skipped.stdout
    assert "1 skipped" in skipped.stdout
    assert "DAGMATH_REQUIRE_SHARED" in skipped.stdout
    failed = run("1")
    assert failed.returncode == 1, failed.stdout
    assert "1 error" in failed.stdout or "1 failed" in failed.stdout
    assert "DAGMATH_REQUIRE_SHARED=1" in failed.stdout


# --------------------------------------------------------------------------- layouts and names


def test_official_layout_names_model_and_dataset_from_folders(tmp_path: Path) -> None:
    f = write_json(tmp_path / "qwen" / "aime24" / "problem_5_all_samples.json", [sample(5)])
    (t,) = load_paths([f]).trajectories
    assert (t.model, t.dataset, t.problem_id) == ("qwen", "aime24", "5")


def _score_from(cwd: Path, name: str, out: Path) -> list[tuple]:
    """(model, dataset, problem_id, sample_id) of each record `dagmath score NAME` writes, run
    in CWD (a subprocess, so the working folder is really that one), to OUT outside the data."""
    subprocess.run(
        [sys.executable, "-m", "dagmath_viz", "score", "-q", name, "-o", str(out)],
        cwd=cwd,
        check=True,
        capture_output=True,
    )
    keys = ("model", "dataset", "problem_id", "sample_id")
    return [tuple(json.loads(x)[k] for k in keys) for x in out.read_text().splitlines()]


def test_names_do_not_depend_on_the_folder_it_is_run_from(tmp_path: Path) -> None:
    # the same files named from their own folder and from above it: the names come from the
    # folders they are in, never from how the path was written (a bare name has no folder)
    official = write_json(tmp_path / "qwen" / "aime24" / "problem_5_all_samples.json", [sample(5)])
    rows = write_json(tmp_path / "math500" / "rows.json", [dict(sample(7), model="m")])
    assert _score_from(official.parent, official.name, tmp_path / "out1.jsonl") == [
        ("qwen", "aime24", "5", 0)
    ]
    assert _score_from(tmp_path, "qwen", tmp_path / "out2.jsonl") == [("qwen", "aime24", "5", 0)]
    assert _score_from(rows.parent, rows.name, tmp_path / "out3.jsonl") == [
        ("m", "math500", "7", 0)
    ]
    assert _score_from(tmp_path, "math500/rows.json", tmp_path / "out4.jsonl") == [
        ("m", "math500", "7", 0)
    ]


def test_thought_anchors_chain_named_from_its_own_folder(tmp_path: Path) -> None:
    # the layout <model>/<correct|incorrect>_base_solution/problem_<id>/chunks_labeled.json,
    # here with one two-chunk chain; run from inside problem_9 the model, id and sample are
    # still read from the folders
    folder = tmp_path / "r1" / "incorrect_base_solution" / "problem_9"
    write_json(
        folder / "chunks_labeled.json",
        [
            {"chunk_idx": 0, "chunk": "Let x = 2.", "depends_on": []},
            {"chunk_idx": 1, "chunk": "So x + 1 = 3.", "depends_on": ["0"]},
        ],
    )
    write_json(folder / "problem.json", {"problem": "x = 2; x + 1?", "gt_answer": "3"})
    (named_inside,) = _score_from(folder, "chunks_labeled.json", tmp_path / "out5.jsonl")
    (named_above,) = _score_from(tmp_path, "r1", tmp_path / "out6.jsonl")
    assert named_inside == named_above
    assert named_inside[0] == "r1" and named_inside[2:] == ("9", 1)


NAMING_CASES = [
    # record fields, expected (model, dataset)
    pytest.param({}, ("qwen", "aime24"), id="from-folders"),
    pytest.param({"metadata": {"model": "gpt"}}, ("gpt", "aime24"), id="metadata-model"),
    pytest.param({"dataset": "math500"}, ("qwen", "math500"), id="record-dataset"),
    pytest.param({"metadata": {"model": "  "}}, ("qwen", "aime24"), id="blank-model-ignored"),
]


@pytest.mark.parametrize(("fields", "expected"), NAMING_CASES)
def test_record_fields_override_folder_names(tmp_path: Path, fields: dict, expected: tuple):
    path = tmp_path / "qwen" / "aime24" / "problem_5_all_samples.json"
    (t,) = load_paths([write_json(path, [sample(5, **fields)])]).trajectories
    assert (t.model, t.dataset) == expected


def test_problem_id_from_file_name_when_the_record_lacks_one(tmp_path: Path) -> None:
    record = sample()
    del record["problem_id"]
    f = write_json(tmp_path / "m" / "d" / "problem_abc_all_samples.json", [record])
    (t,) = load_paths([f]).trajectories
    assert t.problem_id == "abc"


def test_missing_sample_ids_are_positions(tmp_path: Path) -> None:
    records = [sample(), sample()]
    for r in records:
        del r["sample_id"]
    f = write_json(tmp_path / "m" / "d" / "problem_1_all_samples.json", records)
    assert [t.sample_id for t in load_paths([f]).trajectories] == [0, 1]


def test_non_integer_sample_id_is_a_warning(tmp_path: Path) -> None:
    f = write_json(tmp_path / "m" / "d" / "problem_1_all_samples.json", [sample(sample_id="x")])
    result = load_paths([f])
    (t,) = result.trajectories
    assert t.sample_id == 0
    (issue,) = result.issues
    assert issue.severity == "warning" and "sample_id 'x'" in issue.message
    assert result.errors == ()


def test_jsonl_either_spelling(tmp_path: Path) -> None:
    gold_spelling = {
        "problem_id": 8,
        "steps": [
            {"step_id": 1, "edge": "given", "direct_dependent_steps": None, "node": "a = 1"},
            {"step_id": 2, "edge": "add", "direct_dependent_steps": [1], "node": r"\boxed{2}"},
        ],
    }
    f = write_jsonl(tmp_path / "runs" / "mixed.jsonl", gold_spelling, sample(9))
    result = load_paths([f])
    assert result.issues == ()
    first, second = result.trajectories
    assert first.steps == (Step(1, (), "a = 1", "given"), Step(2, (1,), r"\boxed{2}", "add"))
    assert second.steps[1] == Step(2, (1,), r"The final answer is $\boxed{6}$.", "so")
    assert (first.dataset, second.dataset) == ("runs", "runs")
    # no metadata.model and no official layout: gold spelling is "gold", else the file stem
    assert (first.model, second.model) == ("gold", "mixed")


def test_bare_steps_object(tmp_path: Path) -> None:
    f = write_json(tmp_path / "d" / "one.json", {"steps": sample()["steps"]})
    (t,) = load_paths([f]).trajectories
    assert (t.model, t.dataset, t.problem_id, t.sample_id) == ("one", "d", "one", 0)
    assert len(t.steps) == 2 and t.load_errors == ()


# --------------------------------------------------------------------------- reference answers

ANSWER_KEY_CASES = [
    # file name, content, {problem_id: (answer, difficulty)} looked up in dataset "aime"
    pytest.param("answers.json", '{"1": "144", "2": 3, "3": 0.5}',
                 {"1": ("144", None), "2": ("3", None), "3": ("0.5", None)}, id="json-object"),
    pytest.param("answers.json", '{"1": {"answer": "7", "difficulty": 4.5}}',
                 {"1": ("7", 4.5)}, id="json-object-of-objects"),
    pytest.param("answers.json", '[{"problem_id": 1, "answer": "7", "difficulty": 2}]',
                 {"1": ("7", 2.0)}, id="json-records"),
    pytest.param("answers.jsonl",
                 '{"problem_id": 1, "answer": 2.0}\n'
                 '{"problem_id": "2", "answer": "x", "dataset": "aime"}\n',
                 {"1": ("2", None), "2": ("x", None)}, id="jsonl-records"),
    pytest.param("answers.csv", "problem_id,answer,difficulty\n1,\\frac{1}{2},3.5\n2,9,\n",
                 {"1": ("\\frac{1}{2}", 3.5), "2": ("9", None)}, id="csv"),
    # a record for another data set does not apply to "aime"
    pytest.param("answers.csv", "problem_id,answer,dataset\n1,5,other\n",
                 {"1": None}, id="csv-other-dataset"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "content", "expected"), ANSWER_KEY_CASES)
def test_load_answer_key(tmp_path: Path, name: str, content: str, expected: dict) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    key = load_answer_key(path)
    for pid, want in expected.items():
        entry = key.lookup("aime", pid)
        got = None if entry is None else (entry.answer, entry.difficulty)
        assert got == want


def test_answer_key_prefers_the_data_set_specific_entry(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    write_jsonl(
        path,
        {"problem_id": 1, "answer": "any"},
        {"problem_id": 1, "answer": "aime-only", "dataset": "aime"},
    )
    key = load_answer_key(path)
    assert key.lookup("aime", "1").answer == "aime-only"
    assert key.lookup("math", "1").answer == "any"


BAD_ANSWER_FILES = [
    # name, content, fragment of the error
    pytest.param("answers.json", '{"1": "2",\n "2": }', "line 2, column", id="invalid-json"),
    pytest.param("answers.csv", "id,answer\n1,2\n", "problem_id and answer", id="csv-columns"),
    pytest.param("answers.json", '[{"answer": "2"}]', "record 1", id="record-without-id"),
    pytest.param("answers.json", "[3]", "record 1", id="record-not-object"),
]


@pytest.mark.parametrize(("name", "content", "fragment"), BAD_ANSWER_FILES)
def test_bad_answer_file(tmp_path: Path, name: str, content: str, fragment: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match="answers") as err:
        load_answer_key(path)
    assert fragment in str(err.value)


def test_missing_answer_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope\.json: no such file or folder$"):
        load_answer_key(tmp_path / "nope.json")
    with pytest.raises(InputError):
        load_paths([tmp_path], answers=tmp_path / "nope.json")


REFERENCE_FIELD_CASES = [
    # record fields, expected reference
    pytest.param({"answer": "12"}, "12", id="answer-field"),
    pytest.param({"gold_answer": 12}, "12", id="gold-answer-field"),
    pytest.param({}, None, id="none"),
]


@pytest.mark.parametrize(("fields", "expected"), REFERENCE_FIELD_CASES)
def test_reference_from_record_fields(tmp_path: Path, fields: dict, expected) -> None:
    f = write_jsonl(tmp_path / "r.jsonl", sample(**fields))
    (t,) = load_paths([f]).trajectories
    assert t.reference_answer == expected


def test_explicit_answers_override_the_record(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "d" / "r.jsonl", sample(1, answer="12"), sample(2, answer="5"))
    key = write_json(tmp_path / "key.json", {"1": "13"})
    got = by_problem(load_paths([f], answers=key))
    assert got["1"].reference_answer == "13"  # the explicit file wins
    assert got["2"].reference_answer == "5"  # not in the file: the record's own


def test_folder_answers_apply_to_the_folder_and_below_only(tmp_path: Path) -> None:
    write_json(tmp_path / "run" / "a" / "answers.json", {"1": "6", "2": "9"})
    write_json(tmp_path / "run" / "answers.json", {"1": "outer", "2": "outer", "3": "outer"})
    write_jsonl(tmp_path / "run" / "a" / "deep" / "x.jsonl", sample(1), sample(3))
    write_jsonl(tmp_path / "run" / "a" / "y.jsonl", sample(2, answer="own"))
    write_jsonl(tmp_path / "run" / "b" / "z.jsonl", sample(2))
    write_jsonl(tmp_path / "elsewhere.jsonl", sample(1))
    result = load_paths([tmp_path / "run", tmp_path / "elsewhere.jsonl"])
    got = {
        (Path(t.source.split(":")[0]).name, t.problem_id): t.reference_answer
        for t in result.trajectories
    }
    assert got == {
        ("x.jsonl", "1"): "6",  # the nearest folder's key wins
        ("x.jsonl", "3"): "outer",  # not there: the key one folder up
        ("y.jsonl", "2"): "own",  # the record's own answer beats a folder key
        ("z.jsonl", "2"): "outer",  # a sibling folder sees only run/answers.json
        ("elsewhere.jsonl", "1"): None,  # outside the folder: no key applies
    }  # fmt: skip


def test_explicit_difficulty_only_entry_keeps_the_folder_answer(tmp_path: Path) -> None:
    write_json(tmp_path / "run" / "answers.json", {"1": "6"})
    write_jsonl(tmp_path / "run" / "r.jsonl", sample(1))
    key = write_jsonl(tmp_path / "key.jsonl", {"problem_id": 1, "difficulty": 3})
    (t,) = load_paths([tmp_path / "run"], answers=key).trajectories
    assert (t.reference_answer, t.difficulty) == ("6", 3.0)


def test_difficulty_from_answers_fills_only_missing_ones(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "d" / "r.jsonl", sample(1), sample(2, difficulty=2.5))
    key = write_jsonl(
        tmp_path / "key.jsonl",
        {"problem_id": 1, "answer": "6", "difficulty": 4},
        {"problem_id": 2, "answer": "6", "difficulty": 5},
    )
    got = by_problem(load_paths([f], answers=key))
    assert (got["1"].difficulty, got["2"].difficulty) == (4.0, 2.5)


def test_broken_folder_answers_file_is_an_issue_not_a_stop(tmp_path: Path) -> None:
    (tmp_path / "answers.json").write_text("{", encoding="utf-8")
    write_jsonl(tmp_path / "r.jsonl", sample(1))
    result = load_paths([tmp_path])
    assert len(result.trajectories) == 1
    assert result.unreadable_files == (str(tmp_path / "answers.json"),)
    # the file holds one character, "{": the data ends at column 2
    assert "line 1, column 2: invalid JSON" in result.issues[0].message


# --------------------------------------------------------------------------- bad files and records


def test_mixed_run_folder(data_dir: Path) -> None:
    run = data_dir / "mixed_run"
    result = load_paths([run])
    # answers.json, problem_1/2/3 files, extra.jsonl
    assert result.files_read == 5
    # problem 1: 2 samples, problem 2: 2 samples, extra.jsonl: lines 1 and 3
    assert len(result.trajectories) == 6
    bad_json = str(run / "model_a" / "algebra" / "problem_3_all_samples.json")
    assert result.unreadable_files == (bad_json,)
    messages = sorted(str(i) for i in result.issues)
    assert len(messages) == 2
    # line 2 of extra.jsonl stops after `{"problem_id": 10, "steps": [` (29 characters)
    assert messages[0].startswith(str(run / "extra.jsonl") + ": line 2: column 30: invalid JSON")
    # line 3 of problem_3 is `   "steps": [{"step_id": 1 "text": "x"}]}`: the quote opening
    # "text" is character 3 (indent) + 24 (`"steps": [{"step_id": 1 `) + 1 = 28
    assert messages[1].startswith(bad_json + ": file: line 3, column 28: invalid JSON")
    got = {(t.model, t.problem_id, t.sample_id): t.reference_answer for t in result.trajectories}
    assert got == {
        ("model_a", "1", 0): "6",
        ("model_a", "1", 1): "6",
        ("model_a", "2", 0): r"\frac{1}{2}",
        ("model_a", "2", 1): r"\frac{1}{2}",
        ("gold", "9", 0): "4",
        ("m2", "11", 1): None,  # the broken line 2 took no position
    }


BAD_FILE_CASES = [
    # content of a .json file, fragment of the issue
    pytest.param("42", "JSON int found", id="top-level-number"),
    pytest.param('"text"', "JSON str found", id="top-level-string"),
    pytest.param("", "invalid JSON", id="empty-file"),
    pytest.param('[{"steps": []}', "line 1, column 15", id="unclosed-list"),
    pytest.param(b"\xff\xfe".decode("latin-1"), "invalid JSON", id="not-utf8"),
]


@pytest.mark.parametrize(("content", "fragment"), BAD_FILE_CASES)
def test_bad_file_is_reported_and_others_still_load(
    tmp_path: Path, content: str, fragment: str
) -> None:
    (tmp_path / "bad.json").write_text(content, encoding="latin-1")
    write_jsonl(tmp_path / "good.jsonl", sample(1))
    result = load_paths([tmp_path])
    assert len(result.trajectories) == 1
    (issue,) = result.issues
    assert issue.file == str(tmp_path / "bad.json")
    assert fragment in str(issue)


def test_record_that_is_not_an_object(tmp_path: Path) -> None:
    f = write_json(tmp_path / "d" / "r.json", [sample(1), [1, 2], sample(2)])
    result = load_paths([f])
    assert [t.problem_id for t in result.trajectories] == ["1", "2"]
    (issue,) = result.issues
    assert issue.location == "item 2" and "record is list" in issue.message


LOAD_ERROR_CASES = [
    # steps value, fragment of the load error
    pytest.param(None, "field 'steps' is missing", id="no-steps-field"),
    pytest.param("1, 2", "field 'steps' is str", id="steps-not-a-list"),
    pytest.param([3], "step at position 1: is int", id="step-not-an-object"),
    pytest.param(
        [{"step_id": 1, "direct_dependent_steps": 0, "text": "x"}],
        "direct_dependent_steps is int",
        id="parents-not-a-list",
    ),
    pytest.param([{"step_id": 1, "text": 5}], "field 'text' is int", id="text-not-text"),
]


@pytest.mark.parametrize(("raw_steps", "fragment"), LOAD_ERROR_CASES)
def test_wrong_field_types_keep_the_trajectory_with_load_errors(
    tmp_path: Path, raw_steps, fragment: str
) -> None:
    record = {"problem_id": 1, "answer": "1"}
    if raw_steps is not None:
        record["steps"] = raw_steps
    (t,) = load_paths([write_jsonl(tmp_path / "r.jsonl", record)]).trajectories
    assert any(fragment in str(e) for e in t.load_errors), t.load_errors
    assert {e.kind for e in t.load_errors} == {"record"}


def test_null_and_empty_parents_are_givens(tmp_path: Path) -> None:
    record = {
        "steps": [
            {"step_id": 1, "direct_dependent_steps": None, "text": "a"},
            {"step_id": 2, "direct_dependent_steps": [], "text": "b"},
            {"step_id": 3, "text": "c"},
        ]
    }
    (t,) = load_paths([write_json(tmp_path / "r.json", record)]).trajectories
    assert [s.parents for s in t.steps] == [(), (), ()]


def test_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(sample(1)).encode())
    result = load_paths([path])
    assert result.issues == () and len(result.trajectories) == 1


SCORED_RECORD_CASES = [
    # change to a valid scored record, fragment of the issue (None: accepted)
    pytest.param({}, None, id="valid"),
    pytest.param({"closeness_rate": "x"}, "'closeness_rate' is 'x'", id="rate-text"),
    pytest.param({"n_nodes": None}, "'n_nodes' is None", id="n-nodes-null"),
    pytest.param({"class": "great"}, "unknown class 'great'", id="unknown-class"),
    pytest.param({"closed": "yes"}, "'closed' is 'yes'", id="closed-text"),
    pytest.param({"final_correct": 1}, "'final_correct' is 1", id="verdict-number"),
    pytest.param({"model": None}, "lacks 'model'", id="no-model"),
]


@pytest.mark.parametrize(("change", "fragment"), SCORED_RECORD_CASES)
def test_scored_records_are_checked_at_the_edge(tmp_path: Path, change: dict, fragment) -> None:
    record = {
        "model": "m", "dataset": "d", "problem_id": "1", "sample_id": 0,
        "n_nodes": 2, "n_edges": 1, "density": 1.0, "max_in_degree": 1, "max_out_degree": 1,
        "dead_ends": [], "closeness_rate": 1.0, "closed": True,
        "final_correct": True, "perfect": True, "class": "perfect",
    }  # fmt: skip
    record.update(change)
    result = load_paths([write_jsonl(tmp_path / "scored.jsonl", record)])
    assert result.trajectories == ()
    if fragment is None:
        assert result.scored_records == (record,) and result.issues == ()
    else:
        assert result.scored_records == ()
        (issue,) = result.issues
        assert issue.location == "line 1" and fragment in issue.message


# --------------------------------------------------------------------------- paths


def test_missing_path(tmp_path: Path) -> None:
    result = load_paths([tmp_path / "nope"])
    assert result.trajectories == () and result.files_read == 0
    assert result.unreadable_files == (str(tmp_path / "nope"),)
    assert "no such file or folder" in str(result.issues[0])


def test_empty_folder_and_other_file_types(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("{}", encoding="utf-8")
    result = load_paths([tmp_path])
    assert (result.trajectories, result.issues, result.files_read) == ((), (), 0)


def test_link_leading_outside_the_folder_is_refused(tmp_path: Path) -> None:
    outside = write_jsonl(tmp_path / "outside" / "secret.jsonl", sample(1))
    inside = tmp_path / "data"
    write_jsonl(inside / "ok.jsonl", sample(2))
    (inside / "link.jsonl").symlink_to(outside)
    result = load_paths([inside])
    assert [t.problem_id for t in result.trajectories] == ["2"]
    (issue,) = result.issues
    assert "refused" in issue.message and issue.file == str(inside / "link.jsonl")


# --------------------------------------------------------------------------- layouts, discovery


@pytest.fixture(scope="module")
def thought_anchors() -> Path:
    """``../shared/data/thought-anchors`` (20 real solutions), or skip / fail as shared_data."""
    path = (Path(__file__).parents[1] / ".." / "shared" / "data" / "thought-anchors").resolve()
    if not path.is_dir():
        if os.environ.get("DAGMATH_REQUIRE_SHARED") == "1":
            pytest.fail(f"thought-anchors data not found at {path}", pytrace=False)
        pytest.skip(f"thought-anchors data not found at {path}")
    return path


def test_thought_anchors_layout_loads_each_solution_once(thought_anchors: Path) -> None:
    result = load_paths([thought_anchors])
    # 10 problems x (correct, incorrect); problem.json and base_solution.json are part of
    # each solution, never trajectories (nor issues) of their own
    assert len(result.trajectories) == 20
    assert result.issues == ()
    assert result.files_read == 20
    by_key = {(t.problem_id, t.sample_id): t for t in result.trajectories}
    assert len(by_key) == 20
    model = "deepseek-r1-distill-qwen-14b"
    assert {t.model for t in result.trajectories} == {model}
    assert {t.dataset for t in result.trajectories} == {"thought-anchors"}
    # counted from the files: incorrect_base_solution/problem_330 has chunks 0..230, and
    # chunk 3 depends on "2" and is tagged plan_generation
    wrong_330 = by_key[("330", 1)]
    assert len(wrong_330.steps) == 231
    assert wrong_330.steps[0].step_id == 0 and wrong_330.steps[-1].step_id == 230
    assert wrong_330.steps[3].parents == (2,)
    assert wrong_330.steps[3].tags == ("plan_generation",)
    assert wrong_330.reference_answer == "88572"
    assert wrong_330.difficulty == 5.0 and wrong_330.domain == "Algebra"
    assert "problem_330" in wrong_330.source and "incorrect_base_solution" in wrong_330.source
    assert len(by_key[("330", 0)].steps) == 139
    wrong_4164 = by_key[("4164", 1)]
    assert len(wrong_4164.steps) == 117
    assert wrong_4164.reference_answer == r"-\frac{5}{12}"
    assert wrong_4164.domain == "Intermediate Algebra"
    assert by_key[("4164", 1)].problem_text.startswith(by_key[("4164", 0)].problem_text[:40])


def _ta_folder(root: Path, chunks: object, problem: object | None = None) -> Path:
    folder = root / "m" / "correct_base_solution" / "problem_7"
    folder.mkdir(parents=True)
    (folder / "chunks_labeled.json").write_text(json.dumps(chunks), encoding="utf-8")
    if problem is not None:
        (folder / "problem.json").write_text(json.dumps(problem), encoding="utf-8")
    (folder / "base_solution.json").write_text('{"answer": "3"}', encoding="utf-8")
    return folder


def test_thought_anchors_chunks_become_steps(tmp_path: Path) -> None:
    chunks = [
        {"chunk": "let x = 1", "chunk_idx": 0, "depends_on": [], "function_tags": ["setup"]},
        {"chunk": "so \\boxed{3}", "chunk_idx": 1, "depends_on": ["0"], "function_tags": []},
    ]
    _ta_folder(tmp_path, chunks, {"gt_answer": 3, "level": "Level 2", "problem": "P?"})
    result = load_paths([tmp_path])
    (traj,) = result.trajectories
    assert traj.model == "m" and traj.problem_id == "7" and traj.sample_id == 0
    assert [(s.step_id, s.parents, s.text, s.tags) for s in traj.steps] == [
        (0, (), "let x = 1", ("setup",)),
        (1, (0,), "so \\boxed{3}", ()),
    ]
    assert (traj.reference_answer, traj.difficulty, traj.problem_text) == ("3", 2.0, "P?")
    assert traj.load_errors == ()


def test_thought_anchors_bad_parts_are_named(tmp_path: Path) -> None:
    chunks = [{"chunk": "a", "chunk_idx": 0, "depends_on": "0"}, 5]
    folder = _ta_folder(tmp_path, chunks)  # no problem.json
    result = load_paths([tmp_path])
    (traj,) = result.trajectories
    assert [(f.step_id, f.message, f.positions) for f in traj.load_errors] == [
        (0, "step 0: depends_on is str, expected a list", (0,)),
        (None, "step at position 2: is int, expected an object", (1,)),
    ]
    assert [str(i) for i in result.issues] == [
        f"{folder / 'problem.json'}: file: no such file or folder"
    ]


def test_a_file_in_no_layout_is_reported_once(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('[{"lr": 1}, {"lr": 2}]', encoding="utf-8")
    (tmp_path / "notes.jsonl").write_text('{"a": 1}\n{"b": 2}\n', encoding="utf-8")
    result = load_paths([tmp_path])
    assert result.trajectories == ()
    assert sorted(str(i) for i in result.issues) == [
        f"{tmp_path / 'config.json'}: top level: not a trajectory file: layout not recognised",
        f"{tmp_path / 'notes.jsonl'}: top level: not a trajectory file: layout not recognised",
    ]


def test_dot_files_and_dot_folders_are_never_read(tmp_path: Path) -> None:
    good = [{"steps": [{"step_id": 1, "text": "\\boxed{1}"}]}]
    (tmp_path / "run.json").write_text(json.dumps(good), encoding="utf-8")
    (tmp_path / ".journal.jsonl").write_text("{broken", encoding="utf-8")
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "run.json").write_text(json.dumps(good), encoding="utf-8")
    result = load_paths([tmp_path])
    assert len(result.trajectories) == 1 and result.issues == () and result.files_read == 1


def test_excluded_output_is_skipped_with_a_warning(tmp_path: Path) -> None:
    good = [{"steps": [{"step_id": 1, "text": "\\boxed{1}"}]}]
    (tmp_path / "run.json").write_text(json.dumps(good), encoding="utf-8")
    out = tmp_path / "scored.jsonl"
    out.write_text("{}\n", encoding="utf-8")
    result = load_paths([tmp_path], exclude=[out])
    assert len(result.trajectories) == 1
    assert [(i.file, i.message, i.severity) for i in result.issues] == [
        (str(out), "skipped: the output of this run", "warning")
    ]


def test_score_into_its_own_folder_does_not_grow(tmp_path: Path) -> None:
    from dagmath_viz.cli import main

    good = [{"steps": [{"step_id": 1, "text": "\\boxed{1}"}]}]
    (tmp_path / "run.json").write_text(json.dumps(good), encoding="utf-8")
    out = tmp_path / "scored.jsonl"
    for _ in range(3):  # issue 16 item 8: 1 -> 2 -> 3 records before
        assert main(["score", str(tmp_path), "-o", str(out), "--no-cache"]) == 0
        assert len(out.read_bytes().splitlines()) == 1


def test_layout_registry_names_each_file() -> None:
    from dagmath_viz.formats.registry import format_of as layout_of

    names = {
        "m/d/problem_3_all_samples.json": "official",
        "d/problem_3.json": "gold",
        "x.jsonl": "JSON records",
        "answers.csv": "answer key",
        "m/incorrect_base_solution/problem_9/chunks_labeled.json": "thought-anchors",
        "m/incorrect_base_solution/problem_9/problem.json": "thought-anchors companion",
        "elsewhere/problem.json": "JSON records",
    }
    assert {p: layout_of(Path(p)).name for p in names} == names
    assert layout_of(Path("notes.txt")) is None


# --------------------------------------------------------------------------- one bad record


def _scored(**changes) -> dict:
    record = {
        "model": "m", "dataset": "d", "problem_id": "1", "sample_id": 0, "n_nodes": 2,
        "n_edges": 1, "density": 0.5, "max_in_degree": 1, "max_out_degree": 1,
        "dead_ends": [], "closeness_rate": 1.0, "closed": True, "final_correct": True,
        "perfect": True, "class": "perfect",
    }  # fmt: skip
    record.update(changes)
    return record


def test_sample_ids_beyond_64_bits_fall_back_to_the_position(tmp_path: Path) -> None:
    # issue 16 item 4: 2**64 - 1 beside -1 fits no integer column; the app's keys crashed
    good = {"steps": [{"step_id": 1, "text": "\\boxed{1}"}]}
    records = [{**good, "sample_id": 2**64 - 1}, {**good, "sample_id": -1}]
    path = tmp_path / "ids.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    result = load_paths([path])
    assert [t.sample_id for t in result.trajectories] == [0, -1]
    assert [str(i) for i in result.issues] == [
        f"{path}: item 1: sample_id 18446744073709551615 is out of range (64-bit); "
        "using its position 0"
    ]


def test_bad_scored_records_are_named_and_skipped(tmp_path: Path) -> None:
    missing = _scored()
    del missing["sample_id"]
    lines = [
        _scored(sample_id=None),
        missing,
        _scored(sample_id="zero"),
        _scored(model=["x"]),
        _scored(dataset={"d": 1}),
        _scored(sample_id=7),  # the good one
    ]
    path = tmp_path / "scored.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    result = load_paths([path])
    assert [r["sample_id"] for r in result.scored_records] == [7]
    assert [(i.location, i.message) for i in result.issues] == [
        ("line 1", "scored record: 'sample_id' is None, expected a 64-bit integer"),
        ("line 2", "scored record: 'sample_id' is None, expected a 64-bit integer"),
        ("line 3", "scored record: 'sample_id' is 'zero', expected a 64-bit integer"),
        ("line 4", "scored record: 'model' is ['x'], expected text"),
        ("line 5", "scored record: 'dataset' is {'d': 1}, expected text"),
    ]


def test_an_answers_csv_field_over_the_csv_limit_is_one_line(tmp_path: Path) -> None:
    key = tmp_path / "answers.csv"
    key.write_text("problem_id,answer\n1,2\n2," + "9" * 200_000 + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_answer_key(key)
    assert str(caught.value).startswith(f"{key}: line 3: field larger than field limit")
    # inside a data folder it is named, and the data beside it still loads
    (tmp_path / "run.json").write_text(
        json.dumps([{"problem_id": 1, "steps": [{"step_id": 1, "text": "\\boxed{2}"}]}]),
        encoding="utf-8",
    )
    result = load_paths([tmp_path])
    assert len(result.trajectories) == 1
    assert [i.file for i in result.issues] == [str(key)]


def test_a_json_document_past_the_file_cap_is_that_files_error(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """A 512 MB single-document .json took `dagmath score` to 1.6 GB (only JSON Lines had
    a cap, per line). Past DAGMATH_MAX_FILE_BYTES (set to 1 MiB here; 1 GiB by default) a
    file is refused by its size, unread, and every other file is scored."""
    from dagmath_viz.cli import main

    write_json(tmp_path / "run" / "good.json", [sample(1)])
    big = tmp_path / "run" / "big.json"
    write_json(big, [sample(k, text_pad="x" * 2000) for k in range(1, 1601)])  # ~3.3 MB
    size = big.stat().st_size
    assert size > 2**20
    monkeypatch.setenv("DAGMATH_MAX_FILE_BYTES", str(2**20))
    why = (
        f"{size} bytes, over the cap on a file read whole (1048576 bytes; "
        "DAGMATH_MAX_FILE_BYTES sets another)"
    )
    result = load_paths([tmp_path / "run"])
    assert [(i.file, i.location, i.message) for i in result.issues] == [(str(big), "file", why)]
    assert [t.problem_id for t in result.trajectories] == ["1"]
    out = tmp_path / "scored.jsonl"
    assert main(["score", str(tmp_path / "run"), "-o", str(out), "--no-cache"]) == 4
    assert f"error: {big}: file: {why}" in capsys.readouterr().err
    assert [json.loads(line)["problem_id"] for line in out.read_text().splitlines()] == ["1"]


def test_fifos_and_unlistable_folders_are_named(tmp_path: Path) -> None:
    good = [{"steps": [{"step_id": 1, "text": "\\boxed{1}"}]}]
    (tmp_path / "run.json").write_text(json.dumps(good), encoding="utf-8")
    os.mkfifo(tmp_path / "pipe.json")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "x.json").write_text(json.dumps(good), encoding="utf-8")
    locked.chmod(0)
    try:
        result = load_paths([tmp_path])
    finally:
        locked.chmod(0o755)
    assert len(result.trajectories) == (2 if os.geteuid() == 0 else 1)
    messages = {i.file: i.message for i in result.issues}
    assert messages[str(tmp_path / "pipe.json")] == "skipped: not a regular file"
    if os.geteuid() != 0:  # root lists any folder
        assert messages[str(locked)] == "skipped: cannot list the folder (Permission denied)"


def test_a_folder_of_links_to_model_folders_loads_them(tmp_path: Path) -> None:
    """Issue 34 item 8: a folder gathering model folders kept elsewhere, by links, loaded
    nothing. Its links are followed, each under its own name; a loop is refused."""
    for model, pid in (("m-a", 1), ("m-b", 2)):
        write_jsonl(tmp_path / "store" / model / "runs.jsonl", sample(pid))
    (tmp_path / "store" / "m-b" / "up").symlink_to(tmp_path, target_is_directory=True)
    links = tmp_path / "links"
    links.mkdir()
    (links / "model-a").symlink_to(tmp_path / "store" / "m-a", target_is_directory=True)
    (links / "model-b").symlink_to(tmp_path / "store" / "m-b", target_is_directory=True)
    (links / "zz-again").symlink_to(tmp_path / "store" / "m-a", target_is_directory=True)
    (links / "self").symlink_to(links, target_is_directory=True)
    result = load_paths([links])
    assert sorted(t.problem_id for t in result.trajectories) == ["1", "2"]
    assert {t.source.split(":")[0] for t in result.trajectories} == {
        str(links / "model-a" / "runs.jsonl"),
        str(links / "model-b" / "runs.jsonl"),
    }
    refused = {Path(i.file).name: i.message for i in result.issues}
    # "zz-again" (read after model-a) leads where model-a does; "self" back to the folder;
    # m-b's own link "up" leads out of m-b
    assert "loops" in refused["zz-again"] and "loops" in refused["self"]
    assert "outside" in refused["up"]
