r"""answers.py: \boxed{} extraction and the thread-safe, time-limited equivalence check."""

from __future__ import annotations

import threading

import pytest

from dagmath_viz.answers.check import (
    AnswerChecker,
    Verdict,
    default_checker,
    extract_boxed,
    is_equivalent,
    predicted_answer,
)

HOSTILE = r"\boxed{9^{9^{9^{9}}}}"
HANG_GUARD_SECONDS = 30  # not a timing assertion: only "the thread did not hang"

# --------------------------------------------------------------------------- extraction

BOXED_CASES = [
    # plain
    pytest.param(r"The final answer is $\boxed{588}$.", "588", id="plain"),
    pytest.param(r"\boxed{ 42 }", "42", id="stripped"),
    pytest.param(r"\boxed {7}", "7", id="space-before-brace"),
    pytest.param(r"\fbox{5}", "5", id="fbox"),
    pytest.param(r"\boxed{}", "", id="empty-box"),
    # nested braces are kept whole
    pytest.param(r"$\boxed{\frac{3}{7}}$", r"\frac{3}{7}", id="frac"),
    pytest.param(r"\boxed{9^{9^{9^{9}}}}", "9^{9^{9^{9}}}", id="deep-nesting"),
    pytest.param(r"\boxed{\{1, 2\}}", r"\{1, 2\}", id="escaped-braces"),
    # the last box wins
    pytest.param(r"\boxed{1} or rather \boxed{2}", "2", id="last-of-two"),
    pytest.param(r"\boxed{\frac{1}{2}} then \fbox{3}", "3", id="last-across-macros"),
    # no box
    pytest.param("The answer is 12.", None, id="no-box"),
    pytest.param(r"\boxed 5", None, id="macro-without-brace"),
    pytest.param("", None, id="empty-text"),
    # unbalanced: a box that never closes runs to the end of the text
    pytest.param(r"\boxed{12", "12", id="unclosed"),
    pytest.param(r"\boxed{1} and \boxed{2", "1", id="unclosed-after-a-good-box"),
]


@pytest.mark.parametrize(("text", "expected"), BOXED_CASES)
def test_extract_boxed(text: str, expected: str | None) -> None:
    assert extract_boxed(text) == expected


PREDICTED_CASES = [
    pytest.param(r"So $\boxed{300}$.", "300", id="boxed"),
    pytest.param("  The answer is 300.\n", "The answer is 300.", id="whole-text-stripped"),
    pytest.param("", "", id="empty"),
]


@pytest.mark.parametrize(("text", "expected"), PREDICTED_CASES)
def test_predicted_answer(text: str, expected: str) -> None:
    assert predicted_answer(text) == expected


# --------------------------------------------------------------------------- equivalence

CHECK_CASES = [
    # reference, prediction, equivalent
    # equal after normalising whitespace and $ (no worker needed)
    pytest.param("144", "144", True, id="identical"),
    pytest.param("3/7", " $3/7$ ", True, id="dollars-and-spaces"),
    # math-verify
    pytest.param("3/7", r"\frac{3}{7}", True, id="fraction-forms"),
    pytest.param("1/2", "0.5", True, id="fraction-decimal"),
    pytest.param("2", "3", False, id="different-numbers"),
    pytest.param("300", "0", False, id="log-count-wrong-sink"),
    # an empty side never matches
    pytest.param("17", "", False, id="empty-prediction"),
    pytest.param("", "17", False, id="empty-reference"),
]


@pytest.mark.parametrize(("reference", "prediction", "expected"), CHECK_CASES)
def test_check(answer_checker: AnswerChecker, reference: str, prediction: str, expected: bool):
    verdict = answer_checker.check(reference, prediction)
    assert isinstance(verdict, Verdict)
    assert verdict.equivalent is expected
    assert verdict.reason in {"equal", "verified", "different"}


def test_check_many_checks_each_distinct_pair_once(answer_checker: AnswerChecker) -> None:
    pairs = [("6", "6"), ("6", "6"), ("1/2", "0.5")]
    verdicts = answer_checker.check_many(pairs)
    assert list(verdicts) == [("6", "6"), ("1/2", "0.5")]
    assert all(v.equivalent for v in verdicts.values())


