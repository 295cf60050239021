"""Property-based tests of the loader and the scorer (hypothesis).

- any JSON value (or any bytes) in a file either loads or yields an issue naming the file,
  and every record of it is accounted for: a trajectory, a scored record or an error;
- scoring never raises; dead ends are steps of the trajectory, never the final one; the
  closeness rate lies in [0, 1]; a trajectory is illegal exactly when it has faults;
- the cohorts add up: All = Incorrect + Correct + unscored + illegal-with-right-answer.

Reference answers come from a small set and answers are checked by the session's one
worker (``answer_checker``), so the file runs in seconds.
"""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dagmath_viz.analysis.metrics import cohort_masks, cohort_stats
from dagmath_viz.formats.records import parse_record
from dagmath_viz.formats.registry import load_file
from dagmath_viz.schema import CLASSES
from dagmath_viz.score.record import records_frame
from dagmath_viz.score.reference import score_records

SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# --- strategies -------------------------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=24,
)
#: Mostly small integers, so that references hit, miss, repeat and point forward.
step_ids = st.integers(min_value=-1, max_value=8) | scalars
answers = st.sampled_from(["6", "7", r"\frac{1}{2}", None])
final_texts = st.sampled_from(
    [r"The final answer is $\boxed{6}$.", r"$\boxed{7}$", r"\boxed{\frac{1}{2}}", "6", "", "x"]
)


@st.composite
def step_dicts(draw, final: bool = False) -> dict:
    step = {
        "step_id": draw(step_ids),
        "direct_dependent_steps": draw(st.none() | st.lists(step_ids, max_size=3) | scalars),
        "text": draw(final_texts if final else st.text(max_size=10) | scalars),
    }
    if draw(st.booleans()):
        step["thinking"] = draw(st.text(max_size=10) | json_values)
    if draw(st.integers(0, 9)) == 0:  # now and then a junk key or a junk step
        return draw(st.sampled_from([step, {**step, "node": step.pop("text")}, 3, None, []]))
    return step


@st.composite
def trajectory_dicts(draw) -> dict:
    n = draw(st.integers(0, 8))
    steps = [draw(step_dicts()) for _ in range(max(n - 1, 0))]
    if n:
        steps.append(draw(step_dicts(final=True)))
    record = {"problem_id": draw(st.integers(1, 3)), "steps": steps}
    record["sample_id"] = draw(st.integers(0, 3) | scalars)
    answer = draw(answers)
    if answer is not None:
        record["answer"] = answer
    if draw(st.integers(0, 5)) == 0:
        record["steps"] = draw(json_values)
    return record


records = trajectory_dicts() | json_values


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("properties")


# --- the loader ---------------------------------------------------------------------------------


def _expected_records(value) -> int:
    """Records a JSON document holds: a list's items, else the one value."""
    return len(value) if isinstance(value, list) else 1


MARKERS = {"steps", "problem_id", "sample_id"}


def _unrecognised(values: list) -> bool:
    """A file whose records are all objects with no trajectory field: reported once."""
    items = [i for v in values for i in (v if isinstance(v, list) else [v])]
    return (
        bool(items)
        and all(isinstance(v, dict) for v in items)
        and all(isinstance(v, dict | list) for v in values)
        and not any(MARKERS & i.keys() for i in items)
    )


def _expected_reports(values: list) -> int:
    """What a file of these documents yields: one per record, or one for the whole file."""
    return 1 if _unrecognised(values) else sum(map(_expected_records, values))


@SETTINGS
@given(value=records | st.lists(records, max_size=4))
def test_any_json_value_loads_or_is_reported(scratch, value):
    path = scratch / "value.json"
    path.write_text(json.dumps(value), encoding="utf-8")
    trajectories, scored, issues = load_file(path)
    assert all(i.file == str(path) and i.location for i in issues)
    errors = [i for i in issues if i.severity == "error"]
    # every record is a trajectory, a pre-scored record, or an error naming its place
    assert len(trajectories) + len(scored) + len(errors) == _expected_reports([value])
    assert all(t.source.startswith(str(path)) for t in trajectories)


