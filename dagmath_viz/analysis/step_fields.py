"""One trajectory's steps with the source's own per-step values, as a table.

Thought Anchors gives every chunk importance scores (counterfactual, resampling, forced),
``accuracy``, a ``summary`` and ``function_tags``; the loader keeps the tags on
:attr:`Step.tags` and the rest on :attr:`Step.fields`. :func:`step_fields_table` lays them
out one row per step, each value in a column of its own: numbers stay numbers (so a table
sorts them as numbers, not as text), everything else is text, and tags are joined.
"""

from __future__ import annotations

from collections.abc import Iterable
from numbers import Real
from typing import Any

import pandas as pd

from dagmath_viz.schema import Trajectory
from dagmath_viz.score import graph as g
from dagmath_viz.score.validation import validate
from dagmath_viz.text import plain, strip_emphasis

__all__ = ["EXCERPT_CHARS", "FIXED", "has_step_fields", "step_fields_table"]

#: How long a step's text excerpt may be (characters, ellipsis included).
EXCERPT_CHARS = 80
#: The table's first columns; the step's own values follow, ``tags`` first when any.
FIXED = ("step", "text", "dead end")


def has_step_fields(traj: Trajectory | None) -> bool:
    """True when any step of ``traj`` carries a field or a tag of its source.

    >>> from dagmath_viz.schema import Step
    >>> has_step_fields(Trajectory("m", "d", "1", 0, (Step(1, (), "x"),)))
    False
    >>> has_step_fields(Trajectory("m", "d", "1", 0, (Step(1, (), "x", fields=(("a", 1),)),)))
    True
    """
    return traj is not None and any(s.fields or s.tags for s in traj.steps)


def _is_number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _column(values: list[Any]) -> pd.Series:
    """Numbers as float (missing: NaN) when every present value is a number; else text
    (missing: None), so that one column never mixes types."""
    present = [v for v in values if v is not None]
    if present and all(_is_number(v) for v in present):
        return pd.Series([float("nan") if v is None else float(v) for v in values], dtype=float)
    return pd.Series([None if v is None else plain(str(v), 10_000) for v in values], dtype=object)


def _ids(ids: list[Any]) -> pd.Series:
    """Step ids as integers when they all are (so they sort 2 before 10), else as text."""
    if all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        return pd.Series(ids, dtype="int64")
    return pd.Series([str(i) for i in ids], dtype=object)


def step_fields_table(
    traj: Trajectory, dead_ends: Iterable[Any] | None = None, excerpt_chars: int = EXCERPT_CHARS
) -> pd.DataFrame:
    """One row per step, in the trajectory's order: ``step`` (its id: an integer when every
    id is one, else text), ``text`` (the start of its text on one line, markdown emphasis
    markers dropped: :func:`~dagmath_viz.text.strip_emphasis`), ``dead end``
    (``yes``/``no``), ``tags`` (joined with ", "; only when some step has tags), then each
    field the steps carry, named as the source names it, in the order first met.

    A field whose values are all numbers is a float column (a step without it: NaN);
    any other field is text. A field named like one of the first columns gets
    `` (field)`` after its name.

    Args:
        traj: the trajectory.
        dead_ends: the ids of its dead ends (as the scored record lists them); None works
            them out from the trajectory (DEFINITIONS: a step other than the last that no
            later step cites).
        excerpt_chars: the longest text excerpt.

    >>> from dagmath_viz.schema import Step
    >>> t = Trajectory("m", "d", "1", 0, (
    ...     Step(1, (), "Let x = 2", tags=("setup",), fields=(("importance", 0.5),)),
    ...     Step(2, (), "A dead end", fields=(("importance", -1), ("summary", "aside"))),
    ...     Step(3, (1,), "So x + 1 = 3")))
    >>> step_fields_table(t).to_dict("list")  # doctest: +NORMALIZE_WHITESPACE
    {'step': [1, 2, 3], 'text': ['Let x = 2', 'A dead end', 'So x + 1 = 3'],
     'dead end': ['no', 'yes', 'no'], 'tags': ['setup', '', ''],
     'importance': [0.5, -1.0, nan], 'summary': [None, 'aside', None]}
    """
    steps = traj.steps
    if dead_ends is None:
        graph = validate(traj).graph
        dead = {str(graph.ids[p]) for p in g.dead_end_positions(graph)}
    else:
        dead = {str(d) for d in dead_ends}
    table: dict[str, pd.Series] = {
        "step": _ids([s.step_id for s in steps]),
        # plain text: markdown emphasis markers dropped (**Final Answer** reads Final Answer)
        "text": pd.Series(
            [plain(strip_emphasis(s.text), excerpt_chars) for s in steps], dtype=object
        ),
        "dead end": pd.Series(["yes" if str(s.step_id) in dead else "no" for s in steps]),
    }
    if any(s.tags for s in steps):
        table["tags"] = pd.Series([", ".join(s.tags) for s in steps], dtype=object)
    values = [dict(s.fields) for s in steps]
    for name in dict.fromkeys(name for s in steps for name, _ in s.fields):
        column = f"{name} (field)" if name in table else name
        table[column] = _column([v.get(name) for v in values])
    return pd.DataFrame(table, index=pd.RangeIndex(len(steps)))
