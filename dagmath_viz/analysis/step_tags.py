"""Dead ends by step tag: which kinds of step end up unused.

Thought Anchors labels each chunk with ``function_tags`` (kept on :attr:`Step.tags`), e.g.
``active_computation`` or ``uncertainty_management``. This module counts, per model and
tag, how many steps carry the tag and how many of those are dead ends (a step other than
the final one that no later step cites; DEFINITIONS.md). A step with several tags counts
once under each; a step with none counts under :data:`UNTAGGED`. One pass over the steps
of each trajectory (linear in their number).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import pandas as pd

from dagmath_viz.schema import Trajectory
from dagmath_viz.score import graph as g
from dagmath_viz.score.validation import validate

#: The tag of a step that carries none.
UNTAGGED = "(untagged)"
#: Columns of :func:`dead_end_tag_counts`.
COLUMNS = ("model", "tag", "steps", "dead_ends", "dead_end_share")


def has_tags(trajectories: Iterable[Trajectory | None]) -> bool:
    """True when any step of any trajectory carries a tag."""
    return any(s.tags for t in trajectories if t is not None for s in t.steps)


def dead_end_tag_counts(trajectories: Iterable[Trajectory | None]) -> pd.DataFrame:
    """Steps and dead ends per model and step tag.

    Args:
        trajectories: trajectories to count (``None`` entries, i.e. scored records without
            steps, are skipped).

    Returns:
        One row per (model, tag) with ``steps`` (steps carrying the tag), ``dead_ends``
        (those of them that are dead ends) and ``dead_end_share`` (dead_ends / steps),
        sorted by model, then dead ends (most first), then tag. Empty (with the columns)
        when nothing is given.
    """
    steps: Counter[tuple[str, str]] = Counter()
    dead: Counter[tuple[str, str]] = Counter()
    for traj in trajectories:
        if traj is None or not traj.steps:
            continue
        positions = set(g.dead_end_positions(validate(traj).graph))
        for pos, step in enumerate(traj.steps):
            for tag in step.tags or (UNTAGGED,):
                steps[(traj.model, tag)] += 1
                if pos in positions:
                    dead[(traj.model, tag)] += 1
    rows = [
        (model, tag, n, dead[(model, tag)], dead[(model, tag)] / n)
        for (model, tag), n in steps.items()
    ]
    out = pd.DataFrame(rows, columns=list(COLUMNS))
    if out.empty:
        return out
    out = out.sort_values(["model", "dead_ends", "tag"], ascending=[True, False, True])
    return out.reset_index(drop=True)
