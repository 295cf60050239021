"""Discovery: the folder walk that finds a run's data files and answer keys, and a whole load.

:func:`discover` walks the given paths, asks the registry which format claims each file
and reads the answer keys; :meth:`Discovery.read` reads one data file with the answer keys
that cover it; :func:`load_paths` does both for every file. Every problem met is a
:class:`LoadIssue` naming the file and the place; a bad file never stops the others from
loading, and a bad record never stops its file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dagmath_viz import jsonio
from dagmath_viz.formats.answer_keys import AnswerKey, AnswerKeys, load_answer_key
from dagmath_viz.formats.common import FileLoad, without_file
from dagmath_viz.formats.fieldmap import FieldMap
from dagmath_viz.formats.records import LINES
from dagmath_viz.formats.registry import (
    TRAJECTORY_FILES,
    Format,
    companion_data_file,
    format_of,
    load_file,
    map_warnings_summarised,
)
from dagmath_viz.formats.scored import starts_scored
from dagmath_viz.schema import InputError, LoadIssue, Trajectory

__all__ = ["NOT_READ", "Discovery", "LoadResult", "discover", "gathered_targets", "load_paths"]

#: Kinds of file a run never reads on its own: a format's companions, the label files.
_NOT_READ_KINDS = ("companion", "labels")
#: The kind of file read as data (its trajectories; a format's reader reads companions).
_DATA = "trajectories"
#: Why a file named on its own is skipped: no format reads it.
NOT_READ = f"not a {TRAJECTORY_FILES} file"


def load_paths(
    paths: Sequence[str | Path],
    answers: str | Path | AnswerKey | None = None,
    *,
    exclude: Sequence[str | Path] = (),
    fields: FieldMap | None = None,
) -> LoadResult:
    """Load every trajectory under ``paths`` (files or folders, read recursively).

    Reference answers come, in order of precedence, from ``answers``, from the record's
    ``answer``/``gold_answer`` field, from a gold file's ``final_answer``, and from the
    nearest ``answers.json|jsonl|csv`` in the record's folder or above it (within the
    given folder). Difficulty from an answer key fills records that lack one.

    Raises:
        InputError: the explicit ``answers`` file cannot be read.
    """
    found = discover(paths, answers, exclude=exclude, fields=fields)
    issues = list(found.issues)
    trajectories: list[Trajectory] = []
    scored: list[dict] = []
    for f in found.data_files:
        loaded = found.read(f)
        issues.extend(loaded.issues)
        scored.extend(loaded.scored)
        trajectories.extend(loaded.trajectories)
    return LoadResult(
        trajectories=tuple(trajectories),
        issues=tuple(map_warnings_summarised(found.fields, found.data_files, issues)),
        files_read=found.files_read,
        scored_records=tuple(scored),
    )


@dataclass(frozen=True, slots=True)
class LoadResult:
    """What a load produced: trajectories, pre-scored records, and every issue met."""

    trajectories: tuple[Trajectory, ...]
    issues: tuple[LoadIssue, ...]
    files_read: int
    scored_records: tuple[dict, ...] = ()

    @property
    def errors(self) -> tuple[LoadIssue, ...]:
        return tuple(i for i in self.issues if i.severity == "error")

    @property
    def unreadable_files(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(i.file for i in self.issues if i.location == "file"))


def discover(
    paths: Sequence[str | Path],
    answers: str | Path | AnswerKey | None = None,
    *,
    exclude: Sequence[str | Path] = (),
    fields: FieldMap | None = None,
) -> Discovery:
    """Find the data files and read the answer keys under ``paths``.

    Files are claimed by the formats of :data:`~dagmath_viz.formats.registry.FORMATS`;
    inside a folder, names starting with a dot (files and folders: a generator's journal,
    an editor's backup) are skipped, and a link leading outside the folder is refused. A
    companion refused so (or as no regular file) beside the data file that reads it is
    left for that file's reader to name (:func:`~dagmath_viz.formats.registry.companion_data_file`),
    so it is named once.
    ``exclude`` names files never to read (the run's own output): one met is skipped with a warning.

    Raises:
        InputError: the explicit ``answers`` file cannot be read.
    """
    explicit = load_answer_key(answers) if isinstance(answers, str | Path) else answers
    excluded = {Path(os.path.realpath(p)) for p in exclude if str(p) != "-"}
    data_files: list[Path] = []
    scored_files: set[Path] = set()
    companions: list[Path] = []
    answer_files: list[Path] = []
    issues: list[LoadIssue] = []
    for raw in paths:
        root = Path(raw)
        if not root.exists():
            issues.append(LoadIssue(str(root), "file", jsonio.NO_SUCH_FILE))
            continue
        if root.is_file():
            layout = format_of(root)
            if layout is None or layout.kind in _NOT_READ_KINDS:
                issues.append(LoadIssue(str(root), "file", f"skipped: {NOT_READ}"))
                continue
            candidates: list[tuple[Path, Format | None]] = [(root, layout)]
        else:
            found, refused = _walk(root)
            candidates = [(p, format_of(p)) for p in found]
            read = {p for p, layout in candidates if layout is not None and layout.kind == _DATA}
            # a companion whose data file is read is named by that file's reader (which
            # refuses it too): said here as well, it was named twice
            issues.extend(
                LoadIssue(str(p), "file", reason)
                for p, reason in refused
                if companion_data_file(p) not in read
            )
        for p, layout in candidates:
            if layout is not None and layout.kind == "companion":
                companions.append(p)  # read with its data file: a run's key must see it
            if layout is None or layout.kind in _NOT_READ_KINDS:
                continue
            if excluded and Path(os.path.realpath(p)) in excluded:
                issues.append(LoadIssue(str(p), "", "skipped: the output of this run", "warning"))
                continue
            if layout.kind == "answers":
                answer_files.append(p)
                continue
            data_files.append(p)
            if layout.record_form(p) == LINES and starts_scored(p):
                scored_files.add(p)
    by_folder: dict[Path, AnswerKey] = {}
    for f in answer_files:
        try:
            by_folder[f.parent.resolve()] = load_answer_key(f)
        except InputError as exc:
            issues.append(LoadIssue(str(f), "file", without_file(exc, f)))
    return Discovery(
        data_files=data_files,
        answers=AnswerKeys(explicit, by_folder),
        issues=issues,
        files_read=len(data_files) + len(answer_files),
        fields=fields,
        scored_files=frozenset(scored_files),
        companions=tuple(companions),
    )


@dataclass(frozen=True)
class Discovery:
    """What a run reads: its data files in order, answer keys, issues met, files read."""

    data_files: list[Path]
    answers: AnswerKeys
    issues: list[LoadIssue]
    files_read: int
    fields: FieldMap | None = None
    #: The data files of scored records (JSON Lines whose first line is a valid one): read
    #: as frames a slice at a time, not scored again.
    scored_files: frozenset[Path] = frozenset()
    #: The companions met in the walk (a Thought Anchors problem's ``base_solution.json``,
    #: an lm-eval results file): read with their data files, never on their own, so what a
    #: kept run was derived from includes them.
    companions: tuple[Path, ...] = ()

    @property
    def raw_bytes(self) -> int:
        """Bytes of the data files holding trajectories (scored records aside: read slice
        by slice anyway, they keep no steps); a file that cannot be looked at counts 0
        (its reader names it)."""
        total = 0
        for f in self.data_files:
            if f in self.scored_files:
                continue
            try:
                total += f.stat().st_size
            except OSError:
                pass
        return total

    def read(self, path: Path) -> FileLoad:
        """One of the data files, read (:func:`load_file`), its trajectories given the
        reference answers and difficulties of the answer keys that cover it."""
        loaded = load_file(path, self.fields)
        keys = self.answers.for_file(path)
        return loaded._replace(
            trajectories=[self.answers.apply(t, keys) for t in loaded.trajectories]
        )


def _walk(root: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Regular files under ``root`` (sorted), and what was refused or skipped, with why.

    Names starting with a dot are skipped, with everything under them. A folder named that
    holds nothing but links (one made to gather model folders kept elsewhere) is a list of
    what to read: each link is walked as if named itself (:func:`_links_folder`). Other
    links are never followed: one leading outside the folder is refused and named; one that
    stays inside adds nothing its target does not already hold (the target is read once, by
    its own name); a link to nothing is ignored like any broken link; a loop is named. A
    folder that cannot be listed, and anything that is not a regular file (a FIFO, a
    socket, a device), is named and skipped.
    """
    gathered = _links_folder(root)
    if gathered is not None:
        return gathered
    root_resolved = root.resolve()
    found: list[Path] = []
    refused: list[tuple[Path, str]] = []

    def unlistable(exc: OSError) -> None:
        refused.append((Path(exc.filename), f"skipped: cannot list the folder ({exc.strerror})"))

    for folder, dirs, files in os.walk(root, onerror=unlistable):
        # dot-files and dot-folders are private state (a generate run's journal, temporary
        # files, editor and VCS folders), never results
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        base = Path(folder)
        for name in [*dirs, *files]:
            p = base / name
            if name.startswith("."):
                continue
            if p.is_symlink():
                reason = _link_refusal(p, root, root_resolved)
                if reason:
                    refused.append((p, reason))
            elif name in files:
                if p.is_file():
                    found.append(p)
                else:
                    refused.append((p, "skipped: not a regular file"))
    found.sort()
    refused.sort(key=lambda item: item[0])
    return found, refused


def gathered_targets(root: Path) -> list[Path]:
    """The real paths a folder of nothing but links gathers (what :func:`_walk` reads as
    if named itself); empty for any other folder. Readers confined to the folders the user
    named (a scored record's source) count these as named too."""
    try:
        entries = [p for p in root.iterdir() if not p.name.startswith(".")]
    except OSError:
        return []
    if not entries or not all(p.is_symlink() for p in entries):
        return []
    targets = []
    for link in sorted(entries):
        try:
            targets.append(link.resolve(strict=True))
        except (OSError, RuntimeError):  # broken, or a loop: the walk reads nothing there
            continue
    return targets


def _links_folder(root: Path) -> tuple[list[Path], list[tuple[Path, str]]] | None:
    """The files of a folder whose entries (dot-names aside) are all links, each link walked
    as a folder named by the user, under the link's name (it names the model); None for
    any other folder. A link back to this folder or above it, or to a folder another link
    already leads into, is refused as a loop; links inside the targets follow the usual
    rules, each target being the folder they may not leave."""
    try:
        entries = sorted(p for p in root.iterdir() if not p.name.startswith("."))
    except OSError:
        return None
    if not entries or not all(p.is_symlink() for p in entries):
        return None
    here = root.resolve()
    found: list[Path] = []
    refused: list[tuple[Path, str]] = []
    seen: list[Path] = []
    for link in entries:
        try:
            target = link.resolve(strict=True)
        except (OSError, RuntimeError):  # broken (ignored, like any broken link) or a loop
            if link.exists() or not os.path.lexists(link):
                continue
            refused.append((link, "refused: a link that loops"))
            continue
        if here.is_relative_to(target) or any(
            target.is_relative_to(t) or t.is_relative_to(target) for t in seen
        ):
            refused.append((link, "refused: a link that loops (to a folder read already)"))
            continue
        seen.append(target)
        if target.is_file():
            found.append(link)
        elif target.is_dir():
            more, more_refused = _walk(link)
            found.extend(more)
            refused.extend(more_refused)
        else:
            refused.append((link, "skipped: not a regular file"))
    return found, refused


def _link_refusal(link: Path, root: Path, root_resolved: Path) -> str | None:
    """Why a link inside a data folder is named (None: it adds nothing, silently)."""
    try:
        target = link.resolve(strict=False)
    except (OSError, RuntimeError):  # Python 3.11 raises RuntimeError on a loop
        return "refused: a link that loops"
    if not target.is_relative_to(root_resolved):
        return (
            f"refused: a link leading outside the data folder {root}" if target.exists() else None
        )
    return None
