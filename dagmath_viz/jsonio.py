"""The one module that reads and writes the project's JSON and JSONL files.

Every reader in the package comes through here, so every command treats a file the same
way: a UTF-8 byte-order mark is skipped; nesting deeper than orjson's limit (1,024 levels)
is refused, not a crash; a parse error is one line naming the line and column (invalid
UTF-8 names the byte and where it is); a missing file is "no such file or folder"; a JSON
Lines file with one line longer than :func:`max_line_bytes` (64 MB, or
``$DAGMATH_MAX_LINE_BYTES``) is refused as ``line N longer than ...`` while it is read, so the
long line is never held in memory (JSON costs several times its size once parsed: one 2 GB
line took 10 GB). A file read whole (:func:`read_bytes`: one JSON document, a Parquet or
gzipped file) larger than :func:`max_file_bytes` (1 GiB, or ``$DAGMATH_MAX_FILE_BYTES``) is
refused as ``N bytes, over the cap on a file read whole ...`` before a byte of it is read
(one 512 MB JSON document took 1.6 GB to score).

Messages from :func:`parse` and :func:`parse_lines` carry the place, not the file (callers
add it: loading reports ``<file>: file: line N, column C: ...``, other commands
``<file>: line N, column C: ...``); :func:`read_bytes` and :func:`read_json` name the file.

Writes go through :func:`write_atomic`: a regular file (or a new path) is replaced in one
rename, so a reader never sees half a file; anything else (a device, a FIFO, ``-`` for
stdout) is written through, never replaced.

The module reads top down, each function before the ones it calls: the file readers
(:func:`read_json`, :func:`read_jsonl`, :func:`read_bytes`), the byte
parsers they share (:func:`parse`, :func:`parse_lines`) and their error messages, then
:class:`Document`, which they yield; then the writers (:func:`dumps`, :func:`append_lines`,
:func:`write_atomic` and the atomic replace under it).
"""

from __future__ import annotations

import os
import secrets
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from dagmath_viz.schema import InputError

__all__ = [
    "BOM",
    "MAX_FILE_BYTES",
    "MAX_FILE_ENV",
    "MAX_LINE_BYTES",
    "MAX_LINE_ENV",
    "append_lines",
    "NO_SUCH_FILE",
    "Document",
    "dumps",
    "parse",
    "parse_lines",
    "read_bytes",
    "read_json",
    "read_jsonl",
    "read_lines_bytes",
    "max_file_bytes",
    "max_line_bytes",
    "strip_bom",
    "write_atomic",
]

BOM = b"\xef\xbb\xbf"
#: The one wording of a path that is not there (files, folders, answer keys, task DAGs).
NO_SUCH_FILE = "no such file or folder"
_OPTS = orjson.OPT_SERIALIZE_NUMPY
#: The longest JSON Lines line read (bytes, its newline not counted), unless the environment
#: says otherwise: a record far past any trajectory's size, far below what parsing it costs.
MAX_LINE_BYTES = 64 * 1024**2
#: The environment variable that sets another cap (a whole number of bytes above 0).
MAX_LINE_ENV = "DAGMATH_MAX_LINE_BYTES"
#: The largest file read whole (bytes), unless the environment says otherwise: one JSON
#: document is parsed at once and costs about three times its size while it is scored (a
#: 512 MB file peaked at 1.6 GB, a 128 MB one at 392 MB), so a larger file is that file's
#: error, never an out-of-memory kill. 1 GiB: what the app keeps of uploads per session.
MAX_FILE_BYTES = 1024**3
#: The environment variable that sets another file cap (a whole number of bytes above 0).
MAX_FILE_ENV = "DAGMATH_MAX_FILE_BYTES"
_CHUNK = 1 << 20


# --------------------------------------------------------------------------- reading


def read_json(path: str | Path) -> Any:
    """The one JSON document of a file.

    Raises:
        InputError: ``<path>: no such file or folder``, ``<path>: cannot read (...)`` or
            ``<path>: line N, column C: invalid JSON (...)``.
    """
    data = read_bytes(path)
    try:
        return parse(data)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None


