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
from collections.abc import Callable, Iterable

import pandas as pd

from dagmath_viz.formats.sources import SourceReader
from dagmath_viz.schema import Trajectory
from dagmath_viz.score import graph as g
from dagmath_viz.score.validation import validate
from dagmath_viz.text import natural_key, normalise_statement

__all__ = [
    "CATEGORIES",
    "GIVEN_TAGS",
    "MAX_STEPS",
    "UNKNOWN",
    "categorise_dead_ends",
    "dead_end_category_counts",
    "dead_end_table",
    "scored_dead_end_table",
    "sorted_naturally",
]

CATEGORIES = ("unused given", "unlinked", "restatement", "abandoned branch", "commentary")
#: Step tags that mark a step as stating the problem (Thought Anchors' ``function_tags``).
GIVEN_TAGS = frozenset({"problem_setup"})
# Past this many steps a trajectory is left out of the Dead ends page (and counted): the
# categories are linear, but one such trajectory's rows alone would fill the table.
MAX_STEPS = 20_000
COLUMNS = ["model", "dataset", "problem_id", "sample_id", "step_id", "text", "category"]
#: Category of a dead end whose trajectory's steps could not be read.
UNKNOWN = "unknown"
#: Records read back between two ``progress`` calls of :func:`scored_dead_end_table`.
PROGRESS_EVERY = 200


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


def scored_dead_end_table(
    records: pd.DataFrame,
    reader: SourceReader | None = None,
    rows: Iterable[int] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> pd.DataFrame:
    """One row per dead end listed in scored records (their ``dead_ends``).

    Each row names its model, dataset, problem_id, sample_id, step_id, the step's text and
    its category. Text and category need the steps: with a ``reader`` they are read from
    the record's source file (one file at a time); otherwise, or when the source cannot be
    read, the text is empty and the category is :data:`UNKNOWN`.

    Args:
        records: the scored frame (columns of :data:`dagmath_viz.score.record.RECORD_FIELDS`).
        reader: reads sources back; ``None`` leaves every category unknown.
        rows: positions (``iloc``) of the records to list; all by default.
        progress: ``progress(done, total)``, records with dead ends read back (every
            :data:`PROGRESS_EVERY` and at the end; only with a ``reader``): reading the
            sources of a 100,000-trajectory folder takes minutes, one file at a time.
    """
    part = records[["model", "dataset", "problem_id", "sample_id", "dead_ends", "source"]]
    if rows is not None:
        part = part.iloc[list(rows)]
    out: list[tuple] = []
    total = int(part["dead_ends"].map(bool).sum()) if progress and reader is not None else 0
    done = 0
    for rec in part.itertuples(index=False):
        dead = list(rec.dead_ends or ())
        if not dead:
            continue
        known: dict = {}
        if reader is not None:
            if progress and done % PROGRESS_EVERY == 0:
                progress(done, total)
            done += 1
            key = (rec.model, rec.dataset, str(rec.problem_id), int(rec.sample_id))
            traj, _why = reader.read(rec.source, key)
            if traj is not None:
                for pos, category in categorise_dead_ends(traj):
                    step = traj.steps[pos]
                    known[step.step_id] = (step.text, category)
        for sid in dead:
            text, category = known.get(sid, ("", UNKNOWN))
            out.append((rec.model, rec.dataset, rec.problem_id, rec.sample_id, sid, text, category))
    if progress and reader is not None:
        progress(done, total)
    return pd.DataFrame(out, columns=COLUMNS)


def dead_end_category_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Dead ends per model and category, :data:`UNKNOWN` included when present, and total.

    Columns: ``model``, every category of :data:`CATEGORIES`, then
    ``unknown`` if any dead end's category is unknown, then ``total`` (the sum of them all).
    """
    cats = list(CATEGORIES) + ([UNKNOWN] if (table["category"] == UNKNOWN).any() else [])
    counts = table.groupby(["model", "category"]).size().unstack("category", fill_value=0)
    counts = counts.reindex(columns=cats, fill_value=0)
    counts["total"] = counts.sum(axis=1)
    counts.columns.name = None
    return counts.reset_index()


def sorted_naturally(table: pd.DataFrame) -> pd.DataFrame:
    """Dead-end rows by model, dataset, problem id (numbers by value), sample and step."""
    if table.empty:
        return table
    order = sorted(
        range(len(table)),
        key=lambda i: (
            str(table["model"].iat[i]),
            str(table["dataset"].iat[i]),
            natural_key(str(table["problem_id"].iat[i])),
            natural_key(str(table["sample_id"].iat[i])),
            natural_key(str(table["step_id"].iat[i])),
        ),
    )
    return table.iloc[order]
