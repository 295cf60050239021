"""pipeline.py: the process pool, the verdict threads and the scored run; the app's
loading of scored JSONL; the plain-number fast path of answers.py against math-verify
itself, and the verdict cache. The byte-equality oracle of the fast path is in
``tests/test_fastscore.py``.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import sys
import threading
from pathlib import Path

import orjson
import pytest
from test_fastscore import _fault_run, _sample

from dagmath_viz import jsonio
from dagmath_viz.answers.check import AnswerChecker, Verdict, number_verdict
from dagmath_viz.cli import main
from dagmath_viz.formats import scored
from dagmath_viz.formats.discovery import load_paths
from dagmath_viz.run import pool as pipeline
from dagmath_viz.score.reference import AwaitingVerdict

REPO = Path(__file__).parents[1]


# --------------------------------------------------------------------------- loading for the app


def _scored_lines(tmp_path: Path, answer_checker) -> list[bytes]:
    run = pipeline.score_paths([_fault_run(tmp_path)], checker=answer_checker)
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
    got = load_paths([target.parent])
    # the quick path reads the valid files; every other one falls back to line by line
    fast = shape in {"clean", "blank-lines-and-crlf", "bom"}
    assert (scored.parse_scored_jsonl(target.read_bytes()) is not None) is fast
    lines_read = [doc for doc in jsonio.parse_lines(target.read_bytes())]
    valid = [
        d.value
        for d in lines_read
        if scored.is_scored(d.value) and scored.scored_fault(d.value) is None
    ]
    assert list(got.scored_records) == valid


# --------------------------------------------------------------------------- the command


def test_score_command_same_output_for_any_worker_count(tmp_path, data_dir, monkeypatch):
    monkeypatch.setattr(pipeline, "IN_PROCESS_BYTES", 0)
    run = _fault_run(tmp_path)
    outputs = []
    for extra in (["-j", "1"], ["-j", "2", "--no-cache"], ["--cache-dir", str(tmp_path / "c")]):
        out = tmp_path / f"out{len(outputs)}.jsonl"
        # 4: written, with the run's unreadable files named (README "Command line")
        assert main(["score", str(run), "-o", str(out), *extra]) == 4
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
    assert (tmp_path / "c").is_dir()  # the verdict cache went where it was told


def test_kept_trajectories_are_those_read_and_change_no_line(tmp_path, answer_checker):
    """``keep_trajectories`` (the app's in-memory load): each file's trajectories come
    with its score, as ``Discovery.read`` reads them (answer keys applied), and the run's
    lines are those of the run that keeps none (fast path where it applies)."""
    from dagmath_viz.formats.discovery import discover

    run_dir = _fault_run(tmp_path)
    found = discover([run_dir])
    plain = pipeline.score_paths([run_dir], checker=answer_checker, found=found)
    scoring = pipeline.Scoring([run_dir], checker=answer_checker, found=found,
                               keep_trajectories=True)  # fmt: skip
    kept = {index: score.trajectories for score, _verdicts, index in scoring}
    assert list(kept) == list(range(len(found.data_files)))  # in this process, file order
    for index, f in enumerate(found.data_files):
        assert list(kept[index]) == found.read(f).trajectories
    assert sum(map(len, kept.values())) > 10  # the clean files and the faulty one
    assert list(scoring.run.lines()) == list(plain.lines())
    assert scoring.run.issues == plain.issues


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
    _fake_worker(first, {("t+1", "1+t"): Verdict(True, "verified"),
                         ("t+1", "t+2"): Verdict(False, "different")})  # fmt: skip
    assert first.check("t+1", "1+t") == Verdict(True, "verified")
    assert first.check("t+1", "t+2") == Verdict(False, "different")
    first.check("7", "7")  # decided without the worker: not written
    first.save()
    assert len(cache.read_bytes().splitlines()) == 2
    with cache.open("ab") as handle:  # a torn line and a foreign one are ignored
        handle.write(b'["a", "b", tr\n["y", "z", true, "timeout"]\n')
    second = AnswerChecker(cache_file=cache)
    asked = _fake_worker(second, {("y", "z"): Verdict(False, "different")})
    assert second.check("t+1", "1+t") == Verdict(True, "verified")
    assert second.check("t+1", "t+2") == Verdict(False, "different")
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
    monkeypatch.setattr(pipeline.Verifier, "BACKLOG", 1)
    checker = AnswerChecker(timeout=20)
    pairs = [(f"y+{k}", f"{k}+y") for k in range(6)] + [("y+1", "y+2")]
    records = [AwaitingVerdict(b"", pair, True, True, b"") for pair in pairs]
    verifier = pipeline.Verifier(checker, max_threads=3)
    try:
        verifier.add(records)
        assert len(verifier._threads) > 1
        verdicts = verifier.finish()
    finally:
        checker.close()
    expected = {pair: Verdict(True, "verified") for pair in pairs[:-1]}
    expected[("y+1", "y+2")] = Verdict(False, "different")
    assert verdicts == expected
    assert {(r, p) for r, p, _ in checker._learned} == set(pairs)


def test_a_short_tail_is_checked_side_by_side(monkeypatch) -> None:
    # pairs still waiting when the run ends go to check_many with the worker budget, so
    # pathological answers (each the whole deadline) are not waited for one by one
    checker = AnswerChecker(timeout=20)
    calls = []

    def check_many(pairs, workers=1):
        calls.append((list(pairs), workers))
        return {pair: Verdict(False, "timeout") for pair in pairs}

    monkeypatch.setattr(checker, "check_many", check_many)
    verifier = pipeline.Verifier(checker, max_threads=1)
    verifier._threads.append(threading.Thread(target=lambda: None))  # one idle thread
    verifier._threads[0].start()
    slow = [("1", r"\boxed{9^{9^{9^{9}}}}"), ("2", r"\boxed{(10^{10^{10}})!}")]
    for pair in slow:
        verifier.verdicts[pair] = None
        verifier._queue.put(pair)
    try:
        verdicts = verifier.finish(spare_cpus=1)
    finally:
        checker.close()
    assert calls == [(slow, 2)]  # the tail, and two workers: 1 + the spare CPU
    assert all(verdicts[pair] == Verdict(False, "timeout") for pair in slow)


def test_pool_priority_is_lowered_only_while_pairs_wait(monkeypatch) -> None:
    # on_busy(True) once BUSY pairs wait for math-verify, on_busy(False) only when none
    # does: the pool's workers are never left at a lower priority after the checks
    checker = AnswerChecker(timeout=20)
    release = threading.Event()
    monkeypatch.setattr(checker, "quick_verdict", lambda reference, prediction: None)

    def check(reference, prediction):
        release.wait(60)  # held until the test lets the checks go (a guard, not a timing)
        return Verdict(True, "verified")

    monkeypatch.setattr(checker, "check", check)
    calls: list[tuple[bool, int]] = []
    idle = threading.Event()
    verifier = None

    def on_busy(busy: bool) -> None:
        calls.append((busy, verifier._queue.qsize()))
        if not busy:
            idle.set()

    verifier = pipeline.Verifier(checker, on_busy=on_busy, max_threads=1)
    busy = pipeline.Verifier.BUSY
    pairs = [(f"r{k}", f"p{k}") for k in range(2 * busy)]
    records = [AwaitingVerdict(b"", pair, True, True, b"") for pair in pairs]
    try:
        verifier.add(records[: busy - 1])  # at most BUSY - 1 wait: not busy yet
        assert calls == []
        verifier.add(records[busy - 1 :])  # 2 BUSY added, one at most being checked
        assert [b for b, _ in calls] == [True]
        assert calls[0][1] >= busy
        release.set()
        assert idle.wait(60)
        verdicts = verifier.finish()
    finally:
        release.set()
        checker.close()
    # back to normal once, with nothing waiting: not as the backlog fell under BUSY
    assert calls[1:] == [(False, 0)]
    assert verdicts == {pair: Verdict(True, "verified") for pair in pairs}


@pytest.mark.skipif(sys.platform != "linux", reason="per-thread niceness is Linux's")
def test_a_worker_scores_at_lower_priority_only_while_checks_are_pending(monkeypatch) -> None:
    own = os.getpriority(os.PRIO_PROCESS, 0)  # this thread's niceness
    lowered = min(own + pipeline.POOL_NICE_DURING_CHECKS, 19)
    if lowered == own:
        pytest.skip("this process already runs at the lowest priority")

    def niceness_of_the_scoring(path, answers, fields=None):  # stands in for score_file
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    monkeypatch.setattr(pipeline, "score_file", niceness_of_the_scoring)
    pending = multiprocessing.RawValue("b", 0)
    monkeypatch.setattr(pipeline, "_worker_checks_pending", pending)
    assert pipeline._score_in_worker(Path("a.json")) == own
    pending.value = 1  # what Verifier's on_busy(True) sets in score_paths
    assert pipeline._score_in_worker(Path("b.json")) == lowered
    pending.value = 0
    assert pipeline._score_in_worker(Path("c.json")) == own  # the next file: restored
    assert os.getpriority(os.PRIO_PROCESS, 0) == own  # the worker itself was never reniced


def test_scoring_at_lower_priority_raises_what_the_scoring_raises() -> None:
    def fails():
        raise ValueError("a bug in scoring")

    with pytest.raises(ValueError, match="a bug in scoring"):
        pipeline._at_lower_priority(fails)
    assert pipeline._at_lower_priority(lambda a, b: a + b, 2, 3) == 5


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
    from dagmath_viz.answers.check import extract_boxed

    rng = random.Random(5)
    pieces = [r"\boxed", r"\fbox", "{", "}", " ", r"\{", r"\}", "a", r"\boxed{", r"\fbox{", "}}"]
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        assert extract_boxed(text) == _boxed_by_rescanning(text), text


# --------------------------------------------------------------------------- the spooled run


def _spooled_run() -> tuple[pipeline.ScoredRun, dict]:
    """Two files: the first's verdict known when it arrives, the second's only later."""
    verdicts = {("1", "1"): Verdict(True, "equal"), ("2", "3"): None}  # None: still checking
    run = pipeline.ScoredRun(verdicts, [], 2)
    known = [AwaitingVerdict(b'{"id":1', ("1", "1"), True, True, b',"t":1}')]
    pending = [
        AwaitingVerdict(b'{"id":2', ("2", "3"), True, False, b',"t":2}'),
        AwaitingVerdict(b'{"id":3', None, True, True, b',"t":3}'),
        AwaitingVerdict(b'{"id":4', ("2", "3"), False, False, b',"t":4}'),
    ]
    run.add(pipeline.FileScore(known, [b'{"scored":1}\n'], []))
    run.add(pipeline.FileScore(pending, [b'{"scored":2}\n', b'{"scored":3}\n'], [], 1, 0))
    verdicts[("2", "3")] = Verdict(False, "different")  # the check ends after both arrived
    return run, verdicts


# the lines worked out by hand from DEFINITIONS.md §1 (classes) and the record layout
SPOOLED_LINES = [
    b'{"id":1,"final_correct":true,"perfect":true,"class":"perfect","answer_check":"equal"'
    b',"t":1}\n',
    b'{"id":2,"final_correct":false,"perfect":false,"class":"incorrect",'
    b'"answer_check":"different","t":2}\n',
    b'{"id":3,"final_correct":null,"perfect":null,"class":"unscored","answer_check":null,"t":3}\n',
    b'{"id":4,"final_correct":false,"perfect":false,"class":"illegal",'
    b'"answer_check":"different","t":4}\n',
    b'{"scored":1}\n',
    b'{"scored":2}\n',
    b'{"scored":3}\n',
]


def test_scored_run_spools_pieces_and_finishes_them_when_read() -> None:
    run, _ = _spooled_run()
    with run:
        assert list(run.lines()) == SPOOLED_LINES
        assert list(run.lines()) == SPOOLED_LINES  # read as often as one likes
        # two readers at once, each at its own place in the spool
        first, second = run.lines(), run.lines()
        interleaved = [(next(first), next(second)) for _ in SPOOLED_LINES]
        assert interleaved == [(line, line) for line in SPOOLED_LINES]
        # 4 trajectories + 3 pre-scored; illegal: record 4 + the 1 pre-scored counted
        assert (len(run), run.n_illegal, run.n_unscored) == (7, 2, 1)


def test_scored_run_moves_its_spool_to_a_temporary_file_past_the_limit(monkeypatch) -> None:
    monkeypatch.setattr(pipeline, "SPOOL_IN_MEMORY", 10)
    run, _ = _spooled_run()
    assert run._pieces._file._rolled and run._scored._file._rolled  # on disk now
    assert list(run.lines()) == SPOOLED_LINES
    run.close()
    assert run._pieces._file.closed and list(run.lines()) == []


def test_score_paths_drops_its_spool_when_interrupted(tmp_path, answer_checker, monkeypatch):
    spools = []

    class Recorded(pipeline._Spool):
        def __init__(self) -> None:
            super().__init__()
            spools.append(self)

    def interrupt(done: int, total: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "_Spool", Recorded)
    with pytest.raises(KeyboardInterrupt):
        pipeline.score_paths([_fault_run(tmp_path)], checker=answer_checker, progress=interrupt)
    assert len(spools) == 2 and all(s._file.closed for s in spools)