def read_jsonl(path: str | Path) -> Iterator[Document]:
    """The documents of a JSONL file, one per non-blank line (bad lines as InputError).

    Raises:
        InputError: the file cannot be read, or one line is longer than the cap
            (:func:`read_lines_bytes`).
    """
    return parse_lines(read_lines_bytes(path))


def read_lines_bytes(path: str | Path, cap: int | None = None) -> bytes:
    """A JSON Lines file's bytes, refused when one line is longer than ``cap`` bytes.

    ``cap`` defaults to :func:`max_line_bytes`. A file no longer than the cap is read as
    :func:`read_bytes` reads it. A longer one is first read a chunk at a time, each chunk
    dropped once its line lengths are counted, so a 2 GB line costs one chunk of memory
    and is refused at the cap; only a file whose every line fits is then read whole.

    Raises:
        InputError: as :func:`read_bytes`, or ``<path>: line N longer than C bytes (...)``.
    """
    cap = max_line_bytes() if cap is None else cap
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            regular = stat.S_ISREG(info.st_mode)
            if regular and info.st_size <= cap:
                return handle.read()
            kept = _scan_lines(handle, path, cap, keep=not regular)
            if kept is not None:
                return kept
            handle.seek(0)
            return handle.read()
    except FileNotFoundError:
        raise InputError(f"{path}: {NO_SUCH_FILE}") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _scan_lines(handle: Any, path: str | Path, cap: int, keep: bool) -> bytes | None:
    """Read ``handle`` to its end a chunk at a time, raising at the first line past ``cap``;
    the bytes when ``keep`` (a stream that cannot be read again), else None."""
    chunks: list[bytes] = []
    run = 0  # bytes of the current line seen in earlier chunks
    line = 1  # the number of the line the chunk starts in
    while chunk := handle.read(_CHUNK):
        parts = chunk.split(b"\n")
        for i, part in enumerate(parts):
            if (run if i == 0 else 0) + len(part) > cap:
                raise InputError(
                    f"{path}: line {line + i} longer than {cap} bytes (the cap on one "
                    f"JSON Lines line; {MAX_LINE_ENV} sets another)"
                )
        line += len(parts) - 1
        run = (run if len(parts) == 1 else 0) + len(parts[-1])
        if keep:
            chunks.append(chunk)
    return b"".join(chunks) if keep else None


def read_bytes(path: str | Path, cap: int | None = None) -> bytes:
    """A file's bytes, refused when there are more than ``cap`` of them.

    ``cap`` defaults to :func:`max_file_bytes`. A regular file's size is looked at
    (``fstat`` on the open file) before anything is read, so a file past the cap costs no
    memory; a stream (a FIFO, a device) is read a chunk at a time and refused at the cap.

    Raises:
        InputError: ``<path>: no such file or folder``, ``<path>: cannot read (<why>)`` or
            ``<path>: N bytes, over the cap on a file read whole (C bytes; ...)``.
    """
    cap = max_file_bytes() if cap is None else cap
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            if stat.S_ISREG(info.st_mode):
                if info.st_size > cap:
                    raise InputError(_over_file_cap(path, info.st_size, cap))
                data = handle.read()
            else:
                data = _read_stream(handle, path, cap)
    except FileNotFoundError:
        raise InputError(f"{path}: {NO_SUCH_FILE}") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if len(data) > cap:  # a regular file that grew while it was read
        raise InputError(_over_file_cap(path, len(data), cap))
    return data


def _read_stream(handle: Any, path: str | Path, cap: int) -> bytes:
    """What a stream holds, a chunk at a time; an InputError once it is past ``cap``."""
    chunks: list[bytes] = []
    total = 0
    while chunk := handle.read(_CHUNK):
        total += len(chunk)
        if total > cap:
            raise InputError(_over_file_cap(path, None, cap))
        chunks.append(chunk)
    return b"".join(chunks)


