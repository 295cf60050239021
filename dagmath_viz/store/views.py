"""Tables and figures derived from a scored run, kept between app starts.

The Overview derives the same values from the same file on every fresh server: the
leaderboard with its 1,000-resample bootstrap, the model spread, the by-difficulty table,
the AUC curve, Table 1, the class counts and the four figures drawn from them; ~1 CPU s
at 100,000 records. They depend on nothing but the file's frame and the code that
derives them, so they are kept beside the frame's columnar copy (:mod:`dagmath_viz.store.frames`)
and read back by a later server.

- **Where**: ``derived/`` in :func:`dagmath_viz.store.frames.cache_dir` (so
  ``DAGMATH_FRAME_CACHE=0`` turns this off too), one folder per source file and key.
- **When**: only for a source whose frame copy exists, i.e. one scored JSONL file that
  :func:`dagmath_viz.run.streamed.scored_jsonl_frame` read on its fast path (no load issues,
  nothing scored by the app), or a raw folder scored by the streaming pool whose run copy
  was read or kept (:attr:`dagmath_viz.run.corpus.Corpus.run_copy`); never an uploaded file
  (:func:`dagmath_viz.store.uploads.is_uploaded`).
- **Key**: the frame copy's key (path, size, ``mtime_ns``, ``ctime_ns``, inode, device, a
  hash of the file's edges, the pandas and pyarrow versions; for a raw folder, its run
  copy's key: every data file's size, times and inode, the answer keys, the versions of
  the code and of math-verify), :data:`VERSION`, and a
  ``code`` string from the caller, such as :func:`dagmath_viz.store.keys.code_digest` of
  the modules that derive the values. Any change is a miss; one key per source file is kept.
- **Exact**: a frame is stored as Parquet with pandas' metadata and a figure as Plotly
  JSON, each only if it reads back equal (dtypes, index and values; the same JSON);
  anything else is not stored.
- **Harmless**: nothing here raises; a cache that cannot be read or written is no cache.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from dagmath_viz import jsonio
from dagmath_viz.store import frames as colcache
from dagmath_viz.store.uploads import is_uploaded

__all__ = ["VERSION", "folder_of", "read", "source_key", "write"]

#: Bump when what is stored, or how, changes.
VERSION = 1
_NAME = re.compile(r"[a-z0-9_]{1,64}")


def source_key(
    paths: Sequence[str | Path],
    answers: str | Path | None,
    code: str,
    run_copy: tuple[str, str] | None = None,
) -> tuple[Path, str] | None:
    """``(folder, key)`` for the derived values of a data source, or None if they are not
    to be kept: not one scored JSONL file with a current frame copy, an answer key given,
    an uploaded file, or the cache turned off. Never raises.

    ``run_copy``: the ``(identity, key)`` of the columnar copy a streamed raw folder's
    frame was read from or kept as (:attr:`dagmath_viz.run.corpus.Corpus.run_copy`); its key
    already covers every data file and the answer keys, so the values are kept beside that
    copy (and go with it, :func:`dagmath_viz.store.frames.run_stem`)."""
    try:
        if run_copy is not None:
            frames = colcache.cache_dir()  # (an upload never has a run copy)
            identity, copy_key = run_copy
            if frames is None:
                return None
            key = f"{VERSION}\0run\0{copy_key}\0{code}"
            return frames / "derived" / colcache.run_stem(identity, key), key
        if len(paths) != 1 or answers is not None:
            return None
        source = Path(paths[0])
        frames = colcache.cache_dir()
        if frames is None or is_uploaded(source) or not source.is_file():
            return None
        frame_key = colcache.file_key(source)
        if not colcache.cache_file(source, frames, frame_key).is_file():
            return None  # not read on the scored fast path, or not copied (yet)
        key = f"{VERSION}\0{frame_key}\0{code}"
        return folder_of(source, key, frames), key
    except Exception:  # a source gone, an unreadable folder: no cache
        return None


def folder_of(source: str | Path, key: str, frames: Path) -> Path:
    """The folder holding the derived values of ``source`` under ``key``."""
    name = colcache.cache_file(source, frames, key).stem
    return frames / "derived" / name


def read(folder: Path, name: str):
    """The value kept as ``name`` in ``folder`` (a frame or a figure), or None."""
    try:
        if not _NAME.fullmatch(name):
            return None
        table = folder / f"{name}.parquet"
        if table.is_file():
            return pd.read_parquet(table)
        figure = folder / f"{name}.json"
        if figure.is_file():
            import plotly.io

            return plotly.io.from_json(figure.read_text(encoding="utf-8"))
        return None
    except Exception:  # corrupt, or written by something else: derive it again
        return None


def write(folder: Path, name: str, value) -> Path | None:
    """Keep ``value`` (a DataFrame or a Plotly figure) as ``name`` in ``folder``, if it
    reads back exactly; other keys' folders of the same source go. Returns the file, or
    None when nothing was written. Never raises."""
    try:
        if not _NAME.fullmatch(name):
            return None
        if isinstance(value, pd.DataFrame):
            data, suffix = _frame_bytes(value), ".parquet"
        elif _is_figure(value):
            data, suffix = _figure_bytes(value), ".json"
        else:
            return None
        if data is None:
            return None
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            _prune(folder)
        target = folder / f"{name}{suffix}"
        jsonio.write_atomic(target, data)  # whole or not at all: a reader never sees half
        return target
    except Exception:  # read-only home, full disk, a dtype Parquet refuses: no cache
        return None


def _frame_bytes(frame: pd.DataFrame) -> bytes | None:
    """``frame`` as Parquet bytes, or None if they would not read back as the same frame."""
    import io

    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    data = buffer.getvalue()
    back = pd.read_parquet(io.BytesIO(data))
    return data if _same_frame(frame, back) else None


def _same_frame(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    try:
        pd.testing.assert_frame_equal(
            a, b, check_exact=True, check_dtype=True, check_index_type=True,
            check_column_type=True, check_names=True, check_flags=True,
        )  # fmt: skip
    except AssertionError:
        return False
    return list(a.columns) == list(b.columns)


def _is_figure(value) -> bool:
    try:
        from plotly.basedatatypes import BaseFigure
    except ImportError:
        return False
    return isinstance(value, BaseFigure)


def _figure_bytes(figure) -> bytes | None:
    """The figure's JSON, or None if the figure read back from it would hold anything
    else: the same JSON values, but for the order of an object's keys and an empty
    object (``"font": {}``, Plotly's defaults), which Plotly leaves out when it reads one."""
    import json

    import plotly.io

    text = plotly.io.to_json(figure, validate=False)
    back = plotly.io.to_json(plotly.io.from_json(text), validate=False)
    same = _without_empty(json.loads(back)) == _without_empty(json.loads(text))
    return text.encode("utf-8") if same else None


def _without_empty(value):
    """``value`` (parsed JSON) with every empty object inside an object left out."""
    if isinstance(value, dict):
        pruned = {k: _without_empty(v) for k, v in value.items()}
        return {k: v for k, v in pruned.items() if v != {}}
    if isinstance(value, list):
        return [_without_empty(v) for v in value]
    return value


def _prune(keep: Path) -> None:
    """Remove the folders of the same source under other keys."""
    prefix = keep.name.split("-", 1)[0] + "-"
    for other in _siblings(keep, prefix):
        shutil.rmtree(other, ignore_errors=True)


def _siblings(keep: Path, prefix: str) -> Iterable[Path]:
    for other in keep.parent.glob(prefix + "*"):
        if other != keep and other.is_dir() and colcache.is_own(other):
            yield other
