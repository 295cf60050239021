"""Labels a researcher puts on steps or whole trajectories, in a JSONL sidecar file.

One label a line, keyed by model, dataset, problem, sample and step (``step_id`` null for
the whole trajectory), with a label name from the user's own small set and an optional
note. The file is never rewritten: adding or removing a label appends one line
(:func:`add_label`, :func:`remove_label`; a removal is a line with ``"removed": true``), so a
crash, a second writer or a bad line elsewhere cannot lose what is there. Reading
(:func:`read_labels`) folds the lines in order (the last line for a key and label wins)
and reports each malformed or foreign line by file and line, skipping it.

The first line of a file this module creates is a header, ``{"dagmath_labels": 1}``; it
appends only to files that have it, so a label is never written into a data file named
by mistake.

Agreement of two files (:func:`agreement`): over the items (trajectories or steps) both
labelled, each item's category being its set of labels, the percent agreement and Cohen's
kappa; the items only one of them labelled are counted apart.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from dagmath_viz import jsonio
from dagmath_viz.formats.registry import LABEL_SIDECAR, LABEL_SUFFIX, format_of
from dagmath_viz.schema import InputError, LoadIssue
from dagmath_viz.text import printable

__all__ = [
    "HEADER",
    "MAX_LABEL",
    "MAX_NOTE",
    "SIDECAR_NAME",
    "Agreement",
    "Label",
    "LabelFile",
    "add_label",
    "agreement",
    "label_counts",
    "labels_of_rows",
    "labels_within",
    "make_label",
    "read_labels",
    "remove_label",
    "sidecar_path",
]

#: The header line of a label file.
HEADER = {"dagmath_labels": 1}
#: Longest label name, and longest note, in characters.
MAX_LABEL = 40
MAX_NOTE = 2000
#: The sidecar's name inside a data folder (beside a data file: ``<file>.labels.jsonl``).
SIDECAR_NAME = LABEL_SIDECAR  # the folder walk skips it (formats/registry.py)

_KEY = ("model", "dataset", "problem_id", "sample_id")


@dataclass(frozen=True, slots=True)
class Label:
    """One label on a step (``step_id``) or on a whole trajectory (``step_id`` None)."""

    model: str
    dataset: str
    problem_id: str
    sample_id: int
    step_id: int | str | None
    label: str
    note: str = ""
    removed: bool = False

    @property
    def item(self) -> tuple[str, str, str, int, int | str | None]:
        """What is labelled: the trajectory's key and the step (None: the trajectory)."""
        return (self.model, self.dataset, self.problem_id, self.sample_id, self.step_id)

    def line(self) -> bytes:
        """The label as one JSON line (with the time it was written)."""
        at = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        record: dict[str, Any] = {k: getattr(self, k) for k in (*_KEY, "step_id", "label")}
        if self.note:
            record["note"] = self.note
        if self.removed:
            record["removed"] = True
        record["at"] = at
        return jsonio.dumps(record, newline=True)


