"""Reading the one trajectory behind a scored record, on demand, from its ``source``.

A scored JSONL record (``dagmath score`` output) carries no steps, only ``source``: the
file it was read from and the place in it, as :func:`dagmath_viz.formats.records.parse_record`
wrote it: ``FILE:item 2``, ``FILE:line 7``, ``FILE:line 7, item 2`` or ``FILE[3]`` (the
record's position when the file gave no location). This module finds that file again
(as written when absolute, else under the folders the data were opened from), reads that
one file and returns the matching trajectory, so the app never holds every source in memory.

A ``source`` is model-supplied text in someone else's scored file, so it is confined: only
a regular file whose real path (links followed) lies inside the folders the user named
(the app's ``--data`` paths or its upload folder, the command's inputs; a named file counts
as its folder) is ever opened. Anything else (``/etc/passwd``, a path outside, a FIFO or a
device, a missing file) gets the same answer, ``source file not found: FILE``, so the
answer tells nothing about what exists outside those folders.

Dead ends of scored records are listed from the records' own ``dead_ends``; their
categories need the steps, so they are computed when the source can be read and are
``unknown`` otherwise (:func:`scored_dead_end_table`).
"""

from __future__ import annotations

import os
import re
import stat
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dagmath_viz import jsonio
from dagmath_viz.formats.common import is_sample_id
from dagmath_viz.formats.discovery import gathered_targets
from dagmath_viz.formats.records import RECORD_MARKERS, parse_record
from dagmath_viz.formats.registry import (
    DOCUMENT_PLACES,
    ITEM_PLACE,
    documents_of,
    file_context,
    format_of,
    load_file,
)
from dagmath_viz.formats.scored import is_scored
from dagmath_viz.schema import InputError, Trajectory

__all__ = [
    "AUTO_SOURCE_FILES",
    "SourceRef",
    "SourceReader",
    "missing_sources",
    "parse_source",
    "trajectory_bytes",
]

_DOC = "|".join(DOCUMENT_PLACES)
_WORDS = "|".join((*DOCUMENT_PLACES, ITEM_PLACE))
_NUMBER = "[0-9]{1,18}"
_LOCATION = re.compile(
    rf"^(?P<file>.+?):(?P<where>(?:(?:{_DOC}) {_NUMBER}, )?(?:{_WORDS}) {_NUMBER})$"
)
_POSITION = re.compile(r"^(?P<file>.+)\[(?P<pos>[0-9]{1,18})\]$")
#: (A number in a source has at most 18 ASCII digits: it comes from the record, model-supplied
#: text, and ``int()`` refuses more than 4,300 digits; a source not matching is a bare file.)
#: A place a record can be read from alone: ``item 2``, ``line 7`` or ``line 7, item 2``.
_PLACE = re.compile(
    rf"^(?:(?P<doc>(?:{_DOC}) {_NUMBER})(?:, )?)?(?:{ITEM_PLACE} (?P<item>{_NUMBER}))?$"
)
#: Bytes allowed per step and per trajectory beyond their text (:func:`trajectory_bytes`).
_PER_STEP = 400
_PER_TRAJECTORY = 2000
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


def _allowed_folders(roots: Sequence[str | Path]) -> tuple[str, ...]:
    """The real paths of the folders the user named (a named file: its folder), and what a
    named folder of nothing but links gathers (the walk reads those as named)."""
    out = []
    for root in roots:
        real = os.path.realpath(Path(root).expanduser())
        if os.path.isdir(real):
            out.append(real)
            out.extend(str(t) for t in gathered_targets(Path(real)))
        else:
            out.append(os.path.dirname(real))
    return tuple(dict.fromkeys(out))


def _candidates(file: str, folders: Sequence[str]) -> list[Path]:
    """Where a source file may be: as written when absolute, else under each named folder.

    ``dagmath score DIR`` writes paths as given on its command line (often relative to
    where it ran), so a scored file opened elsewhere finds them next to itself.
    """
    path = Path(file)
    if path.is_absolute():
        return [path]
    return [Path(folder) / path for folder in folders]


def _inside(real: str, folders: Sequence[str]) -> bool:
    return any(real == f or real.startswith(f.rstrip(os.sep) + os.sep) for f in folders)


class SourceReader:
    """Reads trajectories back from their sources, one record at a time, keeping a few.

    A record whose source names its place (``item 2``, ``line 7``, ``line 7, item 2``) in
    a file of JSON records is read alone: the file's JSON is parsed, and only that record
    is made a :class:`Trajectory` (a file of 32 samples of 300 steps is ~5 MB of JSON).
    The parsed JSON of the last file read is kept, so listing many records of one file
    (the Dead ends page) parses it once. Any other source (no place, a Thought Anchors
    folder, a record that is no longer where it was scored) is found by reading its whole
    file, as :func:`dagmath_viz.formats.registry.load_file` does.

    Args:
        roots: folders (or files) the scored data were opened from: the only places a
            source is read from (a file: its folder); relative source paths are looked
            for under them. No roots: no source is read.
        max_bytes: about how much memory the trajectories kept may take (their text plus a
            per-step allowance); the least recently read go first. The last file's parsed
            JSON is kept only when its file is at most a quarter of this.
    """

    def __init__(self, roots: Sequence[str | Path] = (), max_bytes: int = 32 * 2**20) -> None:
        self.roots = tuple(roots)
        self._folders = _allowed_folders(self.roots)
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
        """The regular file inside the named folders that a source file names, or ``None``
        (missing, outside them, or not a regular file alike: nothing is opened)."""
        for candidate in _candidates(file, self._folders):
            try:
                real = os.path.realpath(candidate)
                if _inside(real, self._folders) and stat.S_ISREG(os.stat(real).st_mode):
                    return candidate  # by the name it was scored under (model, dataset)
            except (OSError, ValueError):  # ValueError: a NUL in the name
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
        if ref.location is None or not (m := _PLACE.match(ref.location)):
            return None
        found = format_of(path)
        if found is not None and found.record_form(path) is None:
            return None
        documents = self._documents(path)
        if documents is None:
            return None
        line = m["doc"] or ""
        doc = next((d for where, d in documents if where == line), None)
        if m["item"] is not None:
            i = int(m["item"]) - 1
            record = doc[i] if isinstance(doc, list) and i < len(doc) else None
        else:
            record = doc if m["doc"] and isinstance(doc, dict) else None
        # The record's position in the file only matters for a missing or bad sample_id.
        if (
            not isinstance(record, dict)
            or is_scored(record)
            or not RECORD_MARKERS & record.keys()
            or not is_sample_id(record.get("sample_id"))
        ):
            return None
        traj, _issues = parse_record(record, str(path), ref.location, 0, context=file_context(path))
        if traj is None or (key is not None and traj.key != key):
            return None  # the file changed since it was scored: look for the key instead
        return traj

    def _documents(self, path: Path) -> list | None:
        """The file's JSON documents, ``(location, value)`` (the last file's are kept);
        ``None`` when it cannot be read or parsed (the whole-file reading reports why)."""
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
            documents = [tuple(d) for d in documents_of(path, data)]
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


def missing_sources(records: pd.DataFrame, reader: SourceReader) -> list[str]:
    """Source files named by ``records`` that cannot be found (each once, sorted)."""
    files = {ref.file for ref in map(parse_source, records["source"].dropna()) if ref}
    return sorted(f for f in files if reader.locate(f) is None)
