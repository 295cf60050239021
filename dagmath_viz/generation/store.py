"""Where a run keeps its state: the journal, atomic result files, the manifest.

Everything private lives in ``OUT_DIR/.dagmath/`` (a dot-folder: ``dagmath score`` skips
it). The journal is an append-only file of JSON lines, one per finished unit of work,
written with a single ``write`` the moment the unit finishes, so a ``kill -9`` loses at
most the units in flight. A line cut in half by the kill is dropped when the journal is
reopened (and the file truncated back to its last whole line, so the next append starts
clean). Result files are only ever replaced whole: a temporary file in the same folder,
then ``os.replace``, with the mode an ordinary new file gets (``0666`` minus the umask) or
the mode of the file it replaces. One run at a time owns ``OUT_DIR``: :class:`FolderLock`.
"""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from dagmath_viz import jsonio
from dagmath_viz.schema import InputError
from dagmath_viz.text import printable

__all__ = [
    "FAILURES_FILE",
    "STATE_DIR",
    "FolderLock",
    "Journal",
    "remove_stale_temps",
    "write_atomic",
    "write_failures",
    "write_if_changed",
]

#: The run's private folder inside OUT_DIR.
STATE_DIR = ".dagmath"
_TEMP_PREFIX = ".dagmath-tmp-"
#: What a run gave up on, and why, in OUT_DIR.
FAILURES_FILE = "failures.csv"
#: The lock a run holds on OUT_DIR (inside STATE_DIR), with the holder's process id.
LOCK_FILE = "lock"


class FolderLock:
    """An exclusive lock on ``OUT_DIR`` for one run (``with FolderLock(out_dir):``).

    Two runs on one folder would both send the requests still missing (each paid twice)
    and replace each other's files; the second one is refused at once instead, with the
    first one's process id. The lock is the kernel's (``flock``), so a run killed with
    ``kill -9`` leaves no stale lock behind.

    Raises:
        InputError: another process holds the lock.
    """

    def __init__(self, out_dir: Path) -> None:
        self.path = out_dir / STATE_DIR / LOCK_FILE
        self._fd = -1

    def __enter__(self) -> FolderLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            who = f" (process {holder})" if holder.isdigit() else ""
            raise InputError(
                f"{self.path.parent.parent}: another dagmath run is using this output "
                f"folder{who}; wait for it to finish, or choose another -o"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # closing releases the lock
            self._fd = -1


def _umask() -> int:
    """The process's umask, read from ``/proc`` where there is one (no window in which
    another thread would create files with a cleared umask), else set and restored."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` whole: a reader sees the old file or the new one.

    Raises:
        InputError: ``path`` is a link or a special file (a rename would replace it).
    """
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise InputError(f"{path}: not a regular file; refusing to replace it")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=_TEMP_PREFIX, suffix=".tmp")
    try:
        os.fchmod(fd, mode)  # mkstemp makes 0600 whatever the umask
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_failures(
    out_dir: Path, failures: list[dict[str, Any]], columns: list[str], **fixed: str
) -> None:
    """``OUT_DIR/failures.csv``: one row per unit given up, sorted by problem (then sample),
    each with the ``fixed`` columns (the run's model, dataset) first. With no failures the
    file is removed: an earlier run's failures were all redone, and it would mislead."""
    path = out_dir / FAILURES_FILE
    if not failures:
        if path.is_file() and not path.is_symlink():
            path.unlink()
        return
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in sorted(failures, key=lambda r: (r["problem_id"], r.get("sample_id", 0))):
        # what a server sent is in the reasons: no escape sequence reaches a viewer raw
        cells = {**fixed, **row}
        writer.writerow({k: printable(v, one_line=True) for k, v in cells.items()})
    write_atomic(path, buffer.getvalue().encode())


def write_if_changed(path: Path, data: bytes) -> bool:
    """Write ``data`` atomically unless ``path`` already holds exactly it (a rerun then
    leaves finished files untouched, modification time included). Returns whether it wrote."""
    try:
        if path.read_bytes() == data:
            return False
    except OSError:
        pass
    write_atomic(path, data)
    return True


def remove_stale_temps(folder: Path) -> None:
    """Delete temporary files an interrupted run left behind (only ours, by prefix)."""
    if not folder.is_dir():
        return
    for tmp in folder.rglob(f"{_TEMP_PREFIX}*.tmp"):
        if tmp.is_file() and not tmp.is_symlink():
            tmp.unlink(missing_ok=True)


class Journal:
    """Append-only JSON lines, keyed: ``keys`` holds every key journalled, and
    ``entries`` maps each key to its latest record when ``keep_records`` is on.

    Args:
        path: the journal file (created with its folder when missing).
        key_fields: the record fields that identify a unit of work.
        keep_records: hold the records in memory; off, only their keys are held and
            :meth:`scan` reads the records again when they are needed (a generate run's
            samples can be far bigger than memory should hold).
        on_record: called with each record read when the journal is opened.
    """

    def __init__(
        self,
        path: Path,
        key_fields: tuple[str, ...],
        keep_records: bool = True,
        on_record: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.path = path
        self.key_fields = key_fields
        self.keep_records = keep_records
        self.keys: set[tuple] = set()
        self.entries: dict[tuple, dict[str, Any]] = {}
        self.dropped_lines = 0
        self._on_record = on_record
        path.parent.mkdir(parents=True, exist_ok=True)
        self._load()
        # O_APPEND: each record goes on the end in one write, whoever else appends
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)

    def key_of(self, record: dict[str, Any]) -> tuple:
        return tuple(str(record.get(name)) for name in self.key_fields)

    def _load(self) -> None:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        whole = data.rfind(b"\n") + 1
        if whole < len(data):
            # a line cut short by a kill: drop it, so the next append starts a clean line
            with open(self.path, "r+b") as handle:
                handle.truncate(whole)
            self.dropped_lines += 1
        for record in self._records(data[:whole]):
            self._remember(record)
            if self._on_record is not None:
                self._on_record(record)

    def _records(self, data: bytes) -> Iterator[dict[str, Any]]:
        for line in data.splitlines():
            if not line.strip():
                continue
            try:
                record = jsonio.parse(line)
            except InputError:
                self.dropped_lines += 1
                continue
            if isinstance(record, dict):
                yield record

    def _remember(self, record: dict[str, Any]) -> None:
        key = self.key_of(record)
        self.keys.add(key)
        if self.keep_records:
            self.entries[key] = record

    def scan(self) -> Iterator[dict[str, Any]]:
        """Every whole record in the file, read again (line by line, in order)."""
        with open(self.path, "rb") as handle:
            for line in handle:
                if line.endswith(b"\n"):
                    yield from self._records(line)

    def append(self, record: dict[str, Any]) -> None:
        """Record one finished unit now (one ``write`` of one whole line)."""
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        view = memoryview(line)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        self._remember(record)

    def records(self) -> Iterable[dict[str, Any]]:
        return self.entries.values()

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
