"""Every dead end of a corpus, with why it is one.

Categories (checked in this order; the first that fits wins):

- ``unused given``: a source step (no parents) that nothing cites;
- ``restatement``: the same content as an earlier step, after normalising whitespace and
  math (:func:`dagmath_viz.text.normalise_statement`);
- ``abandoned branch``: it closes a side chain of two or more steps that are not ancestors
  of the final step (the dead end and at least one of its own ancestors);
- ``commentary``: any other derived leaf.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from dagmath_viz import graph as g
from dagmath_viz.schema import Trajectory
from dagmath_viz.text import normalise_statement
from dagmath_viz.validation import validate

__all__ = ["CATEGORIES", "categorise_dead_ends", "dead_end_counts", "dead_end_table"]

CATEGORIES = ("unused given", "restatement", "abandoned branch", "commentary")
COLUMNS = ["model", "dataset", "problem_id", "sample_id", "step_id", "text", "category"]


def categorise_dead_ends(traj: Trajectory) -> list[tuple[int, str]]:
    """(position, category) for each dead end of one trajectory, in step order."""
    graph = validate(traj).graph
    dead = g.dead_end_positions(graph)
    if not dead:
        return []
    main = g.ancestors(graph, graph.n_nodes - 1) | {graph.n_nodes - 1}
    seen: set[str] = set()
    earlier: list[set[str]] = []
    for step in traj.steps:  # statements seen before each position
        earlier.append(set(seen))
        seen.add(normalise_statement(step.text))
    out = []
    for pos in dead:
        if not graph.parents[pos]:
            category = "unused given"
        elif normalise_statement(traj.steps[pos].text) in earlier[pos]:
            category = "restatement"
        elif any(a not in main for a in g.ancestors(graph, pos)):
            category = "abandoned branch"
        else:
            category = "commentary"
        out.append((pos, category))
    return out


def dead_end_table(trajectories: Iterable[Trajectory | None]) -> pd.DataFrame:
    """One row per dead end: model, dataset, problem_id, sample_id, step_id, text, category."""
    rows = []
    for traj in trajectories:
        if traj is None:
            continue
        for pos, category in categorise_dead_ends(traj):
            step = traj.steps[pos]
            rows.append(
                (
                    traj.model,
                    traj.dataset,
                    traj.problem_id,
                    traj.sample_id,
                    step.step_id,
                    step.text,
                    category,
                )
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def dead_end_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Dead ends per model and category (every category a column, plus ``total``)."""
    counts = table.groupby(["model", "category"]).size().unstack("category", fill_value=0)
    counts = counts.reindex(columns=list(CATEGORIES), fill_value=0)
    counts["total"] = counts.sum(axis=1)
    return counts.reset_index()
