"""Uploaded files and archives, written safely to a private folder for loading.

Zip members are checked before anything is written: no absolute paths, no ``..``, no
links, and caps on the member count and the total uncompressed size (a zip bomb is refused
before it is inflated, and the inflated bytes are counted as they are written).
"""

from __future__ import annotations

import hashlib
import stat
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from dagmath_viz.schema import InputError, LoadIssue, UnsafePathError
from dagmath_viz.text import short_repr

__all__ = ["MAX_FILES", "MAX_TOTAL_BYTES", "UploadedFile", "materialise_uploads", "uploads_id"]

MAX_FILES = 20_000
MAX_TOTAL_BYTES = 2 * 1024**3
_DATA_SUFFIXES = (".json", ".jsonl", ".csv")
_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class UploadedFile:
    """A file's name (as the browser sent it) and its bytes."""

    name: str
    data: bytes


def uploads_id(files: Sequence[UploadedFile]) -> str:
    """A stable id of a set of uploads (names and contents)."""
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode("utf-8", "replace") + b"\0" + hashlib.sha256(f.data).digest())
    return h.hexdigest()[:16]


def _safe_member_path(name: str) -> PurePosixPath:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        raise UnsafePathError(
            f"member {short_repr(name, 200)} would be written outside the upload folder"
        )
    return path


def _extract_zip(data: bytes, name: str, dest: Path, budget: list[int]) -> list[LoadIssue]:
    import io

    issues: list[LoadIssue] = []
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except _MEMBER_ERRORS as exc:
        raise InputError(f"{name}: not a readable zip archive ({exc})") from None
    members = [m for m in archive.infolist() if not m.is_dir()]
    if len(members) > MAX_FILES:
        raise InputError(f"{name}: {len(members)} members; at most {MAX_FILES} are accepted")
    declared = sum(m.file_size for m in members)
    if declared > budget[0]:
        raise InputError(f"{name}: would inflate to {declared} bytes; the cap is {budget[0]}")
    for m in members:
        where = f"member {short_repr(m.filename, 200)}"
        try:
            rel = _safe_member_path(m.filename)
        except UnsafePathError as exc:
            issues.append(LoadIssue(name, where, f"refused: {exc}"))
            continue
        if stat.S_ISLNK(m.external_attr >> 16):
            issues.append(LoadIssue(name, where, "refused: symbolic link"))
            continue
        if rel.suffix.lower() not in _DATA_SUFFIXES:
            continue
        target = dest.joinpath(*rel.parts)
        try:
            _inflate(archive, m, target, budget)
        except _MEMBER_ERRORS as exc:
            # encrypted, an unknown compression, a bad CRC, a name that is not a valid path
            # here (too long, a file where a folder is needed): skip the member, say why
            _discard(target)
            issues.append(LoadIssue(name, where, f"skipped: cannot extract ({exc})"))
        except InputError:
            _discard(target)  # no half-written file is left to be loaded
            raise
    return issues


def _discard(path: Path) -> None:
    """Remove a half-written member (the path may be one the file system refuses)."""
    try:
        if path.is_file() and not path.is_symlink():
            path.unlink()
    except OSError:
        pass


# What extracting one member can raise besides our own InputError (the cap).
_MEMBER_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    RuntimeError,  # encrypted member
    NotImplementedError,  # compression method zipfile does not know
    OSError,
    ValueError,
)


def _inflate(archive: zipfile.ZipFile, member: zipfile.ZipInfo, target: Path, budget: list[int]):
    """Write one member, counting its inflated bytes against the budget as they come."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with archive.open(member) as src, open(target, "wb") as out:
        while chunk := src.read(_CHUNK):
            budget[0] -= len(chunk)
            if budget[0] < 0:
                raise InputError(f"inflates past the cap of {MAX_TOTAL_BYTES} bytes")
            out.write(chunk)


def materialise_uploads(files: Sequence[UploadedFile], dest: Path) -> list[LoadIssue]:
    """Write uploads (JSON, JSONL, CSV answers, zips of a results folder) under ``dest``.

    Returns the issues met; a refused archive is reported and the other uploads still land.
    """
    dest.mkdir(parents=True, exist_ok=True)
    issues: list[LoadIssue] = []
    budget = [MAX_TOTAL_BYTES]
    for i, f in enumerate(files):
        base = PurePosixPath(f.name.replace("\\", "/")).name or f"upload_{i}"
        if base.lower().endswith(".zip"):
            folder = dest / f"{i:03d}_{Path(base).stem}"
            try:
                issues.extend(_extract_zip(f.data, base, folder, budget))
            except InputError as exc:
                issues.append(LoadIssue(base, "file", str(exc).split(": ", 1)[-1]))
        elif base.lower().endswith(_DATA_SUFFIXES):
            # Loose files land together, so their dataset is "uploaded" (their folder).
            target = dest / "uploaded" / base
            if target.exists():
                target = dest / "uploaded" / f"{i:03d}" / base
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(f.data)
            except (OSError, ValueError) as exc:  # a name too long, or holding a NUL
                issues.append(LoadIssue(base, "file", f"skipped: cannot be stored ({exc})"))
        else:
            issues.append(LoadIssue(base, "file", "not a .json, .jsonl, .csv or .zip file"))
    return issues
