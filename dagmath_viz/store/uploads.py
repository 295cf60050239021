"""Uploaded files and archives, written safely to a private folder for loading.

Zip members are checked before anything is written: no absolute paths, no ``..``, no
links, and caps on the member count, the total uncompressed size (a zip bomb is refused
before it is inflated, and the inflated bytes are counted as they are written), the folders
a zip would create and how deep its paths go (a directory bomb, many empty members in
folders hundreds deep, passes the byte and member caps but would exhaust inodes).

:class:`UploadStore` is the one place the app keeps uploads (every page's uploader goes
through it). Its folder is private to the process: made fresh by :func:`tempfile.mkdtemp`
(mode 0700, a name nobody can plant a link or a folder at in advance) and removed at exit
(:func:`remove_stores`, which a server leaving past the exit handlers calls itself).
Each session has its own sub-folder, and each uploader of a session (a *slot*) keeps only
its current upload: nothing is shared or reused across sessions, so a second session that
uploads the same zip gets its own copy and its own warnings. Uploads are deleted when their
session ends (:meth:`UploadStore.end_session`, or the lease's finaliser) or when unused for
:data:`MAX_AGE_SECONDS`, and the bytes written are capped per upload
(:data:`MAX_TOTAL_BYTES`), per session (:data:`MAX_SESSION_BYTES`) and for the whole
process (:data:`MAX_STORE_BYTES`), before they are written.
"""

from __future__ import annotations

import atexit
import hashlib
import math
import os
import shutil
import stat
import tempfile
import threading
import time
import weakref
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from dagmath_viz.formats.registry import DATA_SUFFIXES
from dagmath_viz.schema import InputError, LoadIssue, UnsafePathError
from dagmath_viz.text import short_repr

__all__ = [
    "UPLOADER_TYPES",
    "UPLOADS_PREFIX",
    "is_uploaded",
    "MAX_AGE_SECONDS",
    "MAX_DEPTH",
    "MAX_FILES",
    "MAX_FOLDERS",
    "MAX_SESSION_BYTES",
    "MAX_STORE_BYTES",
    "MAX_TOTAL_BYTES",
    "SWEEP_ENV",
    "SWEEP_SECONDS",
    "StoredUpload",
    "UploadStore",
    "UploadedFile",
    "check_efficiency_records",
    "materialise_uploads",
    "remove_stores",
    "sweep_interval",
    "uploads_id",
]

#: Name prefix of every upload store's private folder.
UPLOADS_PREFIX = "dagmath-viz-uploads-"


def is_uploaded(path: str | Path) -> bool:
    """Whether ``path`` lies in an upload store's folder: such files must be gone when
    their session is, so nothing that outlives it (a cache) may copy them."""
    return any(part.startswith(UPLOADS_PREFIX) for part in Path(path).expanduser().resolve().parts)


MAX_FILES = 20_000
#: Folders a member's path may go down (``a/b/c.json`` is 2 deep): a results folder is
#: run/model/dataset/..., never dozens deep.
MAX_DEPTH = 32
#: Distinct folders one zip may create (a results folder has one per model and dataset).
MAX_FOLDERS = 5_000
# Loading JSON costs several times its size in memory, so the caps are on bytes written: one
# upload (all files of one uploader, zips inflated), one session, and the whole process.
MAX_TOTAL_BYTES = 512 * 1024**2
MAX_SESSION_BYTES = 1024**3
MAX_STORE_BYTES = 2 * 1024**3
MAX_AGE_SECONDS = 3600  # an upload unused this long is deleted
#: the app's seconds between background sweeps (a closed tab's uploads go within this)
SWEEP_SECONDS = 60.0
#: environment variable that overrides :data:`SWEEP_SECONDS` (the browser test sets it short)
SWEEP_ENV = "DAGMATH_UPLOAD_SWEEP_SECONDS"
_ZIP = ".zip"
#: What the app's uploader offers: the last part of every ending a format reads, and zip
#: (a browser's file picker knows ``gz``, not ``jsonl.gz``; the name is checked here).
UPLOADER_TYPES = tuple(dict.fromkeys(s.rsplit(".", 1)[-1] for s in (*DATA_SUFFIXES, _ZIP)))
_NOT_DATA = f"not a {', '.join(DATA_SUFFIXES)} or {_ZIP} file"
_CHUNK = 1 << 20