def _over_file_cap(path: str | Path, size: int | None, cap: int) -> str:
    """``<path>: N bytes, over the cap ...`` (``more than C bytes`` for a stream)."""
    found = f"more than {cap}" if size is None else str(size)
    return (
        f"{path}: {found} bytes, over the cap on a file read whole ({cap} bytes; "
        f"{MAX_FILE_ENV} sets another)"
    )


def max_line_bytes(environ: Mapping[str, str] | None = None) -> int:
    """The cap on one JSON Lines line: ``$DAGMATH_MAX_LINE_BYTES`` when set (a whole number
    above 0), else :data:`MAX_LINE_BYTES`; anything else is an InputError naming it."""
    return _cap(MAX_LINE_ENV, MAX_LINE_BYTES, environ)


def max_file_bytes(environ: Mapping[str, str] | None = None) -> int:
    """The cap on a file read whole (:func:`read_bytes`): ``$DAGMATH_MAX_FILE_BYTES`` when
    set (a whole number above 0), else :data:`MAX_FILE_BYTES`; anything else is an
    InputError naming it."""
    return _cap(MAX_FILE_ENV, MAX_FILE_BYTES, environ)


def _cap(name: str, default: int, environ: Mapping[str, str] | None) -> int:
    raw = (os.environ if environ is None else environ).get(name, "").strip()
    if not raw:
        return default
    if not (raw.isascii() and raw.isdigit() and len(raw) < 19 and int(raw) > 0):
        raise InputError(f"{name}={raw[:40]!r}: expected a whole number of bytes above 0")
    return int(raw)


def parse(data: bytes, first_line: int = 1) -> Any:
    """One JSON document (a BOM is skipped).

    Raises:
        InputError: ``line N, column C: invalid JSON (<what>)``, with no file name.
    """
    return _parse(strip_bom(data), first_line)


def parse_lines(data: bytes) -> Iterator[Document]:
    """One :class:`Document` per non-blank line of JSONL (``location`` is ``line N``)."""
    for lineno, line in enumerate(strip_bom(data).split(b"\n"), start=1):
        if line.strip():
            try:
                yield Document(f"line {lineno}", _parse(line, first_line=lineno))
            except InputError as exc:
                yield Document(f"line {lineno}", exc)


def strip_bom(data: bytes) -> bytes:
    """``data`` without a leading UTF-8 byte-order mark (harmless, and common on Windows)."""
    return data[3:] if data.startswith(BOM) else data


def _parse(data: bytes, first_line: int = 1) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(_decode_error(exc, data, first_line)) from None


def _decode_error(exc: orjson.JSONDecodeError, data: bytes, first_line: int) -> str:
    # orjson's message says what failed; lineno/colno say where. Invalid UTF-8 is checked
    # before parsing, so orjson then says "line 1, column 1": find the byte instead.
    bad_byte = _utf8_fault(data, first_line)
    if bad_byte:
        return bad_byte
    msg = str(exc).split(": line ")[0]
    line = exc.lineno + first_line - 1
    return f"line {line}, column {exc.colno}: invalid JSON ({msg})"


