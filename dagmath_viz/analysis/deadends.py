"""Every dead end of a corpus, with why it is one.

Categories (checked in this order; the first that fits wins):

- ``unused given``: a given (a step taken from the problem) that nothing cites. In
  DAG-MATH files a given is any step with no parents (DEFINITIONS.md §1). Where the source
  tags its steps (Thought Anchors' ``function_tags``), the tags say which steps state the
  problem, so a given is a parentless step tagged :data:`GIVEN_TAGS` (ours): "Wait, is t
  given?" has no parents there, but it is no given;
- ``unlinked``: a step with no parents that is not a given (the labels attach it to
  nothing; on model-labelled data such dead ends say more about the labelling than about
  the reasoning, see :mod:`dagmath_viz.analysis.label_density`);
- ``restatement``: it says again what an earlier step said. Either its statement equals an
  earlier step's after normalising whitespace and math
  (:func:`dagmath_viz.text.normalise_statement`), or it states exactly the numbers of the
  steps it cites, no new one and none dropped (and at least one): "So 30 muffins change
  hands" citing "Maya sells 30 muffins". A step that derives something states a new
  number; one that only repeats its premises does not. Wordless restatements ("the order
  matters") stay ``commentary``;
- ``abandoned branch``: it closes a side chain of two or more steps that are not ancestors
  of the final step (the dead end and at least one of its own ancestors);
- ``commentary``: any other derived leaf.

Every computation here is one pass over the steps and edges (linear in the trajectory's
size): a 12,000-step trajectory must not cost memory in the square of its steps. Longer
trajectories than :data:`MAX_STEPS` are not categorised; :func:`dead_end_table` counts them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

import pandas as pd

from dagmath_viz.schema import Trajectory
from dagmath_viz.score import graph as g
from dagmath_viz.score.validation import validate
from dagmath_viz.text import normalise_statement

__all__ = [
    "CATEGORIES",
    "GIVEN_TAGS",
    "MAX_STEPS",
    "categorise_dead_ends",
    "dead_end_counts",
    "dead_end_table",
    "natural_key",
    "sorted_naturally",
]

CATEGORIES = ("unused given", "unlinked", "restatement", "abandoned branch", "commentary")
#: Step tags that mark a step as stating the problem (Thought Anchors' ``function_tags``).
GIVEN_TAGS = frozenset({"problem_setup"})
# Past this many steps a trajectory is left out of the Dead ends page (and counted): the
# categories are linear, but one such trajectory's rows alone would fill the table.
MAX_STEPS = 20_000
COLUMNS = ["model", "dataset", "problem_id", "sample_id", "step_id", "text", "category"]


def categorise_dead_ends(traj: Trajectory) -> list[tuple[int, str]]:
    """(position, category) for each dead end of one trajectory, in step order."""
    graph = validate(traj).graph
    dead = g.dead_end_positions(graph)
    if not dead:
        return []
    on_main = _on_main_path(graph)
    # off_main[i]: some ancestor of i (or i itself) is off the path to the final step; one
    # pass in written order, since every kept parent is earlier than its child.
    off_main = [False] * graph.n_nodes
    for i, parents in enumerate(graph.parents):
        off_main[i] = not on_main[i] or any(off_main[p] for p in parents)
    # Statements seen so far, by a 128-bit digest of their normalised text: memory linear in
    # the steps however long their text, and a collision is out of reach.
    first_at: dict[bytes, int] = {}
    restated = set()
    dead_set = set(dead)
    for i, step in enumerate(traj.steps):
        key = _digest(normalise_statement(step.text))
        if key in first_at:
            if i in dead_set:
                restated.add(i)
        else:
            first_at[key] = i
    tagged = any(step.tags for step in traj.steps)
    out = []
    for pos in dead:
        parents = graph.parents[pos]
        if not parents:
            given = not tagged or bool(GIVEN_TAGS.intersection(traj.steps[pos].tags))
            category = "unused given" if given else "unlinked"
        elif pos in restated or _same_numbers(traj, pos, parents):
            category = "restatement"
        elif any(off_main[p] for p in parents):
            category = "abandoned branch"
        else:
            category = "commentary"
        out.append((pos, category))
    return out


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _same_numbers(traj: Trajectory, pos: int, parents: tuple[int, ...]) -> bool:
    """True when the step states exactly the numbers of the steps it cites (at least one)."""
    mine = sorted(_NUMBER.findall(traj.steps[pos].text))
    if not mine:
        return False
    cited = sorted(n for p in parents for n in _NUMBER.findall(traj.steps[p].text))
    return mine == cited


def _on_main_path(graph: g.StepGraph) -> list[bool]:
    """For each position: is it the final step or one of its ancestors? One backward pass."""
    on_main = [False] * graph.n_nodes
    on_main[-1] = True
    for i in range(graph.n_nodes - 1, -1, -1):  # children come after parents
        if on_main[i]:
            for p in graph.parents[i]:
                on_main[p] = True
    return on_main


def dead_end_table(
    trajectories: Iterable[Trajectory | None], max_steps: int = MAX_STEPS
) -> pd.DataFrame:
    """One row per dead end: model, dataset, problem_id, sample_id, step_id, text, category.

    Trajectories of more than ``max_steps`` steps are left out; ``table.attrs["too_long"]``
    counts them, so a page can say so.
    """
    rows = []
    too_long = 0
    for traj in trajectories:
        if traj is None:
            continue
        if len(traj.steps) > max_steps:
            too_long += 1
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
    table = pd.DataFrame(rows, columns=COLUMNS)
    table.attrs["too_long"] = too_long
    return table


def dead_end_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Dead ends per model and category (every category a column, plus ``total``)."""
    counts = table.groupby(["model", "category"]).size().unstack("category", fill_value=0)
    counts = counts.reindex(columns=list(CATEGORIES), fill_value=0)
    counts["total"] = counts.sum(axis=1)
    return counts.reset_index()


_DIGITS = re.compile(r"(\d+)")


def natural_key(value: object) -> tuple:
    """A sort key that orders numbers inside text by value: "2" < "10", "p9" < "p10".

    >>> sorted(["10", "9", "p10", "p9", "100"], key=natural_key)
    ['9', '10', '100', 'p9', 'p10']
    """
    parts = _DIGITS.split(str(value))
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts if p)


def sorted_naturally(table: pd.DataFrame) -> pd.DataFrame:
    """Dead-end rows by model, dataset, problem id (numbers by value), sample and step."""
    if table.empty:
        return table
    order = sorted(
        range(len(table)),
        key=lambda i: (
            str(table["model"].iat[i]),
            str(table["dataset"].iat[i]),
            natural_key(table["problem_id"].iat[i]),
            natural_key(table["sample_id"].iat[i]),
            natural_key(table["step_id"].iat[i]),
        ),
    )
    return table.iloc[order]
