"""Reading the one trajectory behind a scored record, on demand, from its ``source``.

A scored JSONL record (``dagmath score`` output) carries no steps, only ``source``: the
file it was read from and the place in it, as :func:`dagmath_viz.formats.loading.parse_record`
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
    "AUTO_SOURCE_FILES",
    "UNKNOWN",
    "SourceRef",
    "SourceReader",
    "dead_end_category_counts",
    "missing_sources",
    "parse_source",
    "scored_dead_end_table",
    "trajectory_bytes",
]

#: Category of a dead end whose trajectory's steps could not be read.
UNKNOWN = "unknown"
#: (A number in a source has at most 18 ASCII digits: it comes from the record, model-supplied
#: text, and ``int()`` refuses more than 4,300 digits; a source not matching is a bare file.)
_LOCATION = re.compile(
    r"^(?P<file>.+?):(?P<where>(?:line [0-9]{1,18}, )?(?:line|item) [0-9]{1,18})$"
)
_POSITION = re.compile(r"^(?P<file>.+)\[(?P<pos>[0-9]{1,18})\]$")
#: A place a record can be read from alone: ``item 2``, ``line 7`` or ``line 7, item 2``.
_PLACE = re.compile(r"^(?:line (?P<line>[0-9]{1,18})(?:, )?)?(?:item (?P<item>[0-9]{1,18}))?$")
#: Bytes allowed per step and per trajectory beyond their text (:func:`trajectory_bytes`).
_PER_STEP = 400
_PER_TRAJECTORY = 2000
#: Records read back between two ``progress`` calls of :func:`scored_dead_end_table`.
PROGRESS_EVERY = 200
#: The Dead ends page reads scored records' sources by itself up to this many files;
#: above it, on request (a raw folder of 100,000 trajectories is thousands of files).
AUTO_SOURCE_FILES = 200


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
    """Reads trajectories back from their sources, one record at a time, keeping a few.

    A record whose source names its place (``item 2``, ``line 7``, ``line 7, item 2``) in
    a file of JSON records is read alone: the file's JSON is parsed, and only that record
    is made a :class:`Trajectory` (a file of 32 samples of 300 steps is ~5 MB of JSON).
    The parsed JSON of the last file read is kept, so listing many records of one file
    (the Dead ends page) parses it once. Any other source (no place, a Thought Anchors
    folder, a record that is no longer where it was scored) is found by reading its whole
    file, as :func:`dagmath_viz.formats.loading.load_file` does.

    Args:
        roots: folders (or files) the scored data were opened from; relative source
            paths are also looked for under them and their parents.
        max_bytes: about how much memory the trajectories kept may take (their text plus a
            per-step allowance); the least recently read go first. The last file's parsed
            JSON is kept only when its file is at most a quarter of this.
    """

    def __init__(self, roots: Sequence[str | Path] = (), max_bytes: int = 32 * 2**20) -> None:
        self.roots = tuple(roots)
        self.max_bytes = max_bytes
        self._kept: OrderedDict[tuple, tuple[Trajectory, int]] = OrderedDict()
        self._kept_bytes = 0
        self._document: tuple[tuple, list] | None = None  # (file signature, documents)
        self._lock = threading.Lock()  # one reader serves every session of a data source

    @property
    def kept_bytes(self) -> int:
        """The estimated size of the trajectories kept (at most :attr:`max_bytes`)."""
        return self._kept_bytes

    def locate(self, file: str) -> Path | None:
        """The existing path a source file names, or ``None``."""
        for candidate in _candidates(file, self.roots):
            try:
                if candidate.is_file():
                    return candidate
            except OSError:
                continue
        return None

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
        wanted = (str(path), ref.location, ref.position, None if key is None else tuple(key))
        with self._lock:
            hit = self._kept.get(wanted)
            if hit is not None:
                self._kept.move_to_end(wanted)
                return hit[0], None
            found = self._one_record(path, ref, wanted[3])
            if found is None:
                found, why = self._search_file(path, ref, wanted[3])
                if found is None:
                    return None, why
            self._keep(wanted, found)
        return found, None

    def _keep(self, wanted: tuple, traj: Trajectory) -> None:
        size = trajectory_bytes(traj)
        if size > self.max_bytes:
            return
        self._kept[wanted] = (traj, size)
        self._kept_bytes += size
        while self._kept_bytes > self.max_bytes:
            _, (_, gone) = self._kept.popitem(last=False)
            self._kept_bytes -= gone

    def _one_record(self, path: Path, ref: SourceRef, key: tuple | None) -> Trajectory | None:
        """The record at ``ref.location`` parsed alone, or ``None`` when that is not sure
        to give what reading the whole file gives (then the file is read whole)."""
        from dagmath_viz.formats.loading import (
            RECORD_MARKERS,
            _is_sample_id,
            file_context,
            is_scored,
            layout_of,
            parse_record,
        )

        if ref.location is None or not (m := _PLACE.match(ref.location)):
            return None
        layout = layout_of(path)
        if layout is not None and not layout.records:
            return None
        documents = self._documents(path)
        if documents is None:
            return None
        line = f"line {m['line']}" if m["line"] else ""
        doc = next((d for where, d in documents if where == line), None)
        if m["item"] is not None:
            i = int(m["item"]) - 1
            record = doc[i] if isinstance(doc, list) and i < len(doc) else None
        else:
            record = doc if m["line"] and isinstance(doc, dict) else None
        # The record's position in the file only matters for a missing or bad sample_id.
        if (
            not isinstance(record, dict)
            or is_scored(record)
            or not RECORD_MARKERS & record.keys()
            or not _is_sample_id(record.get("sample_id"))
        ):
            return None
        traj, _issues = parse_record(record, str(path), ref.location, 0, context=file_context(path))
        if traj is None or (key is not None and traj.key != key):
            return None  # the file changed since it was scored: look for the key instead
        return traj

    def _documents(self, path: Path) -> list | None:
        """The file's JSON documents, ``(location, value)`` (the last file's are kept);
        ``None`` when it cannot be read or parsed (the whole-file reading reports why)."""
        from dagmath_viz import jsonio
        from dagmath_viz.schema import InputError

        try:
            stat = path.stat()
        except OSError:
            return None
        signature = (str(path), stat.st_mtime_ns, stat.st_size)
        if self._document is not None and self._document[0] == signature:
            return self._document[1]
        self._document = None  # before parsing: never two files' JSON at once
        try:
            data = jsonio.read_bytes(path)
            documents = [tuple(d) for d in jsonio.documents(path, data)]
        except InputError:
            return None
        del data
        if stat.st_size * 4 <= self.max_bytes:
            self._document = (signature, documents)
        return documents

    def _search_file(
        self, path: Path, ref: SourceRef, key: tuple | None
    ) -> tuple[Trajectory | None, str | None]:
        """Read the whole file and find the record by its place, else by ``key``."""
        from dagmath_viz.formats.loading import load_file

        trajectories, _scored, _issues = load_file(path)
        if not trajectories:
            return None, f"no trajectory could be read from {path}"
        found = None
        if ref.location is not None:
            suffix = f":{ref.location}"
            found = next((t for t in trajectories if t.source.endswith(suffix)), None)
        elif ref.position is not None:
            suffix = f"[{ref.position}]"
            found = next((t for t in trajectories if t.source.endswith(suffix)), None)
        if found is not None and key is not None and found.key != key:
            found = None  # the file changed since it was scored: trust the key instead
        if found is None and key is not None:
            found = next((t for t in trajectories if t.key == key), None)
        if found is None and ref.location is None and ref.position is None:
            found = trajectories[0] if len(trajectories) == 1 else None
        if found is None:
            where = ref.location or (f"position {ref.position}" if ref.position is not None else "")
            return None, f"{path}: no trajectory at {where or 'the recorded place'} matches"
        return found, None


def trajectory_bytes(traj: Trajectory) -> int:
    """About how much memory a trajectory takes: its text, and an allowance per step for
    the step object, its id, parents and string headers (an estimate, not a measurement)."""
    text = sum(len(s.text) + len(s.justification) for s in traj.steps)
    return text + len(traj.problem_text) + _PER_STEP * len(traj.steps) + _PER_TRAJECTORY


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
        records: the scored frame (columns of :data:`dagmath_viz.score.reference.RECORD_FIELDS`).
        reader: reads sources back; ``None`` leaves every category unknown.
        rows: positions (``iloc``) of the records to list; all by default.
        progress: ``progress(done, total)``, records with dead ends read back (every
            :data:`PROGRESS_EVERY` and at the end; only with a ``reader``): reading the
            sources of a 100,000-trajectory folder takes minutes, one file at a time.
    """
    from dagmath_viz.analysis.deadends import COLUMNS, categorise_dead_ends

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

    Columns: ``model``, every category of :data:`dagmath_viz.analysis.deadends.CATEGORIES`, then
    ``unknown`` if any dead end's category is unknown, then ``total`` (the sum of them all).
    """
    from dagmath_viz.analysis.deadends import CATEGORIES

    cats = list(CATEGORIES) + ([UNKNOWN] if (table["category"] == UNKNOWN).any() else [])
    counts = table.groupby(["model", "category"]).size().unstack("category", fill_value=0)
    counts = counts.reindex(columns=cats, fill_value=0)
    counts["total"] = counts.sum(axis=1)
    counts.columns.name = None
    return counts.reset_index()