def test_is_equivalent_uses_the_default_checker() -> None:
    assert default_checker() is default_checker()
    # equal after normalisation: decided without starting the default worker
    assert is_equivalent("144", " 144 ")
    assert not is_equivalent("144", "")


# --------------------------------------------------------------------------- threads, hostile input


def _in_thread(function, *args):
    """Run ``function(*args)`` in a non-main thread; return (finished, result)."""
    box: dict = {}

    def run() -> None:
        box["result"] = function(*args)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG_GUARD_SECONDS)
    return not thread.is_alive(), box.get("result")


def test_normal_pair_verifies_from_a_thread(answer_checker: AnswerChecker) -> None:
    finished, verdict = _in_thread(answer_checker.check, "3/7", r"\frac{3}{7}")
    assert finished
    assert verdict == Verdict(True, "verified")


def test_hostile_answer_from_a_thread_times_out_and_the_checker_recovers() -> None:
    checker = AnswerChecker(timeout=2)  # its own worker: this one gets killed
    try:
        prediction = predicted_answer(f"The final answer is ${HOSTILE}$.")
        assert prediction == "9^{9^{9^{9}}}"
        finished, verdict = _in_thread(checker.check, "1", prediction)
        assert finished, "the answer check hung in a non-main thread"
        assert verdict == Verdict(False, "timeout")
        # a fresh worker replaces the killed one
        finished, verdict = _in_thread(checker.check, "3/7", r"\frac{3}{7}")
        assert finished
        assert verdict.equivalent
    finally:
        checker.close()


# --------------------------------------------------------------------------- orphan workers

_ORPHAN_SCRIPT = r"""
import sys, threading
from dagmath_viz.answers.check import AnswerChecker
checker = AnswerChecker(timeout=600)
checker.prestart()  # started from a short-lived thread, as dagmath score does
checker._starter.join()
print(checker._proc.pid, flush=True)
checker.check("1", sys.argv[1])
"""


def _gone(pid: int) -> bool:
    """True once ``pid`` has exited (a zombie left unreaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return True
    return stat[stat.rindex(b")") + 2 :].split()[0] in (b"Z", b"X")


def _children(pid: int) -> list[int]:
    import glob

    out = []
    for path in glob.glob(f"/proc/{pid}/task/*/children"):
        with open(path) as f:
            out += [int(c) for c in f.read().split()]
    return out


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="uses /proc")
@pytest.mark.parametrize("signal_name", ["SIGKILL", "SIGTERM"])
def test_killing_the_scorer_mid_check_ends_the_worker(signal_name: str) -> None:
    """A scorer killed (SIGKILL, or SIGTERM to its main process only) while the worker is
    stuck on 9^{9^{9^{9}}} must not leave the worker running."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root}
    scorer = subprocess.Popen(
        [sys.executable, "-c", _ORPHAN_SCRIPT, HOSTILE], stdout=subprocess.PIPE, text=True, env=env
    )
    worker = None
    try:
        worker = int(scorer.stdout.readline())
        time.sleep(1.5)  # the worker is deep in the hostile check by now
        assert not _gone(worker), "the worker should be busy with the hostile answer"
        watchdogs = _children(worker)
        assert len(watchdogs) == 1
        scorer.send_signal(getattr(signal, signal_name))
        scorer.wait(10)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not (_gone(worker) and _gone(watchdogs[0])):
            time.sleep(0.1)
        assert _gone(worker), f"worker {worker} still running after the scorer's {signal_name}"
        assert _gone(watchdogs[0]), "the watchdog outlived the worker"
    finally:
        scorer.kill()
        scorer.wait()
        if worker is not None and not _gone(worker):
            os.kill(worker, signal.SIGKILL)  # a failed run must not leave it spinning either


def test_worker_started_from_a_finished_thread_keeps_working() -> None:
    """PR_SET_PDEATHSIG on the worker would kill it when the starting thread ends."""
    import time

    checker = AnswerChecker(timeout=20)
    try:
        checker.prestart()
        checker._starter.join()
        time.sleep(1.0)  # the watchdog looks every 0.25 s
        assert checker._proc.poll() is None
        assert checker.check("3/7", r"\frac{6}{14}").equivalent  # fast path, no worker
        assert checker.check(r"\sqrt{4}", "2") == Verdict(True, "verified")
    finally:
        checker.close()


