"""A columnar (Parquet) copy of a scored JSONL file's frame, kept between app starts.

Opening 100,000 scored records costs seconds of one core (the JSON parse, the per-record
check :func:`dagmath_viz.formats.scored.scored_fault`, ``DataFrame.from_records`` with Arrow
strings); reading the same frame back from Parquet costs a fraction of that. So
:func:`dagmath_viz.run.streamed.scored_jsonl_frame` asks :func:`read` first and, after
parsing, hands its frame to :func:`write`.

- **Where**: ``frames/`` in the package's cache folder, beside the verdict cache
  (:func:`dagmath_viz.places.cache_root`), or ``$DAGMATH_FRAME_CACHE_DIR``;
  ``DAGMATH_FRAME_CACHE=0`` turns the cache off. Never next to the user's file, and
  never of an uploaded file (they must be gone when their session is).
- **Key**: the file's resolved path, size, ``mtime_ns``, ``ctime_ns``, inode and a hash
  of its first and last 64 KiB, plus :data:`VERSION` and the pandas and pyarrow versions.
  A file rewritten in place (same size, even with its old mtime put back) has a new
  ctime, so its old copy is not used; one copy per source file is kept.
- **Exact**: the frame read back is the parsed one (values, dtypes, ``None`` against
  NaN, lists). Numeric, boolean and string columns go to Parquet as they are; an object
  column (lists such as ``dead_ends``, a boolean column holding ``None``) holds what JSON
  held, so the column is stored as one JSON document (cut into a binary column, a piece
  a row) and parsed back in one call, and :func:`write` refuses a frame whose object
  values would not come back the same (a NaN, a tuple).
- **Bounded**: the copies in a folder (with the derived values
  :mod:`dagmath_viz.store.views` keeps beside them) take at most :func:`max_bytes`
  together, 2 GiB unless ``$DAGMATH_FRAME_CACHE_MAX_MB`` says otherwise; past it, the
  copies least recently written or read go first (a read touches its copy). The copy
  just written always stays.
- **Its own files only**: removing old copies and trimming the folder touches only names
  this module writes (:func:`is_own`: two digests, ``run`` before a run's), so
  ``$DAGMATH_FRAME_CACHE_DIR`` pointed at a folder with other content never deletes the
  user's own ``.parquet`` files or ``derived/`` folders.
- **Harmless**: a cache that cannot be written (read-only home, full disk) or read
  (corrupt, another version) is no cache: the file is parsed as before, never an error.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

import numpy as np
import orjson
import pandas as pd

from dagmath_viz.places import cache_root
from dagmath_viz.store.keys import cache_key
from dagmath_viz.store.uploads import is_uploaded

__all__ = [
    "MAX_BYTES", "VERSION", "cache_dir", "cache_file", "file_key", "is_own", "max_bytes", "read",
    "read_run", "run_stem", "write", "write_run",
]  # fmt: skip

#: Bump when the frame :func:`dagmath_viz.run.streamed.scored_jsonl_frame` builds changes.
VERSION = 2  # 2: a record's unknown fields are one column (score.record.OTHER_FIELDS)
#: Bytes the copies of one folder may take together (:func:`max_bytes`).
MAX_BYTES = 2 * 2**30
#: Environment variable overriding :data:`MAX_BYTES`, in MiB.
MAX_MB_ENV = "DAGMATH_FRAME_CACHE_MAX_MB"
#: Bytes hashed at each end of the source file (on top of its size and times).
_EDGE_BYTES = 1 << 16
#: Column dtypes stored as they are; any other dtype (categories, dates) is not cached.
_PLAIN_KINDS = "biuf"
_META_KEY = b"dagmath-viz"
_OFF = ("0", "off", "no", "false")
#: Names of the stored JSON columns (a frame column of that name is not cached).
_JSON_PREFIX = "\x00json:"


#: The names this module and :mod:`dagmath_viz.store.views` give what they write: a copy
#: (``<digest>-<digest>.parquet``), a run's copy (``run`` before it), their derived folders.
_OWN_STEM = re.compile(r"(?:run)?[0-9a-f]{20}-[0-9a-f]{20}")


def is_own(path: Path) -> bool:
    """Whether ``path`` has a name this cache gives what it writes (a copy, a run's copy,
    their derived values' folder): nothing else in a cache folder is ever removed."""
    stem = path.name.removesuffix(".parquet") if path.suffix == ".parquet" else path.name
    return _OWN_STEM.fullmatch(stem) is not None


def cache_dir() -> Path | None:
    """The folder of frame copies, or None when ``DAGMATH_FRAME_CACHE`` turns them off."""
    if _turned_off():
        return None
    own = os.environ.get("DAGMATH_FRAME_CACHE_DIR")
    if own:
        return Path(own)
    return cache_root() / "frames"


def max_bytes() -> int:
    """The cap on a folder's copies: ``$DAGMATH_FRAME_CACHE_MAX_MB`` MiB when it is a
    whole number (0 keeps only the latest copy), else :data:`MAX_BYTES`."""
    raw = os.environ.get(MAX_MB_ENV, "").strip()
    if raw.isdigit():
        return int(raw) * 2**20
    return MAX_BYTES


def _turned_off() -> bool:
    return os.environ.get("DAGMATH_FRAME_CACHE", "").strip().lower() in _OFF


def read(source: str | Path, folder: Path | None = None) -> pd.DataFrame | None:
    """The cached frame of ``source`` if a current copy exists, else None (never raises)."""
    try:
        folder = None if _turned_off() else folder or cache_dir()
        if folder is None or is_uploaded(source):
            return None
        key = _key(Path(source))
        path = cache_file(source, folder, key)
        if not path.is_file():
            return None
        frame = _load(path, key)
        if frame is not None:
            _touch(path)
        return frame
    except Exception:  # a corrupt or foreign file, or a source gone: parse it instead
        return None


def write(
    source: str | Path,
    frame: pd.DataFrame,
    stat: os.stat_result,
    folder: Path | None = None,
) -> Path | None:
    """Keep ``frame`` as the copy of ``source``, as it was when ``stat`` was taken.

    ``stat`` is the source's ``os.stat`` from before it was read: a file changed while it
    was parsed is not cached. Returns the copy's path, or None when nothing was written
    (no folder, an unwritable one, a frame that cannot come back exactly). Never raises.
    """
    try:
        folder = None if _turned_off() else folder or cache_dir()
        source = Path(source)
        if folder is None or is_uploaded(source):
            return None
        key = _key(source, stat)
        if key != _key(source):
            return None  # the file changed while it was read
        table = _to_arrow(frame, key)
        if table is None:
            return None
        target = cache_file(source, folder, key)
        _store(table, target)
        _prune(target)
        _trim(target)
        return target
    except Exception:  # read-only home, full disk, a type pyarrow refuses: no cache
        return None


def _store(table, target: Path) -> None:
    """Write ``table`` to ``target`` whole or not at all (a temporary file, renamed)."""
    import pyarrow.parquet as pq

    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # copies of the user's data
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            pq.write_table(table, handle)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_run(
    identity: str, key: str, folder: Path | None = None
) -> tuple[pd.DataFrame, dict] | None:
    """The frame and extra data kept by :func:`write_run` under ``identity`` and ``key``,
    or None (never raises).

    For what has no single file to key on, such as a raw results folder scored by the
    streaming pool: the caller says what identifies it (its paths) and what must match
    (every data file's size and times, its answer keys; :func:`dagmath_viz.run.streamed.run_key`).
    """
    try:
        folder = None if _turned_off() else folder or cache_dir()
        if folder is None:
            return None
        path = _run_file(identity, key, folder)
        if not path.is_file():
            return None
        loaded = _load(path, key)
        if loaded is None:
            return None
        _touch(path)
        return loaded, _extra(path)
    except Exception:  # a corrupt or foreign file: score again
        return None


def write_run(
    identity: str, key: str, frame: pd.DataFrame, extra: dict, folder: Path | None = None
) -> Path | None:
    """Keep ``frame`` and ``extra`` (JSON) under ``identity`` and ``key``; older copies of
    the same identity go. Returns the copy's path, or None when nothing was written."""
    try:
        folder = None if _turned_off() else folder or cache_dir()
        if folder is None:
            return None
        table = _to_arrow(frame, key, extra)
        if table is None:
            return None
        target = _run_file(identity, key, folder)
        _store(table, target)
        _prune(target)
        _trim(target)
        return target
    except Exception:  # read-only home, full disk: no cache
        return None


def _run_file(identity: str, key: str, folder: Path) -> Path:
    return folder / f"{run_stem(identity, key)}.parquet"


def run_stem(identity: str, key: str) -> str:
    """The name (without suffix) of what is kept for ``identity`` under ``key``: a run's
    copy, or the folder of its derived values (whose name starts the same way, so that
    :func:`_trim` removes it with the copy)."""
    return f"run{_digest(identity)}-{_digest(key)}"


def _extra(path: Path) -> dict:
    import pyarrow.parquet as pq

    meta = orjson.loads(pq.read_schema(path).metadata[_META_KEY])
    return meta.get("extra") or {}


def cache_file(source: str | Path, folder: Path, key: str | None = None) -> Path:
    """Where the copy of ``source`` (as it is now, or with ``key``) lives in ``folder``."""
    key = key if key is not None else _key(Path(source))
    return folder / f"{_digest(_resolved(Path(source)))}-{_digest(key)}.parquet"


def file_key(source: str | Path) -> str:
    """The key a copy of ``source``, as it is now, is kept under (what must match; raises
    OSError when the file cannot be read). Other caches of the same file's derived values
    build on it (:mod:`dagmath_viz.store.views`)."""
    return _key(Path(source))


def _key(source: Path, stat: os.stat_result | None = None) -> str:
    """What must match for a copy to be current: the file's identity and its edges."""
    stat = stat if stat is not None else source.stat()
    with open(source, "rb") as handle:
        head = handle.read(_EDGE_BYTES)
        handle.seek(max(stat.st_size - _EDGE_BYTES, 0))
        tail = handle.read(_EDGE_BYTES)
    return cache_key(
        "frame",
        VERSION,
        _resolved(source),
        stat.st_size,
        stat.st_mtime_ns,
        stat.st_ctime_ns,
        stat.st_ino,
        stat.st_dev,
        hashlib.blake2b(head + b"\0" + tail, digest_size=16).hexdigest(),
    )


def _resolved(source: Path) -> str:
    return str(source.expanduser().resolve())


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()


def _to_arrow(frame: pd.DataFrame, key: str, extra: dict | None = None):
    """``frame`` as an Arrow table, its dtypes and object columns (as JSON) in the schema's
    metadata; None if an object column holds a value JSON would not give back as it is,
    or a dtype is not plain."""
    import pyarrow as pa

    if not isinstance(frame.index, pd.RangeIndex) or frame.index.start != 0:
        return None
    if frame.index.step != 1 or not frame.columns.is_unique:
        return None
    if not all(type(c) is str for c in frame.columns):
        return None
    columns, dtypes, encoded = {}, [], {}
    for name in frame.columns:
        col = frame[name]
        dtype = col.dtype
        numpy = isinstance(dtype, np.dtype)
        if isinstance(dtype, pd.StringDtype) or (numpy and dtype.kind in _PLAIN_KINDS):
            columns[name] = pa.Array.from_pandas(col)
        elif numpy and dtype.kind == "O":
            text = _json_column(col)
            if text is None:
                return None
            encoded[name] = text
        else:
            return None
        dtypes.append(str(dtype))
    stored = {}
    for i, (name, text) in enumerate(encoded.items()):
        stored[name] = f"{_JSON_PREFIX}{i}"
        if stored[name] in columns:
            return None
        columns[stored[name]] = _pieces(text, len(frame))
    table = pa.table(columns) if columns else pa.table({"": pa.nulls(len(frame))})
    meta = {"key": key, "columns": list(frame.columns), "dtypes": dtypes,
            "json": stored, "rows": len(frame), "extra": extra}  # fmt: skip
    return table.replace_schema_metadata({_META_KEY: orjson.dumps(meta)})


def _pieces(text: bytes, n: int):
    """``text`` cut into ``n`` consecutive pieces, one a row: a binary column holding a
    whole JSON document in the table's own pages (not in the file's footer)."""
    import pyarrow as pa

    offsets = np.linspace(0, len(text), n + 1).astype(np.int64) if n else np.zeros(1, np.int64)
    if not n:
        return pa.array([], type=pa.large_binary())
    return pa.Array.from_buffers(
        pa.large_binary(), n, [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(text)]
    )


def _json_column(col: pd.Series) -> bytes | None:
    """The column's values as one JSON array, or None if they would not parse back as the
    very same values.

    One document for the column: a ``bytes`` per value cost ~4 KB each (orjson's buffer).
    Parsing it back must give an equal list: a NaN would come back as ``None``, a tuple as
    a list, and a numpy scalar or a non-string key cannot be written at all. (JSON keeps
    ``True`` apart from ``1`` and ``1`` apart from ``1.0``, so equal means the same.)
    """
    values = col.tolist()
    try:
        text = orjson.dumps(values)
        back = orjson.loads(text)
    except (TypeError, orjson.JSONEncodeError, orjson.JSONDecodeError):
        return None
    return text if back == values else None


def _load(path: Path, key: str) -> pd.DataFrame | None:
    """The frame in ``path`` if it was written under ``key`` and reads back whole."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    raw = (table.schema.metadata or {}).get(_META_KEY)
    if raw is None:
        return None
    meta = orjson.loads(raw)
    if meta.get("key") != key or table.num_rows != meta["rows"]:
        return None
    data = {}
    for name in meta["columns"]:
        if name in meta["json"]:
            values = orjson.loads(_joined(table.column(meta["json"][name])))
            if len(values) != meta["rows"]:
                return None
            data[name] = pd.Series(_object_array(values), dtype=object, name=name)
        else:
            data[name] = table.column(name).to_pandas()
    frame = pd.DataFrame(data, columns=meta["columns"], index=pd.RangeIndex(meta["rows"]))
    if [str(d) for d in frame.dtypes] != meta["dtypes"]:
        return None
    return frame


def _joined(column) -> memoryview | bytes:
    """The bytes of a binary column's pieces, in order (its data buffer, not a copy)."""
    arr = column.combine_chunks()
    if not len(arr):
        return b"[]"
    import pyarrow as pa

    width = np.int64 if pa.types.is_large_binary(arr.type) else np.int32
    offsets = np.frombuffer(arr.buffers()[1], dtype=width)[arr.offset : arr.offset + len(arr) + 1]
    return memoryview(arr.buffers()[2])[offsets[0] : offsets[-1]]


def _object_array(values: list) -> np.ndarray:
    """A 1-D object array of ``values`` (lists of equal length stay lists, not a 2-D array)."""
    return np.fromiter(values, dtype=object, count=len(values))


def _prune(keep: Path) -> None:
    """Remove the older copies of the same source file (other keys, same path)."""
    prefix = keep.name.split("-", 1)[0] + "-"
    for other in keep.parent.glob(prefix + "*.parquet"):
        if other != keep and is_own(other):
            try:
                other.unlink()
            except OSError:
                pass


def _touch(path: Path) -> None:
    """Mark a copy as just used (its modification time orders :func:`_trim`)."""
    try:
        os.utime(path)
    except OSError:
        pass


def _trim(keep: Path) -> None:
    """Remove the least recently used copies of ``keep``'s folder (and their derived
    values) until the folder's copies fit in :func:`max_bytes`; ``keep`` stays. Derived
    values whose copy is gone go too.

    A copy's name, and the names of its derived values' folders (``derived/``), start
    with the digest of the source's path (one copy per source is kept, :func:`_prune`).
    """
    import shutil

    folder, cap = keep.parent, max_bytes()
    derived = folder / "derived"
    beside: dict[str, list[Path]] = {}  # a source's digest -> its derived folders
    if derived.is_dir():
        for d in derived.iterdir():
            if d.is_dir() and is_own(d):  # a folder of the user's own is never counted
                beside.setdefault(_source_part(d), []).append(d)
    copies = []
    for path in folder.glob("*.parquet"):
        if not is_own(path):
            continue  # the user's own file: neither counted nor removed
        try:
            stamp = path.stat()
        except OSError:
            continue
        size = stamp.st_size + sum(map(_tree_bytes, beside.get(_source_part(path), ())))
        copies.append((stamp.st_mtime_ns, path, size))
    total = sum(size for _, _, size in copies)
    gone = set(beside) - {_source_part(p) for _, p, _ in copies}
    for _, path, size in sorted(copies, key=lambda c: c[0]):  # the least recently used first
        if total <= cap:
            break
        if path == keep:
            continue
        try:
            path.unlink()
        except OSError:
            continue
        gone.add(_source_part(path))
        total -= size
    for part in gone:
        for d in beside.get(part, ()):
            shutil.rmtree(d, ignore_errors=True)


def _source_part(path: Path) -> str:
    """The digest of the source's path that starts a copy's or derived folder's name."""
    return path.name.split("-", 1)[0]


def _tree_bytes(folder: Path) -> int:
    """Bytes of the files in ``folder`` (0 when there is none)."""
    total = 0
    try:
        for f in folder.iterdir():
            try:
                total += f.stat().st_size
            except OSError:
                pass
    except OSError:
        pass
    return total
