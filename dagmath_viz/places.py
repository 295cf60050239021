"""Where the package keeps files between runs unless told otherwise: one cache folder.

``$DAGMATH_CACHE_DIR``, else ``$XDG_CACHE_HOME/dagmath-viz``, else ``~/.cache/dagmath-viz``
(on a machine with no home folder, ``dagmath-viz`` in the temporary folder). The answer
checker keeps its verdicts there (:func:`dagmath_viz.answers.check.default_cache_file`),
and :mod:`dagmath_viz.store.frames` its columnar copies and derived values (``frames/``).
It lives in the core layer so that both find it without the store asking the checker.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["CACHE_DIR_ENV", "cache_root"]

#: Environment variable naming the cache folder.
CACHE_DIR_ENV = "DAGMATH_CACHE_DIR"


def cache_root() -> Path:
    """The cache folder in force (read from the environment at each call; not created)."""
    root = os.environ.get(CACHE_DIR_ENV)
    if root:
        return Path(root)
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:  # no home folder (a bare container): a temporary one
            import tempfile

            base = tempfile.gettempdir()
    return Path(base) / "dagmath-viz"