@dataclass(frozen=True)
class LabelFile:
    """The labels of one file as they stand, and every line that could not be read."""

    path: str
    labels: tuple[Label, ...] = ()
    issues: tuple[LoadIssue, ...] = ()
    lines: int = 0
    has_header: bool = False
    _by_trajectory: dict[tuple, list[Label]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        for lab in self.labels:
            self._by_trajectory.setdefault(lab.item[:4], []).append(lab)

    def for_trajectory(self, rec: Mapping[str, Any]) -> tuple[tuple[Any, str, str], ...]:
        """(step id or None, label, note) of a trajectory's labels, given its scored row."""
        try:
            key = (str(rec["model"]), str(rec["dataset"]), str(rec["problem_id"]))
            found = self._by_trajectory.get((*key, int(rec["sample_id"])), [])
        except (KeyError, TypeError, ValueError):
            return ()
        return tuple((lab.step_id, lab.label, lab.note) for lab in found)

    def frame(self) -> pd.DataFrame:
        """The labels as a table (one row each), e.g. to join with the scored table."""
        cols = [*_KEY, "step_id", "label", "note"]
        rows = [[getattr(lab, c) for c in cols] for lab in self.labels]
        return pd.DataFrame(rows, columns=cols)


# --------------------------------------------------------------------------- making and writing


def make_label(
    model: Any,
    dataset: Any,
    problem_id: Any,
    sample_id: Any,
    label: Any,
    *,
    step_id: Any = None,
    note: Any = "",
    removed: bool = False,
) -> Label:
    """A validated :class:`Label`.

    Raises:
        InputError: a key part, the label or the note is not what a label file holds.

    Example:
        >>> make_label("m", "d", 7, 0, "wrong step", step_id=3).item
        ('m', 'd', '7', 0, 3)
    """
    texts = {"model": model, "dataset": dataset, "problem_id": problem_id}
    for name, value in texts.items():
        if isinstance(value, bool) or not isinstance(value, (str, int)) or str(value) == "":
            raise InputError(f"{name} must be a non-empty string, got {_shown(value)}")
    if isinstance(sample_id, bool) or not isinstance(sample_id, int):
        raise InputError(f"sample_id must be an integer, got {_shown(sample_id)}")
    if step_id is not None and (
        isinstance(step_id, bool)
        or not isinstance(step_id, (int, str))
        or (isinstance(step_id, str) and not 0 < len(step_id) <= MAX_LABEL)
    ):
        raise InputError(
            f"step_id must be an integer, a short string or null, got {_shown(step_id)}"
        )
    name = label.strip() if isinstance(label, str) else ""
    if not name or len(name) > MAX_LABEL or printable(name, one_line=True) != name:
        raise InputError(
            f"a label is a name of 1 to {MAX_LABEL} printable characters, got {_shown(label)}"
        )
    if not isinstance(note, str) or len(note) > MAX_NOTE:
        raise InputError(f"a note is text of at most {MAX_NOTE:,} characters")
    return Label(
        str(model), str(dataset), str(problem_id), sample_id, step_id, name, note, bool(removed)
    )


def add_label(path: str | Path, label: Label) -> None:
    """Append ``label`` to the label file ``path`` (created, with its header, if missing).

    One ``write`` of whole lines, so concurrent writers never interleave; the file is never
    rewritten. A last line without its newline (a write cut short) gets one first, so the
    new label never joins it.

    Raises:
        InputError: ``path`` exists but is not a label file (no header on its first line).
        OSError: it cannot be written.
    """
    path = Path(path)
    data = label.line()
    tail = _tail(path)
    if not tail:  # no file, or an empty one: it becomes a label file
        data = jsonio.dumps(HEADER, newline=True) + data
    else:
        if not _has_header(path):
            raise InputError(
                f'{path}: not a label file (its first line is not {{"dagmath_labels": 1}}); '
                "labels are never written into other files"
            )
        if tail != b"\n":
            data = b"\n" + data
    jsonio.append_lines(path, data)


def remove_label(path: str | Path, label: Label) -> None:
    """Append a line that removes ``label`` (same item and name); the old line stays."""
    model, dataset, problem, sample, step = label.item
    add_label(
        path, make_label(model, dataset, problem, sample, label.label, step_id=step, removed=True)
    )


def sidecar_path(data: str | Path) -> Path:
    """Where the labels of a data folder or file live by default: beside the data, never in it.

    >>> sidecar_path("runs/model-a").name, sidecar_path("runs/scored.jsonl").name
    ('dagmath-labels.jsonl', 'scored.jsonl.labels.jsonl')
    """
    data = Path(data)
    if data.is_file() or format_of(data) is not None:  # a data file, there or not yet
        return data.with_name(data.name + LABEL_SUFFIX)
    return data / SIDECAR_NAME


def _tail(path: Path) -> bytes | None:
    """The file's last byte (b"" when empty), or None when there is no file."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            if handle.tell() == 0:
                return b""
            handle.seek(-1, os.SEEK_END)
            return handle.read(1)
    except FileNotFoundError:
        return None


def _has_header(path: Path) -> bool:
    with path.open("rb") as handle:
        first = handle.readline(4096)
    try:
        return jsonio.parse(first) == HEADER
    except InputError:
        return False


# --------------------------------------------------------------------------- reading


def read_labels(path: str | Path, *, missing_ok: bool = False) -> LabelFile:
    """The labels of a file as they stand, every bad line reported (file and line), skipped.

    Raises:
        InputError: the file does not exist (unless ``missing_ok``) or cannot be read.
    """
    name = str(path)
    if missing_ok and not Path(path).exists():
        return LabelFile(name)
    issues: list[LoadIssue] = []
    current: dict[tuple, Label] = {}
    header, count = False, 0
    for count, doc in enumerate(jsonio.read_jsonl(path), start=1):
        value = doc.value
        if isinstance(value, InputError):
            issues.append(LoadIssue(name, doc.location, f"not JSON: {value}"))
            continue
        if value == HEADER:
            header = header or count == 1
            continue
        try:
            lab = _label_of(value)
        except InputError as exc:
            issues.append(LoadIssue(name, doc.location, f"not a label: {exc}"))
            continue
        slot = (*lab.item, lab.label)
        current.pop(slot, None)  # the last line for a key and label wins, in its place
        if not lab.removed:
            current[slot] = lab
    if count and not header:
        issues.insert(0, LoadIssue(name, "line 1", "no label-file header", severity="warning"))
    return LabelFile(name, tuple(current.values()), tuple(issues), count, header)


def _label_of(value: Any) -> Label:
    if not isinstance(value, dict):
        raise InputError(f"a label line is a JSON object, got {type(value).__name__}")
    missing = [k for k in (*_KEY, "label") if k not in value]
    if missing:
        raise InputError(f"missing {', '.join(missing)}")
    return make_label(
        value["model"],
        value["dataset"],
        value["problem_id"],
        value["sample_id"],
        value["label"],
        step_id=value.get("step_id"),
        note=value.get("note") or "",
        removed=value.get("removed") is True,
    )


def _shown(value: Any) -> str:
    return printable(repr(value)[:60], one_line=True)


# --------------------------------------------------------------------------- counting


def label_counts(
    files: Iterable[LabelFile], by: Sequence[str] = (), scored: pd.DataFrame | None = None
) -> pd.DataFrame:
    """How often each label is used: ``labels`` (lines standing), ``trajectories`` (distinct
    trajectories carrying it, on a step or whole) and ``steps`` (distinct labelled steps).

    ``by`` adds grouping columns of the label key (``model``, ``dataset``, ...) or, when
    ``scored`` is given, of the scored table (``class``, ...), joined on the trajectory key.
    """
    frames = [f.frame() for f in files]
    labels = pd.concat(frames, ignore_index=True) if frames else LabelFile("").frame()
    by = list(by)
    extra = [c for c in by if c not in labels.columns]
    if extra:
        if scored is None or any(c not in scored.columns for c in extra):
            raise InputError(f"cannot group labels by {', '.join(extra)}")
        keys = scored[list(_KEY) + extra].copy()
        keys["problem_id"] = keys["problem_id"].astype(str)
        keys["sample_id"] = keys["sample_id"].astype("int64")
        keys = keys.drop_duplicates(list(_KEY))
        labels = labels.merge(keys, on=list(_KEY), how="left")
    group = [*by, "label"]
    columns = [*group, "labels", "trajectories", "steps"]
    if labels.empty:
        return pd.DataFrame(columns=columns)
    labels = labels.assign(
        trajectory=list(zip(*(labels[k] for k in _KEY), strict=True)),
        step=[
            None if s is None or pd.isna(s) else (t, s)
            for t, s in zip(
                zip(*(labels[k] for k in _KEY), strict=True), labels["step_id"], strict=True
            )
        ],
    )
    out = (
        labels.groupby(group, dropna=False, sort=True)
        .agg(
            labels=("label", "size"),
            trajectories=("trajectory", "nunique"),
            steps=("step", lambda s: s.dropna().nunique()),
        )
        .reset_index()
    )
    return out[columns]


def labels_within(labels: LabelFile, scored: pd.DataFrame) -> tuple[LabelFile, int]:
    """The labels of ``labels`` whose trajectory is a row of ``scored``, and how many were
    left out: a report over some data counts only the labels on that data.

    Example:
        >>> f = LabelFile("x", tuple(make_label("m", "d", p, 0, "a") for p in ("1", "2")))
        >>> kept, outside = labels_within(f, pd.DataFrame({"model": ["m"], "dataset": ["d"],
        ...                                     "problem_id": [1], "sample_id": [0]}))
        >>> len(kept.labels), outside
        (1, 1)
    """
    loaded = set(
        zip(
            scored["model"].astype(str),
            scored["dataset"].astype(str),
            scored["problem_id"].astype(str),
            (int(s) for s in scored["sample_id"]),
            strict=True,
        )
    )
    kept = tuple(lab for lab in labels.labels if lab.item[:4] in loaded)
    found = LabelFile(labels.path, kept, labels.issues, labels.lines, labels.has_header)
    return found, len(labels.labels) - len(kept)


# --------------------------------------------------------------------------- agreement


@dataclass(frozen=True, slots=True)
class Agreement:
    """How two label files agree on the items both labelled (see the module docstring)."""

    both: int
    only_a: int
    only_b: int
    agreed: int
    percent: float | None
    kappa: float | None


def agreement(a: LabelFile, b: LabelFile) -> Agreement:
    """Percent agreement and Cohen's kappa of two label files, over the items both labelled.

    Each item's category is its set of labels (``{"wrong step"}`` and ``{"wrong step",
    "interesting"}`` differ). Kappa = (p_o − p_e) / (1 − p_e), with p_e from each file's
    own category frequencies over those items; None when no item is shared, or when p_e
    is 1 (both files give every shared item the one same category: nothing to chance-correct).

    Example:
        >>> def f(*pairs):
        ...     return LabelFile("x", tuple(make_label("m", "d", "1", 0, lab, step_id=s)
        ...                                 for s, lab in pairs))
        >>> agreement(f((1, "ok"), (2, "bad")), f((1, "ok"), (2, "ok"), (3, "ok")))
        Agreement(both=2, only_a=0, only_b=1, agreed=1, percent=0.5, kappa=0.0)
    """
    cats_a, cats_b = _categories(a), _categories(b)
    shared = [item for item in cats_a if item in cats_b]
    only_a = sum(1 for item in cats_a if item not in cats_b)
    only_b = sum(1 for item in cats_b if item not in cats_a)
    if not shared:
        return Agreement(0, only_a, only_b, 0, None, None)
    n = len(shared)
    agreed = sum(cats_a[i] == cats_b[i] for i in shared)
    p_o = agreed / n
    freq_a = Counter(cats_a[i] for i in shared)
    freq_b = Counter(cats_b[i] for i in shared)
    p_e = sum(freq_a[c] * freq_b.get(c, 0) for c in freq_a) / (n * n)
    kappa = None if p_e >= 1 else (p_o - p_e) / (1 - p_e)
    return Agreement(n, only_a, only_b, agreed, p_o, kappa)


def _categories(labels: LabelFile) -> dict[tuple, frozenset[str]]:
    found: dict[tuple, set[str]] = {}
    for lab in labels.labels:
        found.setdefault(lab.item, set()).add(lab.label)
    return {item: frozenset(names) for item, names in found.items()}


# --------------------------------------------------------------------------- tables


def labels_of_rows(
    frame: pd.DataFrame,
    labels: LabelFile,
    keys: Sequence[str] = ("model", "dataset", "problem", "sample"),
    step: str | None = None,
) -> list[tuple[str, ...]]:
    """The label names on each row of a table of trajectories (or, with ``step``, of
    steps: a step's own labels and its trajectory's whole-trajectory ones), sorted.

    ``keys`` name the table's columns for model, dataset, problem and sample.

    Example:
        >>> f = LabelFile("x", (make_label("m", "d", "1", 0, "odd", step_id=2),))
        >>> rows = pd.DataFrame({"model": ["m", "m"], "dataset": ["d", "d"],
        ...                      "problem": ["1", "2"], "sample": [0, 0]})
        >>> labels_of_rows(rows, f)
        [('odd',), ()]
    """
    anywhere: dict[tuple, set[str]] = {}  # trajectory -> labels on it or on any of its steps
    whole: dict[tuple, set[str]] = {}  # trajectory -> whole-trajectory labels
    on_step: dict[tuple, set[str]] = {}  # (trajectory, step) -> that step's labels
    for lab in labels.labels:
        anywhere.setdefault(lab.item[:4], set()).add(lab.label)
        if lab.step_id is None:
            whole.setdefault(lab.item[:4], set()).add(lab.label)
        else:
            on_step.setdefault(lab.item, set()).add(lab.label)
    out: list[tuple[str, ...]] = []
    columns = [frame[k] for k in keys] + ([frame[step]] if step is not None else [])
    for values in zip(*columns, strict=True):
        row = (str(values[0]), str(values[1]), str(values[2]), _int_or_none(values[3]))
        if step is None:
            found = anywhere.get(row, set())
        else:
            found = on_step.get((*row, values[4]), set()) | whole.get(row, set())
        out.append(tuple(sorted(found)))
    return out


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