def _utf8_fault(data: bytes, first_line: int = 1) -> str | None:
    """Where ``data`` stops being UTF-8 (line, column, the byte), or None when it is UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        line = first_line + data.count(b"\n", 0, exc.start)
        column = len(data[line_start : exc.start].decode("utf-8", "replace")) + 1
        return (
            f"line {line}, column {column}: invalid JSON (not UTF-8: byte 0x{data[exc.start]:02x})"
        )
    return None


class Document(NamedTuple):
    """One JSON document of a file: where it is (``""`` or ``line N``) and its value.

    ``value`` is an :class:`InputError` for a JSONL line that is not valid JSON (the
    caller reports it and reads on).
    """

    location: str
    value: Any


# --------------------------------------------------------------------------- writing


def dumps(value: Any, *, newline: bool = False) -> bytes:
    """``value`` as compact JSON bytes (numpy numbers allowed), with a newline if asked."""
    return orjson.dumps(value, option=_OPTS | (orjson.OPT_APPEND_NEWLINE if newline else 0))


def append_lines(path: str | Path, data: bytes) -> None:
    """Append ``data`` (whole JSON lines) to ``path`` in one ``write``, creating it (and its
    folder) if needed: concurrent writers add lines, never interleave them.

    Raises:
        OSError: the file cannot be written.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def write_atomic(target: str | Path, chunks: bytes | Iterable[bytes]) -> None:
    """Write ``chunks`` (bytes, or an iterable of them) to ``target``.

    - ``-``: standard output.
    - A regular file or a new path: written to an unnamed file in the same folder, then
      renamed over the target in one step, so a reader never sees half a file and a
      failure (or a kill) leaves the old file as it was and no hidden temporary behind.
      An existing file keeps its mode; a new one gets ``0666`` minus the umask.
    - A link is followed: its target is what gets written (the link stays a link).
    - Anything else (a device such as ``/dev/null``, a FIFO): written through, in place;
      it is never replaced by a regular file.

    Raises:
        OSError: the target or its folder cannot be written.
    """
    data = [chunks] if isinstance(chunks, bytes) else chunks
    if str(target) == "-":
        sys.stdout.buffer.writelines(data)
        sys.stdout.flush()
        return
    path = Path(os.path.realpath(target))
    try:
        info = path.stat()
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "is a folder", str(target))
        with open(path, "wb") as handle:  # a device or FIFO: write through
            handle.writelines(data)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~_umask()
    _replace(path, data, mode)


def _umask() -> int:
    """The process's umask: from /proc on Linux (no race with other threads), else by
    setting it and straight back (os.umask can only be read that way)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _replace(path: Path, data: Iterable[bytes], mode: int) -> None:
    """Write ``data`` to an unnamed file beside ``path``, then rename it over ``path``.

    On Linux the file has no name until it is complete (``O_TMPFILE``), so even SIGKILL
    leaves nothing behind; elsewhere a named temporary is removed on any error.
    """
    fd, tmp = _unnamed(path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb", buffering=2**20, closefd=False) as handle:
            handle.writelines(data)
        if tmp is None:  # give the finished file a name for a moment, then the target's
            tmp = _name_unnamed(fd, path)
        os.replace(tmp, path)
        tmp = None
    finally:
        os.close(fd)
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def _name_unnamed(fd: int, path: Path) -> str:
    """A hidden name beside ``path`` for the complete unnamed file ``fd``."""
    tmp = str(path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp")
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        # linkat(AT_SYMLINK_FOLLOW) on the /proc link, as open(2) shows for O_TMPFILE;
        # os.link uses linkat (not link) only when given a folder descriptor
        os.link(f"/proc/self/fd/{fd}", os.path.basename(tmp), dst_dir_fd=folder)
    except OSError:  # /proc not usable: copy the bytes into a named file instead
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.fchmod(out, os.fstat(fd).st_mode & 0o7777)
            os.lseek(fd, 0, os.SEEK_SET)
            while chunk := os.read(fd, 2**20):
                os.write(out, chunk)
        except BaseException:
            os.close(out)
            Path(tmp).unlink(missing_ok=True)
            raise
        os.close(out)
    finally:
        os.close(folder)
    return tmp


def _unnamed(folder: Path) -> tuple[int, str | None]:
    """An open file in ``folder``: unnamed (``O_TMPFILE``) when possible, else named."""
    flag = getattr(os, "O_TMPFILE", 0)
    if flag and os.path.isdir("/proc/self/fd"):
        try:
            return os.open(folder, flag | os.O_RDWR, 0o600), None
        except OSError:
            pass  # a file system without O_TMPFILE support
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".", suffix=".tmp")
    return fd, tmp