def sweep_interval(environ: Mapping[str, str] | None = None) -> float:
    """Seconds between the app's background sweeps: ``$DAGMATH_UPLOAD_SWEEP_SECONDS`` when set
    (a number above 0), else :data:`SWEEP_SECONDS`. Anything else is an :class:`InputError`
    naming the variable."""
    raw = (os.environ if environ is None else environ).get(SWEEP_ENV, "").strip()
    if not raw:
        return SWEEP_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"{SWEEP_ENV}={short_repr(raw, 40)}: expected a number of seconds above 0")
    return value


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


def _extract_zip(data: bytes, name: str, dest: Path, budget: list) -> list[LoadIssue]:
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
        raise InputError(f"{name}: would inflate to {declared} bytes; {_room(budget)}")
    _check_folders(name, [m.filename for m in members])
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
        if not rel.name.lower().endswith(DATA_SUFFIXES):
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


def _check_folders(name: str, members: Sequence[str]) -> None:
    """Refuse a zip whose members would go deeper than :data:`MAX_DEPTH` folders or create
    more than :data:`MAX_FOLDERS`, before any folder is made.

    Only the members that would be written count (data files); the depth is checked first,
    so a 900-deep path is refused without listing its 900 prefixes.
    """
    paths = [
        PurePosixPath(m.replace("\\", "/")).parts
        for m in members
        if m.lower().endswith(DATA_SUFFIXES)
    ]
    deepest = max(paths, key=len, default=())
    if len(deepest) - 1 > MAX_DEPTH:
        raise InputError(
            f"{name}: member {short_repr('/'.join(deepest), 120)} is {len(deepest) - 1} "
            f"folders deep; at most {MAX_DEPTH} are accepted"
        )
    folders = {parts[:k] for parts in paths for k in range(1, len(parts))}
    if len(folders) > MAX_FOLDERS:
        raise InputError(
            f"{name}: would create {len(folders)} folders; at most {MAX_FOLDERS} are accepted"
        )


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


