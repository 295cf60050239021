"""How densely a trajectory's dependencies are labelled, so dead-end counts can be read right.

A dead end is a step other than the final one that no later step cites (DEFINITIONS.md §1).
That is a fact about the *labels*: where a model (not the author of the chain) labelled the
dependencies, a step it gave no parents to, or did not cite, is a dead end whether or not
the reasoning used it. So beside every dead-end figure we show how dense the labels are:

- **edges per step** = E / N (the DAG-MATH gold solutions have 1.0 to 1.9; a chain where
  most steps cite one earlier step has about 1);
- **unlinked steps**: steps with no parents that are not at the start, i.e. after the first
  step that cites one (ours). At the start, parentless steps state the problem; later, a
  parentless step is one the labeller attached to nothing.

Labels are **sparse (ours)** when edges per step are below :data:`MIN_EDGES_PER_STEP` or
more than :data:`MAX_UNLINKED_SHARE` of the steps are unlinked: most of such a chain's dead
ends then say more about the labelling than about the reasoning. One pass over the steps.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from dagmath_viz.schema import Trajectory
from dagmath_viz.score import graph as g
from dagmath_viz.score.validation import validate

__all__ = [
    "COLUMNS",
    "MAX_UNLINKED_SHARE",
    "MIN_EDGES_PER_STEP",
    "LabelDensity",
    "label_density",
    "label_density_table",
    "opening_run",
]

#: Fewer edges per step than this is sparse (ours): a chain of thought in which every step
#: cites the one before already has about 1.
MIN_EDGES_PER_STEP = 0.5
#: A larger share of unlinked steps than this is sparse (ours).
MAX_UNLINKED_SHARE = 0.2
#: Columns of :func:`label_density_table`.
COLUMNS = [
    "model", "dataset", "problem_id", "sample_id", "steps", "edges", "edges_per_step",
    "unlinked", "unlinked_share", "dead_ends", "sparse",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class LabelDensity:
    """The label density of one trajectory (see the module docstring)."""

    steps: int
    edges: int
    unlinked: int
    dead_ends: int

    @property
    def edges_per_step(self) -> float:
        return self.edges / self.steps if self.steps else 0.0

    @property
    def unlinked_share(self) -> float:
        return self.unlinked / self.steps if self.steps else 0.0

    @property
    def sparse(self) -> bool:
        """Sparse labels (ours): too few edges per step, or too many unlinked steps."""
        return self.steps > 1 and (
            self.edges_per_step < MIN_EDGES_PER_STEP or self.unlinked_share > MAX_UNLINKED_SHARE
        )


def opening_run(traj: Trajectory) -> int:
    """How many steps open the trajectory before the first one that cites a parent."""
    return next((i for i, s in enumerate(traj.steps) if s.parents), len(traj.steps))


def label_density(traj: Trajectory) -> LabelDensity:
    """Steps, parent references, unlinked steps and dead ends of ``traj``.

    Parent references are counted as written (E, as in DEFINITIONS.md §1); dead ends are
    those of the validated graph (as everywhere else).

    Example:
        >>> from dagmath_viz.schema import Step
        >>> t = Trajectory("m", "d", "1", 0, (Step(1), Step(2, (1,)), Step(3), Step(4, (2,))))
        >>> d = label_density(t)
        >>> (d.edges, d.unlinked, d.dead_ends, d.edges_per_step, d.sparse)
        (2, 1, 1, 0.5, True)
    """
    steps = traj.steps
    start = opening_run(traj)
    edges = sum(len(s.parents) for s in steps)
    unlinked = sum(1 for s in steps[start:] if not s.parents)
    dead = len(g.dead_end_positions(validate(traj).graph)) if steps else 0
    return LabelDensity(len(steps), edges, unlinked, dead)


def label_density_table(trajectories: Iterable[Trajectory | None]) -> pd.DataFrame:
    """One row per trajectory with steps (``None`` entries are skipped): :data:`COLUMNS`."""
    rows = []
    for traj in trajectories:
        if traj is None:
            continue
        d = label_density(traj)
        rows.append(
            (
                traj.model, traj.dataset, traj.problem_id, traj.sample_id, d.steps, d.edges,
                d.edges_per_step, d.unlinked, d.unlinked_share, d.dead_ends, d.sparse,
            )
        )  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)
