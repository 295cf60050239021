"""fastscore.py against the reference path: the byte-equality oracle.

Golden rule: for any input, ``score_paths(...).lines()`` (which takes the fast path of
:mod:`dagmath_viz.score.fast` wherever it can) equals, byte for byte, the records of
``load_paths`` + ``score_records`` (plus pre-scored records) serialised as ``dagmath
score`` always did, with the same issues in the same order. Checked on the fixture data and
on a seeded run holding every fault the fast path must hand back to loading.
"""

from __future__ import annotations

import gc
import json
import random
from pathlib import Path

import orjson
import pytest

from dagmath_viz.answers.check import AnswerChecker
from dagmath_viz.formats.discovery import load_paths
from dagmath_viz.run import pool as pipeline
from dagmath_viz.score.fast import measure_clean_steps
from dagmath_viz.score.record import HEAD_FIELDS, RECORD_FIELDS, TAIL_FIELDS, VERDICT_FIELDS
from dagmath_viz.score.reference import score_records

REPO = Path(__file__).parents[1]
OPTS = orjson.OPT_APPEND_NEWLINE | orjson.OPT_SERIALIZE_NUMPY


def serial_lines(paths, checker: AnswerChecker, answers=None) -> tuple[bytes, list[str], int]:
    """What `dagmath score` wrote before the fast path: the reference output."""
    result = load_paths(paths, answers=answers)
    records = score_records(result.trajectories, checker=checker) + list(result.scored_records)
    data = b"".join(orjson.dumps(r, option=OPTS) for r in records)
    return data, [str(i) for i in result.issues], result.files_read


def assert_same(paths, checker: AnswerChecker, workers: int, answers=None) -> bytes:
    expected, issues, files_read = serial_lines(paths, checker, answers)
    run = pipeline.score_paths(paths, answers=answers, workers=workers, checker=checker)
    got = b"".join(run.lines())
    assert got.splitlines() == expected.splitlines()
    assert got == expected
    assert [str(i) for i in run.issues] == issues
    assert run.files_read == files_read
    rows = [orjson.loads(line) for line in expected.splitlines()]
    assert len(run) == len(rows)
    assert run.n_illegal == sum(r["class"] == "illegal" for r in rows)
    assert run.n_unscored == sum(r["class"] == "unscored" for r in rows)
    return got


@pytest.fixture
def pool_always(monkeypatch):
    """Make even a tiny run use the process pool."""
    monkeypatch.setattr(pipeline, "IN_PROCESS_BYTES", 0)


# --------------------------------------------------------------------------- fixture data


@pytest.mark.parametrize("workers", [1, 2], ids=["in-process", "pool"])
def test_fixture_data_scores_identically(answer_checker, data_dir, pool_always, workers):
    for path in (data_dir / "mixed_run", REPO / "sample_data" / "runs"):
        assert_same([path], answer_checker, workers)


@pytest.mark.shared
def test_real_fewshot_data_scores_identically(answer_checker, shared_data):
    assert_same([shared_data], answer_checker, workers=1)


def test_explicit_answers_file(answer_checker, data_dir):
    run = data_dir / "mixed_run"
    assert_same([run], answer_checker, workers=1, answers=run / "answers.json")


# --------------------------------------------------------------------------- every fault


# the last needs math-verify itself (no fast path reads \sin): its verdict is cached
ANSWERS = ("1/2", "2", r"\frac{1}{2}", "x+1", r"\sin(\pi/6)")


def _sample(rng: random.Random, pid: int, sid: int) -> dict:
    n = rng.randint(2, 12)
    steps = []
    for i in range(1, n + 1):
        parents = sorted(rng.sample(range(1, i), k=min(i - 1, rng.randint(0, 2)))) or None
        steps.append(
            {
                "step_id": i,
                "thinking": f"why {i}",
                "direct_dependent_steps": parents,
                "text": f"step {i}",
            }  # fmt: skip
        )
    answer = rng.choice(ANSWERS)
    steps[-1]["text"] = rf"so $\boxed{{{answer}}}$"
    return {"problem_id": pid, "sample_id": sid, "steps": steps, "metadata": {"model": "m"}}


