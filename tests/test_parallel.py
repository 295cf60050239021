"""parallel.py: the multi-process score pipeline writes what scoring one by one writes.

Golden rule: for any input, ``score_paths(...).lines()`` equals, byte for byte, the records
of ``load_paths`` + ``score_records`` (plus pre-scored records) serialised as ``dagmath
score`` always did, with the same issues in the same order. Checked on the fixture data and
on a seeded run holding every fault the fast path must hand back to loading. Also here: the
plain-number fast path of answers.py against math-verify itself, and the verdict cache.
"""

from __future__ import annotations

import gc
import json
import random
from pathlib import Path

import orjson
import pytest

from dagmath_viz import parallel
from dagmath_viz.answers import AnswerChecker, Verdict, number_verdict
from dagmath_viz.cli import main
from dagmath_viz.loading import load_paths
from dagmath_viz.scoring import RECORD_FIELDS, score_records

REPO = Path(__file__).parents[1]
OPTS = orjson.OPT_APPEND_NEWLINE | orjson.OPT_SERIALIZE_NUMPY


def serial_lines(paths, checker: AnswerChecker, answers=None) -> tuple[bytes, list[str], int]:
    """What `dagmath score` wrote before the parallel pipeline: the reference output."""
    result = load_paths(paths, answers=answers)
    records = score_records(result.trajectories, checker=checker) + list(result.scored_records)
    data = b"".join(orjson.dumps(r, option=OPTS) for r in records)
    return data, [str(i) for i in result.issues], result.files_read


def assert_same(paths, checker: AnswerChecker, workers: int, answers=None) -> bytes:
    expected, issues, files_read = serial_lines(paths, checker, answers)
    run = parallel.score_paths(paths, answers=answers, workers=workers, checker=checker)
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
    monkeypatch.setattr(parallel, "IN_PROCESS_BYTES", 0)


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


ANSWERS = ("1/2", "2", r"\frac{1}{2}", "x+1")


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
        assert all(parallel._measure(s["steps"]) is not None for s in samples)
    (tmp_path / "answers.json").write_text(json.dumps({str(p): "1/2" for p in range(6)}))
    assert_same([tmp_path], answer_checker, workers=1)


def test_no_data_at_all(answer_checker, tmp_path):
    run = parallel.score_paths([tmp_path / "missing"], checker=answer_checker)
    assert len(run) == 0 and list(run.lines()) == []
    assert [i.message for i in run.issues] == ["no such file or folder"]


def test_record_fields_split_around_the_verdict() -> None:
    assert parallel.HEAD_FIELDS + parallel.VERDICT_FIELDS + parallel.TAIL_FIELDS == RECORD_FIELDS


def test_gc_paused_restores_the_collector() -> None:
    assert gc.isenabled()
    with parallel.gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


# --------------------------------------------------------------------------- loading for the app


def _scored_lines(tmp_path: Path, answer_checker) -> list[bytes]:
    run = parallel.score_paths([_fault_run(tmp_path)], checker=answer_checker)
    return list(run.lines())


SCORED_FILES = {
    "clean": lambda lines: b"".join(lines),
    "blank-lines-and-crlf": lambda lines: b"\n".join(x.rstrip(b"\n") + b"\r" for x in lines),
    "bom": lambda lines: b"\xef\xbb\xbf" + b"".join(lines),
    "invalid-line": lambda lines: b"".join(lines[:2]) + b"{oops\n" + b"".join(lines[2:]),
    "two-records-on-one-line": lambda lines: lines[0].rstrip() + b" " + b"".join(lines[1:]),
    "record-split-over-lines": lambda lines: lines[0].replace(b",", b",\n", 1) + lines[1],
    "faulty-record": lambda lines: b"".join(lines[1:]) + lines[0].replace(b'"class"', b'"klass"'),
    "bad-class": lambda lines: lines[0].replace(b'"class":"', b'"class":"x') + lines[1],
    "raw-sample-among-them": lambda lines: (
        lines[0] + orjson.dumps(_sample(random.Random(0), 1, 0)) + b"\n"
    ),
    "not-an-object": lambda lines: lines[0] + b"[1, 2]\n",
    "empty": lambda lines: b"\n\n",
}


@pytest.mark.parametrize("shape", SCORED_FILES)
def test_app_loading_reads_scored_jsonl_as_loading_does(tmp_path, answer_checker, shape):
    lines = _scored_lines(tmp_path, answer_checker)
    target = tmp_path / "scored" / "scored.jsonl"
    target.parent.mkdir()
    target.write_bytes(SCORED_FILES[shape](lines))
    expected = load_paths([target.parent])
    got = parallel.load_paths([target.parent])
    assert got == expected
    # the quick path reads the valid files; every other one falls back to loading
    fast = shape in {"clean", "blank-lines-and-crlf"}
    assert (parallel._scored_jsonl(target) is not None) is fast


