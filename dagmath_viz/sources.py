"""Reading the one trajectory behind a scored record, on demand, from its ``source``.

A scored JSONL record (``dagmath score`` output) carries no steps, only ``source``: the
file it was read from and the place in it, as :func:`dagmath_viz.loading.parse_record`
wrote it: ``FILE:item 2``, ``FILE:line 7``, ``FILE:line 7, item 2`` or ``FILE[3]`` (the
record's position when the file gave no location). This module finds that file again
(as written, or relative to the folders the scored file was opened from), reads that one
file and returns the matching trajectory, so the app never holds every source in memory.

Dead ends of scored records are listed from the records' own ``dead_ends``; their
categories need the steps, so they are computed when the source can be read and are
``unknown`` otherwise (:func:`scored_dead_end_table`).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dagmath_viz.schema import Trajectory

__all__ = [
    "UNKNOWN",
    "SourceRef",
    "SourceReader",
    "dead_end_category_counts",
    "missing_sources",
    "parse_source",
    "scored_dead_end_table",
]

#: Category of a dead end whose trajectory's steps could not be read.
UNKNOWN = "unknown"
_LOCATION = re.compile(r"^(?P<file>.+?):(?P<where>(?:line \d+, )?(?:line|item) \d+)$")
_POSITION = re.compile(r"^(?P<file>.+)\[(?P<pos>\d+)\]$")
#: Records read back between two ``progress`` calls of :func:`scored_dead_end_table`.
PROGRESS_EVERY = 200


@dataclass(frozen=True, slots=True)
class SourceRef:
    """A parsed ``source``: the file as written and the place in it (``None``: unknown)."""

    file: str
    location: str | None = None
    position: int | None = None


def parse_source(source: str) -> SourceRef | None:
    """Split a record's ``source`` into its file and place; ``None`` for an empty source.

    >>> parse_source("runs/m/d/problem_3_all_samples.json:item 2")
    SourceRef(file='runs/m/d/problem_3_all_samples.json', location='item 2', position=None)
    >>> parse_source("a/b.jsonl[4]")
    SourceRef(file='a/b.jsonl', location=None, position=4)
    """
    if not isinstance(source, str) or not source.strip():
        return None
    source = source.strip()
    if m := _LOCATION.match(source):
        return SourceRef(m["file"], location=m["where"])
    if m := _POSITION.match(source):
        return SourceRef(m["file"], position=int(m["pos"]))
    return SourceRef(source)


def _candidates(file: str, roots: Sequence[str | Path]) -> list[Path]:
    """Where a source file may be: as written, then under each root and its parents.

    ``dagmath score DIR`` writes paths as given on its command line (often relative to
    where it ran), so a scored file opened elsewhere finds them next to itself or a few
    folders up.
    """
    path = Path(file).expanduser()
    if path.is_absolute():
        return [path]
    out = [path]
    for root in roots:
        base = Path(root).expanduser()
        base = base if base.is_dir() else base.parent
        for folder in (base, *list(base.parents)[:4]):
            out.append(folder / path)
    return out


class SourceReader:
    """Reads trajectories back from their sources, keeping the last few files read.

    Args:
        roots: folders (or files) the scored data were opened from; relative source
            paths are also looked for under them and their parents.
        max_files: how many parsed files to keep (memory stays bounded by this).
    """

    def __init__(self, roots: Sequence[str | Path] = (), max_files: int = 8) -> None:
        self.roots = tuple(roots)
        self.max_files = max_files
        self._files: OrderedDict[Path, list[Trajectory]] = OrderedDict()
        self._lock = threading.Lock()  # one reader serves every session of a data source

    def locate(self, file: str) -> Path | None:
        """The existing path a source file names, or ``None``."""
        for candidate in _candidates(file, self.roots):
            try:
                if candidate.is_file():
                    return candidate
            except OSError:
                continue
        return None

    def _trajectories(self, path: Path) -> list[Trajectory]:
        from dagmath_viz.loading import load_file

        if path in self._files:
            self._files.move_to_end(path)
            return self._files[path]
        trajectories, _scored, _issues = load_file(path)
        self._files[path] = trajectories
        while len(self._files) > self.max_files:
            self._files.popitem(last=False)
        return trajectories

    def read(
        self, source: str, key: tuple[str, str, str, int] | None = None
    ) -> tuple[Trajectory | None, str | None]:
        """The trajectory a record's ``source`` names, or ``(None, why not)``.

        The record is found by its place in the file; failing that, by ``key``
        (model, dataset, problem_id, sample_id). The reason names the missing path.
        """
        ref = parse_source(source)
        if ref is None:
            return None, "the record names no source file"
        path = self.locate(ref.file)
        if path is None:
            return None, f"source file not found: {ref.file}"
        with self._lock:
            trajectories = self._trajectories(path)
        if not trajectories:
            return None, f"no trajectory could be read from {path}"
        found = None
        if ref.location is not None:
            suffix = f":{ref.location}"
            found = next((t for t in trajectories if t.source.endswith(suffix)), None)
        elif ref.position is not None:
            suffix = f"[{ref.position}]"
            found = next((t for t in trajectories if t.source.endswith(suffix)), None)
        if found is not None and key is not None and found.key != tuple(key):
            found = None  # the file changed since it was scored: trust the key instead
        if found is None and key is not None:
            found = next((t for t in trajectories if t.key == tuple(key)), None)
        if found is None and ref.location is None and ref.position is None:
            found = trajectories[0] if len(trajectories) == 1 else None
        if found is None:
            where = ref.location or (f"position {ref.position}" if ref.position is not None else "")
            return None, f"{path}: no trajectory at {where or 'the recorded place'} matches"
        return found, None


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
        records: the scored frame (columns of :data:`dagmath_viz.scoring.RECORD_FIELDS`).
        reader: reads sources back; ``None`` leaves every category unknown.
        rows: positions (``iloc``) of the records to list; all by default.
        progress: ``progress(done, total)``, records with dead ends read back (every
            :data:`PROGRESS_EVERY` and at the end; only with a ``reader``): reading the
            sources of a 100,000-trajectory folder takes minutes, one file at a time.
    """
    from dagmath_viz.deadends import COLUMNS, categorise_dead_ends

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


def missing_sources(records: pd.DataFrame, reader: SourceReader) -> list[str]:
    """Source files named by ``records`` that cannot be found (each once, sorted)."""
    files = {ref.file for ref in map(parse_source, records["source"].dropna()) if ref}
    return sorted(f for f in files if reader.locate(f) is None)


def dead_end_category_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Dead ends per model and category, :data:`UNKNOWN` included when present, and total.

    Columns: ``model``, every category of :data:`dagmath_viz.deadends.CATEGORIES`, then
    ``unknown`` if any dead end's category is unknown, then ``total`` (the sum of them all).
    """
    from dagmath_viz.deadends import CATEGORIES

    cats = list(CATEGORIES) + ([UNKNOWN] if (table["category"] == UNKNOWN).any() else [])
    counts = table.groupby(["model", "category"]).size().unstack("category", fill_value=0)
    counts = counts.reindex(columns=cats, fill_value=0)
    counts["total"] = counts.sum(axis=1)
    counts.columns.name = None
    return counts.reset_index()