def _inflate(archive: zipfile.ZipFile, member: zipfile.ZipInfo, target: Path, budget: list):
    """Write one member, counting its inflated bytes against the budget as they come."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with archive.open(member) as src, open(target, "wb") as out:
        while chunk := src.read(_CHUNK):
            budget[0] -= len(chunk)
            if budget[0] < 0:
                raise InputError(f"inflates past the {budget[2]} of {budget[1]} bytes")
            out.write(chunk)


def _room(budget: list) -> str:
    """How a refusal states the cap: ``the cap is N`` or ``only L of the <cap> (N) are left``."""
    left, cap, cap_name = budget
    if left >= cap:
        return f"the {cap_name} is {cap}"
    return f"only {max(left, 0)} bytes of the {cap_name} ({cap}) are left"


def materialise_uploads(
    files: Sequence[UploadedFile],
    dest: Path,
    limit: tuple[int, int, str] | None = None,
    landed: list[Path | None] | None = None,
) -> list[LoadIssue]:
    """Write uploads (JSON, JSONL, CSV answers, zips of a results folder) under ``dest``.

    Args:
        files: the uploads.
        dest: the folder to write under.
        limit: (bytes that may be written, the cap they are left of, how messages name
            it); default: :data:`MAX_TOTAL_BYTES` as "cap". A zip is refused on its declared
            size before anything is written, and on its inflated bytes as they come.
        landed: if given, gets where each upload landed, in order (a file, or a zip's
            folder); ``None`` for one refused.

    Returns the issues met; a refused archive is reported and the other uploads still land.
    """
    dest.mkdir(parents=True, exist_ok=True)
    issues: list[LoadIssue] = []
    left, cap, cap_name = limit or (MAX_TOTAL_BYTES, MAX_TOTAL_BYTES, "cap")
    budget = [left, cap, cap_name]
    for i, f in enumerate(files):
        base = PurePosixPath(f.name.replace("\\", "/")).name or f"upload_{i}"
        where = None
        if base.lower().endswith(_ZIP):
            folder = dest / f"{i:03d}_{Path(base).stem}"
            before = budget[0]
            try:
                issues.extend(_extract_zip(f.data, base, folder, budget))
                where = folder
            except InputError as exc:
                # a refused zip leaves nothing: no part of it is loaded, nor counted
                shutil.rmtree(folder, ignore_errors=True)
                budget[0] = before
                issues.append(LoadIssue(base, "file", str(exc).split(": ", 1)[-1]))
        elif base.lower().endswith(DATA_SUFFIXES):
            # Loose files land together, so their dataset is "uploaded" (their folder).
            target = dest / "uploaded" / base
            if target.exists():
                target = dest / "uploaded" / f"{i:03d}" / base
            if len(f.data) > budget[0]:
                issues.append(LoadIssue(base, "file", f"{len(f.data)} bytes; {_room(budget)}"))
            else:
                try:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(f.data)
                    budget[0] -= len(f.data)
                    where = target
                except (OSError, ValueError) as exc:  # a name too long, or holding a NUL
                    issues.append(LoadIssue(base, "file", f"skipped: cannot be stored ({exc})"))
        else:
            issues.append(LoadIssue(base, "file", _NOT_DATA))
        if landed is not None:
            landed.append(where)
    return issues


@dataclass(frozen=True, slots=True)
class StoredUpload:
    """One uploader's files as stored for a session.

    Attributes:
        source_id: a name for caches: it differs between sessions, so nothing is shared.
        folder: the folder holding everything that landed (load it as one data source).
        paths: where each upload landed, in the order given (``None`` if it was refused).
        issues: what was refused or skipped, kept for every rerun of the session.
        size: the bytes written.
    """

    source_id: str
    folder: Path
    paths: tuple[Path | None, ...]
    issues: tuple[LoadIssue, ...]
    size: int
    uid: str = ""
    last_used: list[float] = field(default_factory=lambda: [time.monotonic()], compare=False)


#: Every upload store's folder this process made and has not removed yet.
_ROOTS: list[Path] = []
_ROOTS_LOCK = threading.Lock()


def remove_stores() -> None:
    """Remove every upload store's folder this process made: at exit, and by a server that
    leaves at once, past the exit handlers (``serve.py`` stopped mid-load), before it goes."""
    with _ROOTS_LOCK:
        roots = list(_ROOTS)
        _ROOTS.clear()
    for root in roots:
        shutil.rmtree(root, ignore_errors=True)


atexit.register(remove_stores)


class UploadStore:
    """The process's uploads: a private folder, one sub-folder per session and slot.

    Thread-safe (Streamlit runs each session's script in its own thread). Library code:
    nothing here knows Streamlit; the app passes its session ids.

    Args:
        max_upload_bytes: cap of one upload (all files of one uploader, zips inflated).
        max_session_bytes: cap of everything one session keeps at once.
        max_store_bytes: cap of everything the process keeps at once.
        max_age: seconds after which an unused upload is deleted.
        parent: where to make the private folder (default: the system's temp folder).
        is_alive: tells whether a session is still connected; the uploads of one that is
            not are deleted at the next sweep. ``None``: sessions end only through
            :meth:`end_session`, a lease, or age.
        sweep_every: seconds between sweeps by a background thread (started with the
            first upload), so a closed tab's files go even when nobody uploads again;
            ``None`` sweeps only when something is stored.
    """

    def __init__(
        self,
        max_upload_bytes: int | None = None,
        max_session_bytes: int | None = None,
        max_store_bytes: int | None = None,
        max_age: float | None = None,
        parent: str | Path | None = None,
        is_alive: Callable[[str], bool] | None = None,
        sweep_every: float | None = None,
    ) -> None:
        self.max_upload_bytes = MAX_TOTAL_BYTES if max_upload_bytes is None else max_upload_bytes
        self.max_session_bytes = (
            MAX_SESSION_BYTES if max_session_bytes is None else max_session_bytes
        )
        self.max_store_bytes = MAX_STORE_BYTES if max_store_bytes is None else max_store_bytes
        self.max_age = MAX_AGE_SECONDS if max_age is None else max_age
        self._parent = None if parent is None else str(parent)
        self._root: Path | None = None
        self._lock = threading.Lock()
        # (session, slot) -> the stored upload; a session folder per session
        self._uploads: dict[tuple[str, str], StoredUpload] = {}
        self._session_dirs: dict[str, Path] = {}
        self._is_alive = is_alive
        self._sweep_every = sweep_every
        self._sweeper: threading.Thread | None = None

    @property
    def root(self) -> Path:
        """The private folder (made on first use, 0700, removed at exit)."""
        with self._lock:
            return self._ensure_root()

    def _ensure_root(self) -> Path:
        if self._root is None or not self._root.is_dir():
            self._root = Path(tempfile.mkdtemp(prefix=UPLOADS_PREFIX, dir=self._parent))
            with _ROOTS_LOCK:
                _ROOTS.append(self._root)
        return self._root

    def store(self, session: str, slot: str, files: Sequence[UploadedFile]) -> StoredUpload:
        """Store one uploader's files for a session; the same files again cost nothing.

        The slot's previous upload, if different, is deleted first; expired uploads of any
        session are swept. The bytes left under the three caps bound what may be written.
        """
        uid = uploads_id(files)
        with self._lock:
            self._start_sweeper()
            self._sweep_locked(keep=session)
            key = (session, slot)
            old = self._uploads.get(key)
            if old is not None and old.uid == uid and old.folder.is_dir():
                old.last_used[0] = time.monotonic()
                return old
            if old is not None:
                self._delete_locked(key)
            session_used = sum(u.size for (s, _), u in self._uploads.items() if s == session)
            store_used = sum(u.size for u in self._uploads.values())
            limits = [  # (bytes left, how a refusal names the cap, the cap)
                (self.max_upload_bytes, "cap per upload", self.max_upload_bytes),
                (self.max_session_bytes - session_used, "cap per session", self.max_session_bytes),
                (self.max_store_bytes - store_used, "cap for all sessions", self.max_store_bytes),
            ]
            left, cap_name, cap = min(limits, key=lambda lim: lim[0])
            folder = Path(tempfile.mkdtemp(prefix=f"{slot[:20]}-", dir=self._session_dir(session)))
            landed: list[Path | None] = []
            issues = materialise_uploads(files, folder, (max(0, left), cap, cap_name), landed)
            size = _folder_size(folder)
            upload = StoredUpload(
                source_id=f"upload:{folder.parent.name}/{folder.name}:{uid}",
                folder=folder,
                paths=tuple(landed),
                issues=tuple(issues),
                size=size,
                uid=uid,
            )
            self._uploads[key] = upload
            return upload

    def end_session(self, session: str) -> None:
        """Delete every upload of a session (its browser tab closed, or it expired)."""
        with self._lock:
            for key in [k for k in self._uploads if k[0] == session]:
                self._delete_locked(key)
            folder = self._session_dirs.pop(session, None)
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)

    def lease(self, session: str) -> object:
        """A token whose collection ends the session's uploads (keep it in session state).

        When the session's state is dropped, the token is garbage-collected and the
        session's uploads are deleted; :data:`MAX_AGE_SECONDS` catches the rest.
        """
        token = _Lease()
        weakref.finalize(token, self.end_session, session)
        return token

    def sweep(self) -> None:
        """Delete uploads unused for longer than ``max_age``, and those of ended sessions."""
        with self._lock:
            self._sweep_locked()

    def _start_sweeper(self) -> None:
        if self._sweep_every is None or self._sweeper is not None:
            return

        def loop() -> None:
            while True:
                time.sleep(self._sweep_every)
                try:
                    self.sweep()
                except Exception:  # noqa: BLE001 - a failed sweep must not end the next ones
                    pass

        self._sweeper = threading.Thread(target=loop, name="dagmath-upload-sweeper", daemon=True)
        self._sweeper.start()

    def used_bytes(self) -> int:
        """The bytes the process keeps in uploads now."""
        with self._lock:
            return sum(u.size for u in self._uploads.values())

    def _sweep_locked(self, keep: str | None = None) -> None:
        now = time.monotonic()
        ended: dict[str, bool] = {}
        for key, up in list(self._uploads.items()):
            session = key[0]
            if session != keep and self._is_alive is not None and session not in ended:
                ended[session] = not _asked(self._is_alive, session)
            if now - up.last_used[0] > self.max_age or ended.get(session):
                self._delete_locked(key)
        for session, folder in list(self._session_dirs.items()):
            if not any(k[0] == session for k in self._uploads):
                shutil.rmtree(folder, ignore_errors=True)
                del self._session_dirs[session]

    def _delete_locked(self, key: tuple[str, str]) -> None:
        up = self._uploads.pop(key, None)
        if up is not None:
            shutil.rmtree(up.folder, ignore_errors=True)

    def _session_dir(self, session: str) -> Path:
        folder = self._session_dirs.get(session)
        if folder is None or not folder.is_dir():
            # a fresh random name: the session id (which a client may know) is not a path
            folder = Path(tempfile.mkdtemp(prefix="session-", dir=self._ensure_root()))
            self._session_dirs[session] = folder
        return folder


def _asked(is_alive: Callable[[str], bool], session: str) -> bool:
    """``is_alive(session)``; a question that fails counts as "alive" (age still applies)."""
    try:
        return bool(is_alive(session))
    except Exception:  # noqa: BLE001 - the app's runtime may be shutting down
        return True


class _Lease:
    """A token for :meth:`UploadStore.lease` (weak-referenceable, picklable to nothing)."""

    __slots__ = ("__weakref__",)

    def __reduce__(self):  # session state may be pickled; a copy must not end the session
        return (_Lease, ())


def _folder_size(folder: Path) -> int:
    total = 0
    for p in folder.rglob("*"):
        try:
            if p.is_file() and not p.is_symlink():
                total += p.stat().st_size
        except OSError:
            pass
    return total


# --- records the Efficiency page reads from uploads ----------------------------------------

_PROOF_NUMBERS = ("efficiency",)
_PROOF_OPTIONAL_NUMBERS = ("efficiency_non_axiom", "distance_dfs", "distance_bfs", "n_theorems")


def _is_id(value: object) -> bool:
    return type(value) in (int, str)


def _is_number(value: object) -> bool:
    return type(value) in (int, float)


def check_efficiency_records(
    problems: Sequence[dict], proofs: Sequence[dict], problems_name: str, proofs_name: str
) -> tuple[list[dict], list[dict], list[LoadIssue]]:
    """Uploaded problem and proof records with the unusable ones named and left out.

    The Efficiency page reads a problem's ``problem_id`` and a proof's ``problem_id``,
    ``strategy``, ``correct``, ``efficiency`` (numbers), and, when present, the numbers
    ``efficiency_non_axiom``, ``distance_dfs``, ``distance_bfs`` and ``n_theorems``. A record
    missing one, or holding the wrong type, is skipped with a message naming its file and
    line; the others still show.

    Returns:
        (usable problems, usable proofs, one issue per record left out).
    """
    issues: list[LoadIssue] = []
    good_problems = []
    for n, rec in enumerate(problems, 1):
        if _is_id(rec.get("problem_id")):
            good_problems.append(rec)
        else:
            issues.append(
                LoadIssue(problems_name, f"record {n}", _wrong("problem_id", rec, "an id"))
            )
    good_proofs = []
    for n, rec in enumerate(proofs, 1):
        fault = None
        if not _is_id(rec.get("problem_id")):
            fault = _wrong("problem_id", rec, "an id")
        elif not isinstance(rec.get("strategy"), str):
            fault = _wrong("strategy", rec, "a string")
        elif not isinstance(rec.get("correct"), bool):
            fault = _wrong("correct", rec, "true or false")
        else:
            for key in _PROOF_NUMBERS + _PROOF_OPTIONAL_NUMBERS:
                if (key in rec or key in _PROOF_NUMBERS) and not _is_number(rec.get(key)):
                    fault = _wrong(key, rec, "a number")
                    break
        if fault is None:
            good_proofs.append(rec)
        else:
            issues.append(LoadIssue(proofs_name, f"record {n}", fault))
    return good_problems, good_proofs, issues


def _wrong(key: str, rec: dict, expected: str) -> str:
    if key not in rec:
        return f"skipped: no {key} (expected {expected})"
    return f"skipped: {key} is {short_repr(rec[key], 60)}, expected {expected}"
