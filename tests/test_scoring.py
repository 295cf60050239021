"""scoring.py: one trajectory -> Score, a corpus -> records (DEFINITIONS §1, §3, §4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagmath_viz.answers.check import AnswerChecker
from dagmath_viz.formats.discovery import load_paths
from dagmath_viz.schema import CLASSES, Step, Trajectory
from dagmath_viz.score.record import RECORD_FIELDS, records_frame
from dagmath_viz.score.reference import (
    classify,
    score_corpus,
    score_records,
    score_trajectory,
)

# --------------------------------------------------------------------------- the real few-shot data
#
# Counted by hand from the parent lists in ../shared/data/dagmath-fewshot (both layouts hold
# the same lists). In-degree = length of a step's parent list; out-degree = how many lists
# name the step; E = sum of in-degrees; density = 2E / (N (N - 1)).
#
# Problem 1, N = 22. In-degrees of steps 2..22: 1,1,1,1,1,1,1 (steps 2-8), 2 (9),
#   1,1,1,1,1,1 (10-15), 2 (16), 1 (17), 4 (18), 2 (19), 2 (20), 3 (21), 1 (22)
#   E = 7 + 2 + 6 + 2 + 1 + 4 + 2 + 2 + 3 + 1 = 30; density = 60 / (22*21) = 60/462.
#   max in = 4 (step 18: 10, 12, 14, 17); max out = 3 (step 12 <- 13, 14, 18; step 14 <- 15,
#   16, 18). Every step but 22 is cited: closed.
# Problem 2, N = 26. In-degrees: 0,0,1,1,1,0,2,0,0,1,1,2,1,1,1,3,3,2,2,2,0,0,4,3,1,2
#   E = (1+1+1) + 2 + (1+1+2) + (1+1+1) + (3+3) + (2+2+2) + (4+3+1+2) = 34
#   (steps 3-5, 7, 10-12, 13-15, 16-17, 18-20, 23-26);
#   density = 68 / (26*25) = 68/650. max in = 4 (step 23: 17, 20, 21, 22);
#   max out = 3 (step 2 <- 3, 4, 5; step 7 <- 12, 17, 18). Closed.
# Problem 3, N = 25. In-degrees: 0,0,0,0,3,1,3,3,1,0,2,0,2,3,1,3,1,3,1,0,2,1,2,2,2
#   E = 3+1+3+3+1+2+2+3+1+3+1+3+1+2+1+2+2+2 = 36; density = 72 / (25*24) = 0.12.
#   max in = 3 (steps 5, 7, 8, 14, 16, 18); max out = 4 (step 2 <- 5, 6, 14, 16). Closed.
# Problem 4, N = 38. In-degrees: 0,0,0,2,2,2,3,1,2,2,1,1,1,3,1,2,1,1,3,1,1,1,1,2,3,1,2,1,2,
#   2,3,1,6,1,2,5,1,1 (running sum ends 17 at step 13, 38 at step 26, 65 at step 38)
#   E = 65; density = 130 / (38*37) = 130/1406. max in = 6 (step 33: 1, 2, 8, 15, 26, 32);
#   max out = 5 (steps 1 and 2 <- 4, 9, 16, 27, 33; step 3 <- 5, 10, 18, 30, 35). Closed.
FEWSHOT_STATS = {
    # problem: (N, E, density, max in, max out, answer)
    "1": (22, 30, 60 / 462, 4, 3, "144"),
    "2": (26, 34, 68 / 650, 4, 3, "3/7"),
    "3": (25, 36, 72 / 600, 3, 4, "2"),
    "4": (38, 65, 130 / 1406, 6, 5, "17"),
}
LAYOUTS = {"model-output": "dagmath-authors-fewshot", "gold": "gold"}


@pytest.fixture(scope="module")
def fewshot_records(shared_data: Path, answer_checker: AnswerChecker) -> list[dict]:
    result = load_paths([shared_data])
    assert result.issues == ()
    return score_records(result.trajectories, checker=answer_checker)


@pytest.mark.shared
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("problem", list(FEWSHOT_STATS))
def test_fewshot_solutions_by_hand(fewshot_records: list[dict], layout: str, problem: str):
    (rec,) = [
        r for r in fewshot_records if r["model"] == LAYOUTS[layout] and r["problem_id"] == problem
    ]
    n, e, dens, max_in, max_out, answer = FEWSHOT_STATS[problem]
    assert (rec["n_nodes"], rec["n_edges"]) == (n, e)
    assert rec["density"] == pytest.approx(dens)
    assert (rec["max_in_degree"], rec["max_out_degree"]) == (max_in, max_out)
    # all four are closed and correct
    assert rec["dead_ends"] == [] and rec["closeness_rate"] == 1.0 and rec["closed"] is True
    assert rec["predicted_answer"] == rec["reference_answer"] == answer
    assert rec["final_correct"] is True and rec["perfect"] is True
    assert rec["class"] == "perfect" and rec["errors"] == []


# --------------------------------------------------------------------------- the log-count example
#
# DEFINITIONS.md §4 (the paper's Figure 1): the task DAG, node -> parents.
LOG_COUNT_DAG = {
    "v1": (), "v2": (), "v3": (),
    "v4": ("v1",), "v5": ("v1",), "v6": ("v1",), "v7": ("v6",),
    "v8": ("v3", "v4", "v7"), "v9": ("v7",),
    "v10": ("v2", "v5", "v8"), "v11": ("v3", "v9"),
}  # fmt: skip
SINK_TEXT = {
    "v10": r"The final answer is $\boxed{300}$.",
    "v11": r"The final answer is $\boxed{0}$.",
}


def log_count_trajectory(order: str, sample_id: int) -> Trajectory:
    """A walk over the task DAG, renumbered 1..L in its own order (parents by new ids)."""
    nodes = order.split()
    new_id = {v: i for i, v in enumerate(nodes, start=1)}
    steps = tuple(
        Step(
            step_id=new_id[v],
            parents=tuple(new_id[p] for p in LOG_COUNT_DAG[v]),
            text=SINK_TEXT.get(v, f"claim {v}"),
        )
        for v in nodes
    )
    return Trajectory("paper", "fig1", "log-count", sample_id, steps, reference_answer="300")


PERFECT = "v1 v2 v3 v4 v5 v6 v7 v8 v10"
IMPERFECT = "v1 v2 v3 v4 v5 v6 v7 v9 v8 v10"
WRONG = "v1 v2 v3 v6 v7 v9 v11"

LOG_COUNT_CASES = [
    # perfect, renumbered: 4,5,6 <- 1; 7 <- 6; 8 <- 3,4,7; 9 (v10) <- 2,5,8.
    #   N = 9, E = 1+1+1+1+3+3 = 10, density = 20/72; max in 3; max out 3 (step 1 <- 4,5,6).
    #   Every step but 9 is cited: no dead ends, r = 9/9.
    pytest.param(
        PERFECT,
        dict(n_nodes=9, n_edges=10, density=20 / 72, max_in_degree=3, max_out_degree=3,
             dead_ends=(), closeness_rate=1.0, closed=True, predicted_answer="300",
             final_correct=True, perfect=True, trajectory_class="perfect", ancestor_share=1.0),
        id="perfect",
    ),
    # imperfect: 8 (v9) <- 7; 9 (v8) <- 3,4,7; 10 (v10) <- 2,5,9. Nothing cites 8.
    #   N = 10, E = 1+1+1+1+1+3+3 = 11, density = 22/90; r = (10 - 1)/10.
    #   Ancestors of 10: 2,5,9 -> 3,4,7 -> 6 -> 1: 8 steps, share (8 + 1)/10.
    pytest.param(
        IMPERFECT,
        dict(n_nodes=10, n_edges=11, density=22 / 90, max_in_degree=3, max_out_degree=3,
             dead_ends=(8,), closeness_rate=0.9, closed=False, predicted_answer="300",
             final_correct=True, perfect=False, trajectory_class="imperfect", ancestor_share=0.9),
        id="imperfect",
    ),
    # wrong: 4 (v6) <- 1; 5 (v7) <- 4; 6 (v9) <- 5; 7 (v11) <- 3,6. Nothing cites 2 (v2).
    #   N = 7, E = 1+1+1+2 = 5, density = 10/42; max in 2; max out 1; r = 6/7.
    #   Ancestors of 7: 3, 6, 5, 4, 1: share (5 + 1)/7. Answer 0 is not 300.
    pytest.param(
        WRONG,
        dict(n_nodes=7, n_edges=5, density=10 / 42, max_in_degree=2, max_out_degree=1,
             dead_ends=(2,), closeness_rate=6 / 7, closed=False, predicted_answer="0",
             final_correct=False, perfect=False, trajectory_class="incorrect",
             ancestor_share=6 / 7),
        id="wrong",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("order", "expected"), LOG_COUNT_CASES)
def test_log_count_example(answer_checker: AnswerChecker, order: str, expected: dict) -> None:
    score = score_trajectory(log_count_trajectory(order, 0), checker=answer_checker)
    for name, want in expected.items():
        got = getattr(score, name)
        assert got == pytest.approx(want) if isinstance(want, float) else got == want, name
    assert score.reference_answer == "300"
    assert score.errors == ()


# --------------------------------------------------------------------------- classes

CLASSIFY_CASES = [
    # legal, closed, final_correct, class
    pytest.param(True, True, True, "perfect", id="perfect"),
    pytest.param(True, False, True, "imperfect", id="imperfect"),
    pytest.param(True, True, False, "incorrect", id="incorrect-closed"),
    pytest.param(True, False, False, "incorrect", id="incorrect-open"),
    pytest.param(True, True, None, "unscored", id="unscored"),
    # illegal wins over everything, even a missing reference
    pytest.param(False, False, True, "illegal", id="illegal-correct"),
    pytest.param(False, False, None, "illegal", id="illegal-unscored"),
]


@pytest.mark.parametrize(("legal", "closed", "correct", "expected"), CLASSIFY_CASES)
def test_classify(legal: bool, closed: bool, correct, expected: str) -> None:
    assert classify(legal, closed, correct) == expected
    assert expected in CLASSES


def _traj(steps: tuple[Step, ...], reference: str | None = "5", **kw) -> Trajectory:
    fields = dict(
        model="m",
        dataset="d",
        problem_id="12",
        sample_id=4,
        steps=steps,
        reference_answer=reference,
        source="run/m/d/problem_12_all_samples.json:item 5",
    )
    fields.update(kw)
    return Trajectory(**fields)


def test_illegal_trajectory_keeps_its_answer(answer_checker: AnswerChecker) -> None:
    # step 3 cites the missing step 9 and step 1; step 2 is cited by nobody
    steps = (Step(1, (), "a"), Step(2, (), "b"), Step(3, (1, 9), r"\boxed{5}"))
    score = score_trajectory(_traj(steps), checker=answer_checker)
    assert score.trajectory_class == "illegal"
    assert score.final_correct is True  # counts in PASS@1 by its answer
    assert score.closed is False and score.perfect is False  # never closed
    # dead ends on the well-formed edges: only 1 -> 3 is kept, so 2 is a dead end
    assert (score.n_edges, score.dead_ends) == (1, (2,))
    assert score.closeness_rate == pytest.approx(2 / 3)


def test_illegal_without_dead_ends_is_still_not_closed(answer_checker: AnswerChecker) -> None:
    # duplicate id 1, but every step is cited: r = 1, yet not closed
    steps = (Step(1, (), "a"), Step(1, (), "b"), Step(2, (1,), r"\boxed{5}"))
    score = score_trajectory(_traj(steps), checker=answer_checker)
    assert score.trajectory_class == "illegal" and score.closed is False and score.perfect is False
    assert score.dead_ends == (1,)  # the second "1" (position 2) is never cited


def test_errors_name_file_problem_sample_and_step(answer_checker: AnswerChecker) -> None:
    steps = (Step(1, (), "a"), Step(2, (7,), r"\boxed{5}"))
    score = score_trajectory(_traj(steps), checker=answer_checker)
    (error,) = score.errors
    assert error == (
        "run/m/d/problem_12_all_samples.json:item 5: problem 12 sample 4: "
        "step 2: parent 7 does not exist"
    )


def test_no_reference_is_unscored(answer_checker: AnswerChecker) -> None:
    steps = (Step(1, (), "a"), Step(2, (1,), r"\boxed{5}"))
    score = score_trajectory(_traj(steps, reference=None), checker=answer_checker)
    assert (score.final_correct, score.perfect, score.trajectory_class) == (None, None, "unscored")
    assert score.closed is True and score.predicted_answer == "5"


def test_no_steps(answer_checker: AnswerChecker) -> None:
    score = score_trajectory(_traj(()), checker=answer_checker)
    assert (score.n_nodes, score.n_edges, score.density) == (0, 0, 0.0)
    assert score.closeness_rate == 0.0 and score.closed is False
    assert score.predicted_answer is None and score.final_correct is False
    assert score.trajectory_class == "illegal"
    assert score.errors[0].endswith("no steps")


def test_unboxed_final_text_is_the_prediction(answer_checker: AnswerChecker) -> None:
    steps = (Step(1, (), "a"), Step(2, (1,), " 5 "))
    score = score_trajectory(_traj(steps), checker=answer_checker)
    assert score.predicted_answer == "5" and score.final_correct is True
    assert score.answer_step is None  # no \boxed{} anywhere


def test_answer_in_an_earlier_step_counts(answer_checker: AnswerChecker) -> None:
    # DEFINITIONS.md §1: the final step (a check) has no box; step 3 is the latest with one,
    # and its last box (5, not 4) is the answer. Step 2's box is older and is not read.
    steps = (
        Step(1, (), "a"),
        Step(2, (1,), r"\boxed{7}"),
        Step(3, (2,), r"\boxed{4}, no: \boxed{5}"),
        Step(4, (3,), "check: 5 - 2 = 3, fine"),
    )
    score = score_trajectory(_traj(steps), checker=answer_checker)
    assert (score.predicted_answer, score.answer_step) == ("5", 3)
    assert score.final_correct is True and score.trajectory_class == "perfect"
    # the final step's own box wins over earlier ones
    boxed_final = steps[:3] + (Step(4, (3,), r"so \boxed{6}"),)
    score = score_trajectory(_traj(boxed_final), checker=answer_checker)
    assert (score.predicted_answer, score.answer_step) == ("6", 4)
    assert score.final_correct is False


def test_old_scored_jsonl_without_answer_step_still_loads(tmp_path: Path) -> None:
    old = {
        "model": "m", "dataset": "d", "problem_id": "1", "sample_id": 0, "n_nodes": 2,
        "n_edges": 1, "density": 0.5, "max_in_degree": 1, "max_out_degree": 1,
        "dead_ends": [], "closeness_rate": 1.0, "closed": True, "final_correct": True,
        "perfect": True, "class": "perfect",
    }  # fmt: skip
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(old) + "\n", encoding="utf-8")
    result = load_paths([path])
    assert result.issues == () and len(result.scored_records) == 1
    frame = records_frame(result.scored_records)
    assert frame.loc[0, "answer_step"] is None


# --------------------------------------------------------------------------- records and frames

#: The fields the issue makes public for `dagmath score`.
PUBLIC_FIELDS = (
    "model", "dataset", "problem_id", "sample_id", "difficulty", "n_nodes", "n_edges",
    "density", "max_in_degree", "max_out_degree", "dead_ends", "closeness_rate", "closed",
    "predicted_answer", "reference_answer", "final_correct", "perfect", "class", "errors",
)  # fmt: skip


def test_records_carry_the_public_fields(answer_checker: AnswerChecker) -> None:
    trajectories = [log_count_trajectory(o, i) for i, o in enumerate((PERFECT, IMPERFECT, WRONG))]
    seen: list[tuple[int, int]] = []
    records = score_records(
        trajectories, checker=answer_checker, progress=lambda d, t: seen.append((d, t))
    )
    assert set(PUBLIC_FIELDS) <= set(RECORD_FIELDS)
    assert [list(r) for r in records] == [list(RECORD_FIELDS)] * 3
    assert [r["class"] for r in records] == ["perfect", "imperfect", "incorrect"]
    assert [r["dead_ends"] for r in records] == [[], [8], [2]]
    assert [r["sample_id"] for r in records] == [0, 1, 2]
    assert [r["answer_check"] for r in records] == ["equal", "equal", "different"]
    assert seen[-1] == (3, 3)


def test_records_agree_with_score_trajectory(answer_checker: AnswerChecker) -> None:
    traj = log_count_trajectory(IMPERFECT, 0)
    (record,) = score_records([traj], checker=answer_checker)
    score = score_trajectory(traj, checker=answer_checker)
    assert record["dead_ends"] == list(score.dead_ends)
    assert record["closeness_rate"] == score.closeness_rate
    assert record["class"] == score.trajectory_class


def test_dead_ends_are_sorted_by_id(answer_checker: AnswerChecker) -> None:
    # ids written out of numeric order: 30 and 10 are both uncited
    steps = (Step(30, (), "a"), Step(10, (), "b"), Step(20, (), "c"), Step(40, (20,), "5"))
    (record,) = score_records([_traj(steps)], checker=answer_checker)
    assert record["dead_ends"] == [10, 30]


def test_score_corpus_frame(answer_checker: AnswerChecker) -> None:
    trajectories = [log_count_trajectory(o, i) for i, o in enumerate((PERFECT, WRONG))]
    frame = score_corpus(trajectories, checker=answer_checker)
    assert list(frame.columns) == list(RECORD_FIELDS)
    assert frame["class"].tolist() == ["perfect", "incorrect"]
    assert frame["problem_id"].tolist() == ["log-count", "log-count"]


def test_score_corpus_empty(answer_checker: AnswerChecker) -> None:
    frame = score_corpus([], checker=answer_checker)
    assert frame.empty
    assert set(RECORD_FIELDS) <= set(frame.columns)


def test_log_count_aggregates(answer_checker: AnswerChecker) -> None:
    from dagmath_viz.analysis.metrics import summarise

    orders = (PERFECT, IMPERFECT, WRONG)
    frame = score_corpus(
        [log_count_trajectory(o, i) for i, o in enumerate(orders)], checker=answer_checker
    )
    (s,) = summarise(frame)
    # one problem, three samples: 2 right, 1 perfect; AUC (1*1 + 1*0.9 + 0*6/7)/3
    assert s["pass_at_1"] == pytest.approx(2 / 3)
    assert s["r_hat"] == pytest.approx(1 / 3)
    assert s["gap"] == pytest.approx(1 / 3)
    assert s["auc"] == pytest.approx(1.9 / 3)
    # pass@2 = 1 - C(1, 2)/C(3, 2) = 1; pass@1 = 2/3 (n = 3: k in {1, 2})
    assert s["pass_at_k"] == pytest.approx({"1": 2 / 3, "2": 1.0})
