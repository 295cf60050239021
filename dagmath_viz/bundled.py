"""Is the data shown the bundled *simulated* sample set? (So every page can say so.)

``sample_data/build.py`` writes a marker file, :data:`MARKER_NAME`, into ``sample_data/runs``.
Data read from that folder, from a folder inside it, or from the ``sample_data`` folder that
holds it, is the bundled set. A user's own folder has no marker, so nothing is labelled
there; copying the marker along with the sample data keeps the label.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

__all__ = ["BUNDLED_NOTICE", "MARKER_NAME", "bundled_notice", "is_bundled_sample"]

MARKER_NAME = "SIMULATED_SAMPLE_DATA.txt"
BUNDLED_NOTICE = (
    "Simulated data: this is the bundled sample set. No language model wrote these "
    "trajectories; they are random walks over generated task DAGs (sample_data/README.md)."
)


def _holds_marker(folder: Path) -> bool:
    return (folder / MARKER_NAME).is_file() or (folder / "runs" / MARKER_NAME).is_file()


def is_bundled_sample(paths: Iterable[str | Path]) -> bool:
    """True when any of ``paths`` is, lies inside, or holds the bundled sample folder.

    Args:
        paths: the files or folders the data was loaded from.

    Example:
        >>> is_bundled_sample([])
        False
    """
    for raw in paths:
        path = Path(raw)
        folders = [path] if path.is_dir() else []
        folders += list(path.parents)
        if any(_holds_marker(f) for f in folders[:12]):  # a bounded walk up the tree
            return True
    return False


def bundled_notice(paths: Iterable[str | Path]) -> str | None:
    """:data:`BUNDLED_NOTICE` when ``paths`` hold the bundled sample set, else None.

    A page shows it in one line: ``if note := bundled_notice([corpus.label]): st.info(note)``.
    """
    return BUNDLED_NOTICE if is_bundled_sample(paths) else None