# Each mutation makes one record unusual; the fast path must leave it to loading.
MUTATIONS = {
    "forward-parent": lambda r: r["steps"][0].update(direct_dependent_steps=[2]),
    "missing-parent": lambda r: r["steps"][-1].update(direct_dependent_steps=[99]),
    "self-parent": lambda r: r["steps"][1].update(direct_dependent_steps=[2]),
    "duplicate-id": lambda r: r["steps"][1].update(step_id=1),
    "bool-id": lambda r: r["steps"][0].update(step_id=True),
    "float-id": lambda r: r["steps"][0].update(step_id=1.0),
    "string-id": lambda r: r["steps"][0].update(step_id="1"),
    "negative-ids": lambda r: [
        s.update(step_id=-s["step_id"], direct_dependent_steps=None) for s in r["steps"]
    ],  # fmt: skip
    "bool-parent": lambda r: r["steps"][1].update(direct_dependent_steps=[True]),
    "string-parent": lambda r: r["steps"][1].update(direct_dependent_steps=["1"]),
    "parents-not-a-list": lambda r: r["steps"][1].update(direct_dependent_steps=1),
    "duplicate-parents": lambda r: r["steps"][-1].update(direct_dependent_steps=[1, 1, 1]),
    "text-not-a-string": lambda r: r["steps"][0].update(text=5),
    "text-null": lambda r: r["steps"][0].update(text=None),
    "thinking-not-a-string": lambda r: r["steps"][0].update(thinking=["x"]),
    "thinking-null-edge-text": lambda r: r["steps"][0].update(thinking=None, edge="e"),
    "thinking-null-edge-number": lambda r: r["steps"][0].update(thinking=None, edge=3),
    "gold-spelling": lambda r: [s.update(node=s.pop("text")) for s in r["steps"]],
    "step-not-an-object": lambda r: r["steps"].insert(1, "step"),
    "no-steps": lambda r: r.update(steps=[]),
    "steps-missing": lambda r: r.pop("steps"),
    "steps-not-a-list": lambda r: r.update(steps={"1": 1}),
    "final-text-empty": lambda r: r["steps"][-1].update(text="  "),
    "final-unboxed": lambda r: r["steps"][-1].update(text="The answer is 2."),
    "answer-in-an-earlier-step": lambda r: (
        r["steps"][0].update(text=r"so \boxed{2}"),
        r["steps"][-1].update(text="check: fine"),
    ),
    "sample-id-string": lambda r: r.update(sample_id="a"),
    "problem-id-missing": lambda r: r.pop("problem_id"),
    "record-answer": lambda r: r.update(answer="2", difficulty=3),
    "hostile-model-name": lambda r: r.update(metadata={"model": "<script>x</script>"}),
}


def _fault_run(root: Path, seed: int = 0) -> Path:
    rng = random.Random(seed)
    folder = root / "run" / "m" / "algebra"
    folder.mkdir(parents=True)
    records = []
    for sid, mutate in enumerate(MUTATIONS.values()):
        record = _sample(rng, pid=1, sid=sid)
        mutate(record)
        records.append(record)
    records += [_sample(rng, pid=1, sid=100 + k) for k in range(5)]  # clean ones between
    rng.shuffle(records)
    records.insert(3, "not a record")
    (folder / "problem_1_all_samples.json").write_bytes(orjson.dumps(records))
    clean = [_sample(rng, pid=2, sid=k) for k in range(8)]
    (folder / "problem_2_all_samples.json").write_bytes(orjson.dumps(clean))
    (folder / "problem_3_all_samples.json").write_bytes(b"\xef\xbb\xbf" + orjson.dumps(clean))
    (folder / "problem_4_all_samples.json").write_bytes(orjson.dumps(clean[0]))  # one object
    (folder / "problem_5_all_samples.json").write_text('[{"steps": [}', encoding="utf-8")
    (folder / "problem_6_all_samples.json").write_text("3", encoding="utf-8")
    lines = [orjson.dumps(r) for r in clean[:3]] + [b"{bad"]
    (folder / "more.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    scored = {
        "model": "pre", "dataset": "d", "problem_id": "7", "sample_id": 0, "n_nodes": 3,
        "n_edges": 2, "density": 0.5, "max_in_degree": 1, "max_out_degree": 1,
        "dead_ends": [], "closeness_rate": 1.0, "closed": True, "final_correct": True,
        "perfect": True, "class": "perfect",
    }  # fmt: skip
    mixed = [scored, clean[0]]  # a pre-scored record inside an array of samples
    (folder / "problem_8_all_samples.json").write_bytes(orjson.dumps(mixed))
    (root / "run" / "answers.json").write_text(json.dumps({"1": "1/2", "2": "2"}))
    (root / "run" / "m" / "answers.csv").write_text("problem_id,answer\n", encoding="utf-8")
    return root / "run"


@pytest.mark.parametrize("workers", [1, 2], ids=["in-process", "pool"])
def test_every_fault_scores_identically(answer_checker, tmp_path, pool_always, workers):
    run = _fault_run(tmp_path)
    got = assert_same([run], answer_checker, workers)
    classes = {orjson.loads(line)["class"] for line in got.splitlines()}
    assert {"illegal", "perfect", "incorrect"} <= classes


