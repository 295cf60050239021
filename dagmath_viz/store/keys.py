"""The one key recipe of every on-disk cache: what a kept value was derived from, and by
which code.

A cache keyed on a version string serves stale results once the code changes without a
version bump (DESIGN.md §7). So every cache key here includes :func:`code_digest`: a digest
of the library's own source files and of the versions of the libraries its values come
from. Any change to the code, an upgrade or an edit in a checkout, makes every kept value
a miss; nothing kept under another key is ever read again.
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import orjson

__all__ = ["CODE_ROOT", "LIBRARIES", "cache_key", "code_digest"]

#: The package whose source files derive every kept value.
CODE_ROOT = Path(__file__).resolve().parents[1]
#: Distributions whose behaviour is part of a kept value (verdicts, frames, figures).
LIBRARIES = ("math-verify", "latex2sympy2_extended", "sympy", "pandas", "pyarrow", "plotly")


@cache
def code_digest(*extra: str | Path) -> str:
    """A digest of every ``.py`` file of the package and of ``extra`` (folders or files;
    the app adds its pages), by path and content, and of the installed versions of
    :data:`LIBRARIES`. Computed once per process and arguments.

    >>> len(code_digest()) == 32 and code_digest() == code_digest()
    True
    """
    digest = hashlib.blake2b(digest_size=16)
    for name in LIBRARIES:
        try:
            digest.update(f"{name}={version(name)}\0".encode())
        except PackageNotFoundError:
            digest.update(f"{name}=\0".encode())
    for root in (CODE_ROOT, *map(Path, extra)):
        files = sorted(root.rglob("*.py")) if root.is_dir() else [root]
        for file in files:
            if "__pycache__" in file.parts:
                continue
            digest.update(file.relative_to(root.parent).as_posix().encode() + b"\0")
            digest.update(file.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_key(kind: str, *parts: object) -> str:
    """The key of one kept value: its kind, what it was derived from (``parts``, JSON
    values) and :func:`code_digest`. Every cache of the project builds its key here.

    >>> cache_key("frame", "a.jsonl", 12) == cache_key("frame", "a.jsonl", 12)
    True
    >>> cache_key("frame", "a.jsonl", 12) == cache_key("frame", "a.jsonl", 13)
    False
    """
    return orjson.dumps([kind, code_digest(), *parts]).decode()