def test_app_loading_of_raw_runs_is_load_paths(tmp_path, data_dir) -> None:
    for paths in (
        [_fault_run(tmp_path)],
        [data_dir / "mixed_run"],
        [REPO / "sample_data" / "runs"],
    ):
        assert parallel.load_paths(paths) == load_paths(paths)
    answers = data_dir / "mixed_run" / "answers.json"
    assert parallel.load_paths([data_dir], answers) == load_paths([data_dir], answers)


# --------------------------------------------------------------------------- the command


def test_score_command_same_output_for_any_worker_count(tmp_path, data_dir, monkeypatch):
    monkeypatch.setattr(parallel, "IN_PROCESS_BYTES", 0)
    run = _fault_run(tmp_path)
    outputs = []
    for extra in (["-j", "1"], ["-j", "2", "--no-cache"], ["--cache-dir", str(tmp_path / "c")]):
        out = tmp_path / f"out{len(outputs)}.jsonl"
        # 4: written, with the run's unreadable files named (README "Command line")
        assert main(["score", str(run), "-o", str(out), *extra]) == 4
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
    assert (tmp_path / "c").is_dir()  # the verdict cache went where it was told


# --------------------------------------------------------------------------- answers


def _number_pairs(rng: random.Random, n: int) -> list[tuple[str, str]]:
    def forms(p: int, q: int) -> list[str]:
        sign = "-" if p * q < 0 else ""
        p, q = abs(p), abs(q)
        out = [
            f"{sign}{p}/{q}",
            rf"{sign}\frac{{{p}}}{{{q}}}",
            rf"{sign}\dfrac{{{3 * p}}}{{{3 * q}}}",
        ]
        if p % q == 0:
            out.append(f"{sign}{p // q}")
        out += [f"{sign}{p / q:.{k}f}" for k in (1, 4, 6, 7)]
        return out

    pairs = set()
    while len(pairs) < n:
        p, q = rng.choice([(rng.randint(-40, 40), rng.randint(1, 12)),
                           (rng.randint(10**6, 10**11), rng.choice([1, 3]))])  # fmt: skip
        p2 = p + rng.choice([0, 0, 1, -1, q])
        pair = (rng.choice(forms(p, q)), rng.choice(forms(p2, q)))
        if number_verdict(*pair) is not None and pair[0] != pair[1]:
            pairs.add(pair)
    return sorted(pairs)


def test_number_fast_path_agrees_with_math_verify(answer_checker) -> None:
    # ask math-verify itself (the worker, bypassing every shortcut) about pairs the fast
    # path decides; 3,000 such pairs agreed when this was written, 150 keep the suite quick
    pairs = _number_pairs(random.Random(3), 150)
    with answer_checker._lock:
        verdicts = [answer_checker._ask_worker(*pair) for pair in pairs]
    disagree = [
        (pair, v, number_verdict(*pair))
        for pair, v in zip(pairs, verdicts, strict=True)
        if v.equivalent != number_verdict(*pair).equivalent
        or v.reason not in ("verified", "different")
    ]
    assert not disagree


NUMBER_CASES = [
    pytest.param("3/7", r"\frac{6}{14}", True, id="fraction-forms"),
    pytest.param("-3/7", r"-\dfrac{3}{7}", True, id="negative-fraction"),
    pytest.param("5", "5.0", True, id="integer-decimal"),
    pytest.param("1/2", "0.5", True, id="fraction-decimal"),
    pytest.param("12", "-12", False, id="sign"),
    pytest.param("1/3", "0.3333", False, id="decimal-far"),
    pytest.param("1/3", "0.333333", None, id="decimal-near: math-verify rounds"),
    pytest.param("007", "7", None, id="leading-zeros"),
    pytest.param("1,000", "1000", None, id="thousands-separator"),
    pytest.param("10000000000000", "10000000000000", None, id="too-many-digits"),
    pytest.param("x+1", "1+x", None, id="expression"),
    pytest.param("2", r"\sqrt{4}", None, id="not-plain"),
]


@pytest.mark.parametrize(("reference", "prediction", "expected"), NUMBER_CASES)
def test_number_verdict(reference: str, prediction: str, expected: bool | None) -> None:
    verdict = number_verdict(reference, prediction)
    assert (None if verdict is None else verdict.equivalent) is expected


def test_number_pairs_never_start_the_worker() -> None:
    checker = AnswerChecker()
    assert checker.check("3/7", r"\frac{3}{7}") == Verdict(True, "verified")
    assert checker.check("144", "145") == Verdict(False, "different")
    assert checker._proc is None