@SETTINGS
@given(lines=st.lists(records, max_size=5))
def test_any_jsonl_lines_load_or_are_reported(scratch, lines):
    path = scratch / "lines.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in lines), encoding="utf-8")
    trajectories, scored, issues = load_file(path)
    errors = [i for i in issues if i.severity == "error"]
    assert len(trajectories) + len(scored) + len(errors) == _expected_reports(lines)
    if _unrecognised(lines):
        assert [i.message for i in issues] == ["not a trajectory file: layout not recognised"]
    else:
        assert all(i.location.startswith("line ") for i in issues)


@SETTINGS
@given(data=st.binary(max_size=64) | st.binary(max_size=8).map(lambda b: b'{"steps": [' + b))
def test_any_bytes_load_or_are_reported(scratch, data):
    for name in ("bytes.json", "bytes.jsonl"):
        path = scratch / name
        path.write_bytes(data)
        trajectories, scored, issues = load_file(path)
        assert all(i.file == str(path) and i.location for i in issues)
        if name.endswith(".json") and not (trajectories or scored or issues):
            assert orjson.loads(data.removeprefix(b"\xef\xbb\xbf")) == []


# --- the scorer ---------------------------------------------------------------------------------


def _trajectories(dicts: list[dict]) -> list:
    out = []
    for position, record in enumerate(dicts):
        traj, _ = parse_record(record, "prop.json", "", position)
        out.append(traj)
    return out


@settings(SETTINGS, max_examples=60)
@given(dicts=st.lists(trajectory_dicts(), min_size=1, max_size=6))
def test_scoring_never_raises_and_keeps_its_invariants(answer_checker, dicts):
    trajectories = _trajectories(dicts)
    scored = score_records(trajectories, checker=answer_checker)
    assert len(scored) == len(trajectories)
    for traj, rec in zip(trajectories, scored, strict=True):
        n = len(traj.steps)
        assert rec["n_nodes"] == n
        ids = [s.step_id for s in traj.steps]
        assert set(rec["dead_ends"]) <= set(ids)
        assert len(rec["dead_ends"]) <= max(n - 1, 0)  # the final step is never a dead end
        assert 0.0 <= rec["closeness_rate"] <= 1.0
        if n:
            assert rec["closeness_rate"] == pytest.approx((n - len(rec["dead_ends"])) / n)
        assert rec["class"] in CLASSES
        assert (rec["class"] == "illegal") == bool(rec["errors"])
        assert not rec["closed"] or (rec["class"] != "illegal" and rec["dead_ends"] == [])
        assert (rec["final_correct"] is None) == (traj.reference_answer is None)
        assert 0.0 <= rec["density"] <= 1.0 and 0.0 <= rec["ancestor_share"] <= 1.0


@settings(SETTINGS, max_examples=40)
@given(dicts=st.lists(trajectory_dicts(), min_size=1, max_size=12))
def test_cohort_counts_add_up(answer_checker, dicts):
    df = records_frame(score_records(_trajectories(dicts), checker=answer_checker))
    masks = cohort_masks(df)
    n = {name: int(mask.sum()) for name, mask in masks.items()}
    no_verdict = int(df["final_correct"].isna().sum())
    illegal_right = int(((df["class"] == "illegal") & df["final_correct"].eq(True)).sum())
    # DEFINITIONS.md §1 and metrics.cohort_masks, literally; "unscored" is every row without
    # a verdict (no reference answer): class unscored, or illegal without a reference
    assert n["All"] == n["Incorrect"] + n["Correct"] + no_verdict + illegal_right
    illegal_unscored = int(((df["class"] == "illegal") & df["final_correct"].isna()).sum())
    assert no_verdict == int((df["class"] == "unscored").sum()) + illegal_unscored
    assert not (masks["Incorrect"] & masks["Correct"]).any()
    assert not (masks["Perfect"] & ~masks["Correct"]).any()
    assert {name: cell["n"] for name, cell in cohort_stats(df).items()} == n