# --------------------------------------------------------------------------- the verdict cache

# Pairs no fast path decides (each needs math-verify), with the verdicts worked out by hand.
CACHE_PAIRS = {
    # pairs only math-verify decides (exactforms settles polynomials in x and radicals of
    # numbers itself, and quick verdicts are not cached)
    ("y+1", "1+y"): True,
    (r"\sin(\pi/6)", r"\frac{1}{2}"): True,
    (r"\frac{y}{2}", "y/2"): True,
    ("2y", "y+y"): True,
    ("y^2", "y*y"): True,
    ("y+1", "y+2"): False,
    (r"\sin(\pi/6)", "1.5"): False,
    ("3y", "y^3"): False,
}


def _cache_corpus(root) -> object:
    """One problem per pair; its one sample's final step boxes the prediction."""
    import orjson

    folder = root / "run" / "m" / "algebra"
    folder.mkdir(parents=True)
    for pid, (reference, prediction) in enumerate(CACHE_PAIRS, 1):
        steps = [
            {"step_id": 1, "text": "given", "direct_dependent_steps": None},
            {"step_id": 2, "text": rf"so $\boxed{{{prediction}}}$", "direct_dependent_steps": [1]},
        ]
        record = {"problem_id": pid, "sample_id": 0, "answer": reference, "steps": steps}
        (folder / f"problem_{pid}_all_samples.json").write_bytes(orjson.dumps([record]))
    return root / "run"


# `dagmath score`'s own main, with a 60 s answer deadline instead of 5 s: four runs at once
# on a busy shared machine may take longer than 5 s for a check, and a timeout (rightly never
# cached) would make the runs differ for a reason that is not the cache's.
_SCORE_WITH_A_LONG_DEADLINE = """
import sys
from dagmath_viz import cli
from dagmath_viz.answers import check as answers
answers.AnswerChecker.__init__.__defaults__ = (60.0, None)
sys.exit(cli.main(["score", *sys.argv[1:]]))
"""


