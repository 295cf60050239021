r"""answers.py: \boxed{} extraction and the thread-safe, time-limited equivalence check."""

from __future__ import annotations

import threading

import pytest

from dagmath_viz.answers import (
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