def test_each_mutation_alone_in_a_file(answer_checker, tmp_path):
    # one file per fault, so a mistake in the fast path cannot hide behind another record
    rng = random.Random(1)
    for name, mutate in MUTATIONS.items():
        folder = tmp_path / name / "m" / "d"
        folder.mkdir(parents=True)
        record = _sample(rng, pid=1, sid=0)
        mutate(record)
        data = orjson.dumps([record, _sample(rng, pid=1, sid=1)])
        (folder / "problem_1_all_samples.json").write_bytes(data)
        (tmp_path / name / "answers.json").write_text('{"1": "1/2"}')
        assert_same([tmp_path / name], answer_checker, workers=1)


def test_random_runs_score_identically(answer_checker, tmp_path):
    # random graphs, no mutation: the fast path measures them all (checked: none fall back)
    rng = random.Random(7)
    folder = tmp_path / "m" / "d"
    folder.mkdir(parents=True)
    for pid in range(6):
        samples = [_sample(rng, pid, sid) for sid in range(20)]
        (folder / f"problem_{pid}_all_samples.json").write_bytes(orjson.dumps(samples))
        assert all(measure_clean_steps(s["steps"]) is not None for s in samples)
    (tmp_path / "answers.json").write_text(json.dumps({str(p): "1/2" for p in range(6)}))
    assert_same([tmp_path], answer_checker, workers=1)


def test_no_data_at_all(answer_checker, tmp_path):
    run = pipeline.score_paths([tmp_path / "missing"], checker=answer_checker)
    assert len(run) == 0 and list(run.lines()) == []
    assert [i.message for i in run.issues] == ["no such file or folder"]


def test_record_fields_split_around_the_verdict() -> None:
    assert HEAD_FIELDS + VERDICT_FIELDS + TAIL_FIELDS == RECORD_FIELDS


def test_gc_paused_restores_the_collector() -> None:
    assert gc.isenabled()
    with pipeline.gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_fast_path_reads_the_answer_by_the_same_rule() -> None:
    # the final step has no box: step 2's last box is the answer (DEFINITIONS.md §1)
    steps = [
        {"step_id": 1, "text": r"\boxed{1}", "direct_dependent_steps": None},
        {"step_id": 2, "text": r"\boxed{3} or \boxed{4}", "direct_dependent_steps": [1]},
        {"step_id": 3, "text": "checked", "direct_dependent_steps": [2]},
    ]
    measured = measure_clean_steps(steps)
    assert (measured.predicted_answer, measured.answer_step) == ("4", 2)
    steps[2]["text"] = "no box anywhere"
    steps[0]["text"] = steps[1]["text"] = "x"
    measured = measure_clean_steps(steps)
    assert (measured.predicted_answer, measured.answer_step) == ("no box anywhere", None)


@pytest.mark.shared
def test_a_gold_files_domain_list_is_its_domain(answer_checker, shared_data, tmp_path):
    # The gold benchmark writes Omni-MATH's domain as a list of "A -> B -> C" paths (issue
    # 30): both paths read it as the paths joined, never as None.
    gold = json.loads((shared_data / "gold" / "problem_1.json").read_text())
    gold[0]["domain"] = ["Mathematics -> Algebra", "Mathematics -> Geometry"]
    (tmp_path / "gold").mkdir()
    (tmp_path / "gold" / "problem_1.json").write_text(json.dumps(gold))
    rows = [orjson.loads(line) for line in assert_same([tmp_path], answer_checker, 1).splitlines()]
    assert [r["domain"] for r in rows] == ["Mathematics -> Algebra; Mathematics -> Geometry"]


def test_the_authors_runner_files_and_final_gold_names(answer_checker, tmp_path):
    # The authors' runner writes <model>/<dataset>/<id>.json holding {"steps": [...]}; the
    # published gold benchmark names its files problem_<id>_final.json (issue 30). The model
    # is the folder above the dataset's, not the file's name; the id drops "_final".
    steps = [
        {"step_id": 1, "thinking": "t", "direct_dependent_steps": None, "text": "x = 2"},
        {"step_id": 2, "thinking": "t", "direct_dependent_steps": [1], "text": "\\boxed{4}"},
    ]
    runs = tmp_path / "llama-3" / "math500"
    runs.mkdir(parents=True)
    for pid in ("7", "8"):
        (runs / f"{pid}.json").write_text(json.dumps({"steps": steps}))
    gold = [{"steps": [{"step_id": 1, "edge": "e", "direct_dependent_steps": None, "node": "4"}]}]
    (tmp_path / "omni").mkdir()
    (tmp_path / "omni" / "problem_12_final.json").write_text(json.dumps(gold))
    rows = [orjson.loads(line) for line in assert_same([tmp_path], answer_checker, 1).splitlines()]
    assert sorted((r["model"], r["dataset"], r["problem_id"]) for r in rows) == [
        ("gold", "omni", "12"),
        ("llama-3", "math500", "7"),
        ("llama-3", "math500", "8"),
    ]