def test_four_concurrent_runs_on_one_cache_agree_and_leave_it_compact(tmp_path):
    """Each run learns every verdict and saves it: the cache must hold each pair once."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import orjson

    run = _cache_corpus(tmp_path)
    cache_dir = tmp_path / "cache"
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root}
    env.pop("DAGMATH_CACHE_DIR", None)
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                _SCORE_WITH_A_LONG_DEADLINE,
                str(run),
                "-o",
                str(tmp_path / f"{k}.jsonl"),
                "--cache-dir",
                str(cache_dir),
                "-j",
                "1",
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        for k in range(4)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode(errors="replace")
    outputs = [(tmp_path / f"{k}.jsonl").read_bytes() for k in range(4)]
    checks = [[orjson.loads(line)["answer_check"] for line in out.splitlines()] for out in outputs]
    assert outputs[0] == outputs[1] == outputs[2] == outputs[3], checks
    correct = {orjson.loads(line)["problem_id"]: orjson.loads(line)["final_correct"]
               for line in outputs[0].splitlines()}  # fmt: skip
    assert correct == {str(pid): ok for pid, ok in enumerate(CACHE_PAIRS.values(), 1)}
    (cache,) = [p for p in cache_dir.iterdir() if p.suffix == ".jsonl"]
    rows = [orjson.loads(line) for line in cache.read_bytes().splitlines()]
    keys = [(ref, pred) for ref, pred, _, _ in rows]
    assert len(keys) == len(set(keys)) == len(CACHE_PAIRS)  # compact: each pair once
    assert {(ref, pred): ok for ref, pred, ok, _ in rows} == CACHE_PAIRS
    assert [p.name for p in cache_dir.iterdir()] == [cache.name]  # no lock or temporary file


def test_saving_merges_with_what_another_run_saved(tmp_path):
    cache = tmp_path / "verdicts.jsonl"
    a, b = AnswerChecker(cache_file=cache), AnswerChecker(cache_file=cache)
    a.learn("x+1", "1+x", Verdict(True, "verified"))
    b.learn("x+1", "1+x", Verdict(True, "verified"))
    b.learn("x", "y", Verdict(False, "different"))
    a.save()
    b.save()  # b never read a's file: it must merge, not append or overwrite
    lines = cache.read_bytes().splitlines()
    assert sorted(lines) == sorted(
        [b'["x+1","1+x",true,"verified"]', b'["x","y",false,"different"]']
    )
    before = cache.stat().st_mtime_ns
    c = AnswerChecker(cache_file=cache)
    c.learn("x", "y", Verdict(False, "different"))  # already there: no write at all
    c.save()
    assert cache.stat().st_mtime_ns == before


def test_saving_compacts_an_old_cache_with_repeated_lines(tmp_path):
    # caches written by earlier versions appended every verdict of every concurrent run
    cache = tmp_path / "verdicts.jsonl"
    cache.write_bytes(b'["x+1","1+x",true,"verified"]\n' * 3 + b'["a","b",tr\n')
    checker = AnswerChecker(cache_file=cache)
    checker.learn("x", "y", Verdict(False, "different"))
    checker.save()
    assert cache.read_bytes().splitlines() == [
        b'["x+1","1+x",true,"verified"]',
        b'["x","y",false,"different"]',
    ]


def test_saved_cache_respects_the_umask(tmp_path):
    import os
    import stat as stat_mod

    cache = tmp_path / "verdicts.jsonl"
    old = os.umask(0o027)
    try:
        checker = AnswerChecker(cache_file=cache)
        checker.learn("x", "y", Verdict(False, "different"))
        checker.save()
    finally:
        os.umask(old)
    assert stat_mod.S_IMODE(cache.stat().st_mode) == 0o640  # 0666 less 027, not 0600


# --------------------------------------------------------------------------- side by side


class _RecordingChecker(AnswerChecker):
    """Records when each worker check ran (helpers are made as ``type(self)``)."""

    spans: list = []

    def _ask_worker(self, reference, prediction):
        import time

        start = time.monotonic()
        try:
            return super()._ask_worker(reference, prediction)
        finally:
            self.spans.append((prediction, start, time.monotonic()))


def test_pathological_answers_are_waited_for_side_by_side():
    """Three answers that each cost the whole deadline: with three workers allowed, the three
    checks run at the same time (each starts before any ends), not one after another."""
    hostile = [HOSTILE, r"\boxed{(10^{10^{10}})!}", r"\boxed{9^{9^{9^{8}}}}"]
    _RecordingChecker.spans = []
    checker = _RecordingChecker(timeout=3.0)
    try:
        checker.prestart()
        checker._starter.join()
        pairs = [("1", h) for h in hostile] + [("x+1", "1+x"), ("2", "2")]
        got = checker.check_many(pairs, workers=3)
    finally:
        checker.close()
    assert [got[("1", h)] for h in hostile] == [Verdict(False, "timeout")] * 3
    assert got[("x+1", "1+x")] == Verdict(True, "verified")
    assert got[("2", "2")] == Verdict(True, "equal")  # decided without any worker
    slow = [span for span in _RecordingChecker.spans if span[0] in hostile]
    assert len(slow) == 3
    assert max(start for _, start, _ in slow) < min(end for _, _, end in slow)
    # the helpers' verdicts are the checker's own now, but a timeout is never kept
    # (issue 33, item 7): asking again goes to math-verify, not to a cached "timeout"
    assert checker.quick_verdict("x+1", "1+x") == Verdict(True, "verified")
    assert checker.quick_verdict("1", hostile[2]) is None


def test_check_many_with_one_worker_is_one_after_another():
    _RecordingChecker.spans = []
    checker = _RecordingChecker(timeout=20)
    try:
        # in y: exactforms settles polynomials in x without math-verify
        got = checker.check_many([("y+1", "1+y"), ("y+1", "y+2"), ("y+1", "1+y")], workers=1)
    finally:
        checker.close()
    assert got == {("y+1", "1+y"): Verdict(True, "verified"),
                   ("y+1", "y+2"): Verdict(False, "different")}  # fmt: skip
    (a, b) = _RecordingChecker.spans
    assert a[2] <= b[1]  # the second began after the first ended