def _fake_worker(checker: AnswerChecker, answers: dict) -> list:
    """Stand in for math-verify: verdicts from ``answers``; records what it was asked."""
    asked = []

    def ask(reference: str, prediction: str) -> Verdict:
        asked.append((reference, prediction))
        return answers[(reference, prediction)]

    checker._ask_worker = ask
    return asked


def test_verdict_cache_file_round_trip(tmp_path) -> None:
    cache = tmp_path / "cache" / "verdicts.jsonl"
    first = AnswerChecker(cache_file=cache)
    _fake_worker(first, {("x+1", "1+x"): Verdict(True, "verified"),
                         ("x+1", "x+2"): Verdict(False, "different")})  # fmt: skip
    assert first.check("x+1", "1+x") == Verdict(True, "verified")
    assert first.check("x+1", "x+2") == Verdict(False, "different")
    first.check("7", "7")  # decided without the worker: not written
    first.save()
    assert len(cache.read_bytes().splitlines()) == 2
    with cache.open("ab") as handle:  # a torn line and a foreign one are ignored
        handle.write(b'["a", "b", tr\n["y", "z", true, "timeout"]\n')
    second = AnswerChecker(cache_file=cache)
    asked = _fake_worker(second, {("y", "z"): Verdict(False, "different")})
    assert second.check("x+1", "1+x") == Verdict(True, "verified")
    assert second.check("x+1", "x+2") == Verdict(False, "different")
    assert second.quick_verdict("y", "z") is None
    assert second.check("y", "z") == Verdict(False, "different")
    assert asked == [("y", "z")]


def test_verdict_cache_never_keeps_timeouts_or_errors(tmp_path) -> None:
    cache = tmp_path / "verdicts.jsonl"
    checker = AnswerChecker(cache_file=cache)
    _fake_worker(checker, {("a", "b"): Verdict(False, "timeout"),
                           ("c", "d"): Verdict(False, "error: Boom")})  # fmt: skip
    checker.check("a", "b")
    checker.check("c", "d")
    checker.save()
    assert not cache.exists()


def test_unwritable_verdict_cache_is_skipped(tmp_path) -> None:
    (tmp_path / "f").write_text("a file where a folder should be")
    checker = AnswerChecker(cache_file=tmp_path / "f" / "verdicts.jsonl")
    _fake_worker(checker, {("x", "y"): Verdict(False, "different")})
    checker.check("x", "y")
    checker.save()  # best effort: no error
    assert checker.check("x", "y") == Verdict(False, "different")


def test_verifier_threads_share_the_backlog(monkeypatch) -> None:
    # several math-verify workers when pairs pile up; the caller's checker learns them all
    monkeypatch.setattr(parallel._Verifier, "BACKLOG", 1)
    checker = AnswerChecker(timeout=20)
    pairs = [(f"x+{k}", f"{k}+x") for k in range(6)] + [("x+1", "x+2")]
    records = [parallel.Pending(b"", pair, True, True, b"") for pair in pairs]
    verifier = parallel._Verifier(checker, max_threads=3)
    try:
        verifier.add(records)
        assert len(verifier._threads) > 1
        verdicts = verifier.finish()
    finally:
        checker.close()
    expected = {pair: Verdict(True, "verified") for pair in pairs[:-1]}
    expected[("x+1", "x+2")] = Verdict(False, "different")
    assert verdicts == expected
    assert {(r, p) for r, p, _ in checker._learned} == set(pairs)


def _boxed_by_rescanning(text: str) -> str | None:
    """The first implementation of extract_boxed (search every macro again from each box,
    quadratic on many boxes): the oracle for the linear one."""
    found, start = None, 0
    while True:
        best = None
        for macro in (r"\boxed", r"\fbox"):
            i = text.find(macro, start)
            while i != -1:
                j = i + len(macro)
                while j < len(text) and text[j] == " ":
                    j += 1
                if j < len(text) and text[j] == "{":
                    best = j if best is None else min(best, j)
                    break
                i = text.find(macro, j)
        if best is None:
            return found
        depth, content = 0, None
        for k in range(best, len(text)):
            if text[k] == "{" and text[k - 1] != "\\":
                depth += 1
            elif text[k] == "}" and text[k - 1] != "\\":
                depth -= 1
                if depth == 0:
                    content = text[best + 1 : k]
                    break
        if content is None:
            return found if found is not None else text[best + 1 :].strip()
        found, start = content.strip(), best + len(content) + 2


def test_extract_boxed_agrees_with_rescanning() -> None:
    from dagmath_viz.answers import extract_boxed

    rng = random.Random(5)
    pieces = [r"\boxed", r"\fbox", "{", "}", " ", r"\{", r"\}", "a", r"\boxed{", r"\fbox{", "}}"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        assert extract_boxed(text) == _boxed_by_rescanning(text), text
