"""Dead ends by step tag (dagmath_viz.analysis.step_tags), counted by hand."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dagmath_viz.analysis.step_tags import UNTAGGED, dead_end_tag_counts, has_tags
from dagmath_viz.schema import Step, Trajectory

TA = (
    Path(__file__).resolve().parents[1]
    / ".."
    / "shared"
    / "data"
    / "thought-anchors"
    / "deepseek-r1-distill-qwen-14b"
    / "incorrect_base_solution"
    / "problem_2189"
)


def _require_ta() -> None:
    if not TA.exists():
        reason = f"{TA} not found"
        if os.environ.get("DAGMATH_REQUIRE_SHARED") == "1":
            pytest.fail(f"{reason} and DAGMATH_REQUIRE_SHARED=1", pytrace=False)
        pytest.skip(f"{reason} (set DAGMATH_REQUIRE_SHARED=1 to make this a failure)")


def _rows(table):
    return {(r.model, r.tag): (r.steps, r.dead_ends) for r in table.itertuples()}


def test_hand_built_trajectories():
    # m1: 1 setup; 2 <- 1 compute; 3 <- 1 check (dead end); 4 <- 2 untagged (dead end);
    # 5 <- 2 compute+check (final, never a dead end).
    a = Trajectory(
        "m1",
        "d",
        "p",
        0,
        (
            Step(1, (), "a", tags=("setup",)),
            Step(2, (1,), "b", tags=("compute",)),
            Step(3, (1,), "c", tags=("check",)),
            Step(4, (2,), "d"),
            Step(5, (2,), "e", tags=("compute", "check")),
        ),
    )
    # m2: 1 setup (dead end); 2 compute (final).
    b = Trajectory(
        "m2", "d", "p", 0, (Step(1, (), "a", tags=("setup",)), Step(2, (), "b", tags=("compute",)))
    )
    table = dead_end_tag_counts([a, None, b])
    assert _rows(table) == {
        ("m1", "setup"): (1, 0),
        ("m1", "compute"): (2, 0),
        ("m1", "check"): (2, 1),
        ("m1", UNTAGGED): (1, 1),
        ("m2", "setup"): (1, 1),
        ("m2", "compute"): (1, 0),
    }
    assert (
        table.loc[(table["model"] == "m1") & (table["tag"] == "check"), "dead_end_share"].item()
        == 0.5
    )
    # Most dead ends first within a model (ties by tag name).
    assert list(table["tag"][:2]) == ["(untagged)", "check"]
    assert has_tags([a]) and not has_tags([None, Trajectory("m", "d", "p", 0, (Step(1, (), "x"),))])


def test_no_trajectories_gives_an_empty_table():
    table = dead_end_tag_counts([None])
    assert table.empty and list(table.columns)[:2] == ["model", "tag"]


def test_real_thought_anchors_trajectory():
    """problem_2189 (60 chunks): counted by hand from its chunks_labeled.json.

    Chunks nothing cites, other than the final chunk 59: 0 (problem_setup), 1, 2, 16
    (plan_generation), 7 (fact_retrieval), 13 (active_computation), 56, 58 (self_checking).
    """
    _require_ta()
    from dagmath_viz.formats.discovery import load_paths

    (traj,) = load_paths([TA]).trajectories
    counts = {tag: v for (_m, tag), v in _rows(dead_end_tag_counts([traj])).items()}
    assert counts == {
        "problem_setup": (2, 1),  # chunks 0, 29
        "plan_generation": (6, 3),  # 1, 2, 16, 30, 31, 37
        "fact_retrieval": (9, 1),  # 3, 5-10, 32, 45
        "active_computation": (28, 1),
        "result_consolidation": (3, 0),  # 28, 47, 57
        "uncertainty_management": (2, 0),  # 35, 36
        "self_checking": (9, 2),  # 49-56, 58
        "final_answer_emission": (1, 0),  # 59
    }


def test_tags_figure_escapes_markup_and_orders_tags_by_dead_ends():
    from dagmath_viz.draw.figures import dead_end_tags_figure

    table = dead_end_tag_counts(
        [
            Trajectory(
                "<b>m</b>",
                "d",
                "p",
                0,
                (
                    Step(1, (), "a", tags=("<i>x</i>",)),
                    Step(2, (), "b", tags=("y",)),
                    Step(3, (), "c", tags=("y",)),
                    Step(4, (1,), "d", tags=("z",)),
                ),
            )
        ]
    )
    # Dead ends: steps 2 and 3 (tag y, 2), none tagged <i>x</i> (step 1 is cited by 4).
    fig = dead_end_tags_figure(table)
    (bar,) = fig.data
    assert bar.name == "&lt;b&gt;m&lt;/b&gt;"
    assert list(bar.x)[0] == "y" and "&lt;i&gt;x&lt;/i&gt;" in list(bar.x)
    assert dict(zip(bar.x, bar.y, strict=True))["y"] == 2


def test_a_scored_records_source_reads_back_with_its_tags(tmp_path):
    from dagmath_viz.formats.discovery import load_paths
    from dagmath_viz.formats.sources import SourceReader

    _require_ta()
    (traj,) = load_paths([TA]).trajectories
    reader = SourceReader([TA])
    read, why = reader.read(traj.source, traj.key)
    assert why is None and read.key == traj.key
    assert read.steps[0].tags == ("problem_setup",)
    gone, why = reader.read(str(tmp_path / "gone.jsonl") + ":line 1", ("m", "d", "p", 0))
    assert gone is None and why  # a missing source is reported, not raised
