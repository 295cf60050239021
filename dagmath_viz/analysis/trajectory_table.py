"""The trajectory table: one row per loaded trajectory, filtered, searched and sorted.

Pure functions over DataFrames (vectorised pandas, no Python loop per row at query time), so
a table of 100,000 trajectories filters in well under a second. The app's table page wires
widgets to :func:`trajectory_table`, :func:`search_text`, :func:`filter_table` and
:func:`sort_table`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dagmath_viz.schema import Trajectory
from dagmath_viz.text import natural_key

__all__ = [
    "CORRECTNESS",
    "COLUMNS",
    "SORTABLE",
    "TableFilter",
    "TrajectoryIndex",
    "filter_table",
    "matching_steps",
    "search_text",
    "sort_table",
    "trajectory_index",
    "trajectory_table",
]

#: The table's columns, in display order (``row`` is the corpus row, the table's index).
COLUMNS = [
    "model", "dataset", "problem", "sample", "class", "steps", "dead ends", "closeness",
    "correct", "difficulty",
]  # fmt: skip
#: What the "correct" column holds: the final answer's verdict, or no reference answer.
CORRECTNESS = ("correct", "wrong", "unscored")
#: What a scored record without its steps is searched in.
SEARCHED_FIELDS = ("predicted_answer", "reference_answer", "source")
SORTABLE = ("model", "dataset", "problem", "sample", "class", "steps", "dead ends",
            "closeness", "correct", "difficulty")  # fmt: skip


def _natural(values: pd.Series) -> pd.Series:
    """A sort key for problem ids: their rank in natural order ("2" before "10")."""

    order = sorted(values.astype(str).unique(), key=natural_key)
    return values.astype(str).map({v: i for i, v in enumerate(order)})


def trajectory_table(scored: pd.DataFrame) -> pd.DataFrame:
    """One row per scored trajectory, indexed by its row in ``scored`` (``row``).

    ``correct`` is ``correct``/``wrong`` from ``final_correct``, or ``unscored`` when there
    is no reference answer; ``dead ends`` counts the record's ``dead_ends``; ``closeness``
    is the closeness rate (a fraction).
    """
    final = scored["final_correct"]
    right = final.astype("boolean").fillna(False).to_numpy(dtype=bool)
    correct = np.where(final.isna().to_numpy(), "unscored", np.where(right, "correct", "wrong"))
    table = pd.DataFrame(
        {
            "model": scored["model"].astype("str").array,
            "dataset": scored["dataset"].astype("str").array,
            "problem": scored["problem_id"].astype("str").array,
            "sample": scored["sample_id"].astype("int64").to_numpy(),
            "class": scored["class"].astype("str").array,
            "steps": scored["n_nodes"].astype("int64").to_numpy(),
            "dead ends": scored["dead_ends"].map(lambda d: len(d) if d is not None else 0),
            "closeness": scored["closeness_rate"].astype(float).to_numpy(),
            "correct": pd.array(correct, dtype="str"),
            "difficulty": pd.to_numeric(scored["difficulty"], errors="coerce").to_numpy(),
        },
        index=pd.RangeIndex(len(scored), name="row"),
    )
    table["dead ends"] = table["dead ends"].astype("int64")
    return table


def matching_steps(traj: Trajectory, query: str) -> list[int]:
    """Positions of the steps whose text or thinking holds ``query`` (a plain,
    case-insensitive substring, as the table's search), in order; [] for a blank query.

    >>> from dagmath_viz.schema import Step
    >>> t = Trajectory("m", "d", "1", 0, (Step(1, (), "Let x"), Step(2, (1,), "y", "by X")))
    >>> matching_steps(t, "x"), matching_steps(t, " ")
    ([0, 1], [])
    """
    needle = query.strip().lower()
    if not needle:
        return []
    return [
        i
        for i, step in enumerate(traj.steps)
        if needle in str(step.text).lower() or needle in str(step.justification).lower()
    ]


def search_text(
    trajectories: Sequence[Trajectory | None], scored: pd.DataFrame
) -> tuple[pd.Series, str]:
    """The text searched for each row (lower-case), and a sentence saying what it is.

    A row with its trajectory loaded is searched in the problem text, every step's text
    and every step's thinking (justification). A row read from scored JSONL holds no
    steps, so it is searched in what the record holds: its predicted and reference answers
    and its source.
    """
    n = len(trajectories)
    loaded = [i for i, traj in enumerate(trajectories) if traj is not None]
    raw, scored_only = len(loaded), n - len(loaded)
    # A scored record's text, built column-wise (no Python string per row to keep or free):
    # the non-missing ones of predicted answer, reference answer and source, one a line.
    parts = [scored[c].astype("str").str.lower() for c in SEARCHED_FIELDS]
    texts = parts[0].fillna("")
    for part in parts[1:]:
        sep = np.where(texts.eq("") | part.isna(), "", "\n")
        texts = texts + sep + part.fillna("")
    texts = texts.set_axis(pd.RangeIndex(n, name="row"))
    if loaded:
        steps_text = []
        for i in loaded:
            traj = trajectories[i]
            lines = [traj.problem_text]
            for step in traj.steps:
                lines.append(step.text)
                lines.append(step.justification)
            steps_text.append("\n".join(lines).lower())
        texts.iloc[loaded] = steps_text
    if scored_only and not raw:
        what = (
            "Search looks in each record's predicted answer, reference answer and source: "
            "the steps are not held in memory for these records (scored JSONL, or a large "
            "folder scored as it was opened); open a trajectory to read its steps."
        )
    elif scored_only:
        what = (
            f"Search looks in the problem, step text and thinking of {raw:,} trajectories, and "
            f"in the answers and source of {scored_only:,} scored records (they hold no steps)."
        )
    else:
        what = "Search looks in the problem text and in every step's text and thinking."
    return texts, what


@dataclass(frozen=True)
class TableFilter:
    """What to keep. Empty collections and ``None`` bounds keep everything."""

    models: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    classes: tuple[str, ...] = ()
    correct: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    min_steps: int | None = None
    max_steps: int | None = None
    min_dead_ends: int | None = None
    query: str = ""


def _isin(column: pd.Series, values: Iterable[str]) -> pd.Series:
    return column.isin(list(values))


def filter_table(
    table: pd.DataFrame, flt: TableFilter, text: pd.Series | None = None
) -> pd.DataFrame:
    """The rows of ``table`` that pass ``flt``.

    ``query`` is matched as a plain, case-insensitive substring of ``text`` (from
    :func:`search_text`, aligned on the table's index); with no ``text`` it is matched in
    model, dataset and problem.
    """
    keep = pd.Series(True, index=table.index)
    if flt.models:
        keep &= _isin(table["model"], flt.models)
    if flt.datasets:
        keep &= _isin(table["dataset"], flt.datasets)
    if flt.classes:
        keep &= _isin(table["class"], flt.classes)
    if flt.correct:
        keep &= _isin(table["correct"], flt.correct)
    if flt.problems:
        keep &= _isin(table["problem"], flt.problems)
    if flt.min_steps is not None:
        keep &= table["steps"] >= flt.min_steps
    if flt.max_steps is not None:
        keep &= table["steps"] <= flt.max_steps
    if flt.min_dead_ends is not None:
        keep &= table["dead ends"] >= flt.min_dead_ends
    query = flt.query.strip().lower()
    if query:
        if text is not None:
            haystack = text.reindex(table.index).fillna("")
        else:
            haystack = table["model"] + "\n" + table["dataset"] + "\n" + table["problem"]
            haystack = haystack.str.lower()
        keep &= haystack.str.contains(query, regex=False)
    return table[keep.to_numpy()]


def sort_table(table: pd.DataFrame, by: str, descending: bool = False) -> pd.DataFrame:
    """``table`` sorted by one column (problems naturally: 2 before 10), ties by key.

    Missing values (no difficulty, say) go last either way.
    """
    if by not in SORTABLE:
        raise ValueError(f"cannot sort by {by!r}; choose one of {', '.join(SORTABLE)}")
    keys = ["model", "dataset", "problem", "sample"]
    order = [by] + [k for k in keys if k != by]
    ascending = [not descending] + [True] * (len(order) - 1)

    def key(col: pd.Series) -> pd.Series:
        return _natural(col) if col.name == "problem" else col

    return table.sort_values(order, ascending=ascending, kind="stable", na_position="last", key=key)


@dataclass(frozen=True)
class TrajectoryIndex:
    """What the Trajectory page's selectors list, built once per data source.

    Rows are the corpus rows in the order the page walks them: model, dataset, problem
    (naturally: 2 before 10), sample. Each run of the page then takes the slice of one model
    and dataset instead of filtering and sorting every record again (100,000 records: a
    few MB here, ~1 s of work each run before).

    Attributes:
        frame: ``problem_id``, ``sample_id``, ``class`` and ``row`` (the corpus row).
        groups: ``(model, dataset)`` -> the ``(start, stop)`` of its rows in ``frame``.
        models: every model, sorted; ``datasets[model]`` its datasets, sorted.
        classes: the classes present.
        landing: the (model, dataset, problem_id, sample_id) to open when nothing is
            chosen (:func:`dagmath_viz.analysis.trajectory_table.readable_default`), or None.
    """

    frame: pd.DataFrame
    groups: dict[tuple[str, str], tuple[int, int]]
    models: list[str]
    datasets: dict[str, list[str]]
    classes: frozenset[str]
    landing: tuple[str, str, str, int] | None

    def order(
        self, model: str, dataset: str, classes: Iterable[str]
    ) -> tuple[list[tuple[str, int]], list[int]]:
        """The (problem_id, sample_id) of one model and dataset in the classes given, in
        order, and the corpus row of each."""
        start, stop = self.groups.get((model, dataset), (0, 0))
        part = self.frame.iloc[start:stop]
        classes = set(classes)
        if not self.classes <= classes:
            part = part[part["class"].isin(list(classes))]
        keys = list(zip(part["problem_id"].tolist(), part["sample_id"].tolist(), strict=True))
        return keys, part["row"].tolist()


def trajectory_index(scored: pd.DataFrame) -> TrajectoryIndex:
    """The :class:`TrajectoryIndex` of a scored frame (read column by column, not copied)."""

    models, model_names = pd.factorize(scored["model"], sort=True)
    datasets, dataset_names = pd.factorize(scored["dataset"], sort=True)
    problems, problem_names = pd.factorize(scored["problem_id"])
    natural = sorted(range(len(problem_names)), key=lambda i: natural_key(problem_names[i]))
    rank = np.empty(len(problem_names), dtype=np.int64)
    rank[natural] = np.arange(len(problem_names))
    samples = scored["sample_id"].to_numpy()
    rows = np.lexsort((np.arange(len(scored)), samples, rank[problems], datasets, models))
    frame = pd.DataFrame(
        {
            "problem_id": scored["problem_id"].iloc[rows].reset_index(drop=True),
            "sample_id": samples[rows],
            "class": scored["class"].iloc[rows].reset_index(drop=True),
            "row": rows,
        }
    )
    pairs = models[rows] * len(dataset_names) + datasets[rows]
    starts = np.flatnonzero(np.r_[True, pairs[1:] != pairs[:-1]]) if len(rows) else []
    groups: dict[tuple[str, str], tuple[int, int]] = {}
    by_model: dict[str, list[str]] = {}
    for start, stop in zip(starts, [*starts[1:], len(rows)], strict=True):
        pair = (str(model_names[models[rows[start]]]), str(dataset_names[datasets[rows[start]]]))
        groups[pair] = (int(start), int(stop))
        by_model.setdefault(pair[0], []).append(pair[1])
    sizes = list(
        zip(
            scored["n_nodes"].iloc[rows].astype(int).tolist(),
            [len(d) for d in scored["dead_ends"].iloc[rows]],
            frame["class"].tolist(),
            strict=True,
        )
    )
    pick = readable_default(sizes)
    landing = None
    if pick is not None:
        first = scored.iloc[int(rows[pick])]
        landing = (
            str(first["model"]),
            str(first["dataset"]),
            str(first["problem_id"]),
            int(first["sample_id"]),
        )
    return TrajectoryIndex(
        frame=frame,
        groups=groups,
        models=[str(m) for m in model_names],
        datasets=by_model,
        classes=frozenset(frame["class"].unique().tolist()),
        landing=landing,
    )


def readable_default(sizes: list[tuple[int, int, str]]) -> int | None:
    """The trajectory to land on: the first (in the given order) that is imperfect, with
    8 to 40 steps and a dead end (a picture with something to read); else the first with
    8 to 40 steps; else the shortest. ``sizes`` holds (steps, dead ends, class) per row.

    Example:
        >>> readable_default([(128, 3, "imperfect"), (12, 0, "perfect"), (20, 2, "imperfect")])
        2
    """
    if not sizes:
        return None
    for want in (
        lambda n, d, c: c == "imperfect" and 8 <= n <= 40 and d > 0,
        lambda n, d, c: 8 <= n <= 40,
    ):
        hit = next((i for i, s in enumerate(sizes) if want(*s)), None)
        if hit is not None:
            return hit
    return min(range(len(sizes)), key=lambda i: sizes[i][0])
