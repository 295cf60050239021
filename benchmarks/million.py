"""``dagmath score`` on a million trajectories: wall time, CPU time and peak memory.

``python benchmarks/million.py [COPIES]`` generates the 20,000-trajectory run once
(``generate.py``), links it COPIES times (default 50: 1,000,000 trajectories, 31,250 files,
37 GB of JSON as the scorer reads it but one copy on disk) under
``benchmarks/.data/million/copyNN`` and scores them all in one command with an empty
verdict cache, the whole process tree's RSS sampled every 20 ms. Prints one JSON line.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from generate import ensure_run  # noqa: E402
from run import PY, run_timed  # noqa: E402


def link_copies(source: Path, target: Path, copies: int) -> list[Path]:
    """``copies`` hard-linked copies of the run ``source`` under ``target``."""
    roots = []
    for i in range(1, copies + 1):
        root = target / f"copy{i:02d}"
        if not root.exists():
            shutil.copytree(source, root, copy_function=os.link)
        roots.append(root)
    return roots


def main(argv: list[str] | None = None) -> int:
    copies = int((argv or sys.argv[1:] or ["50"])[0])
    data = HERE / ".data"
    source, summary = ensure_run(20_000, data)
    roots = link_copies(source, data / "million", copies)
    scratch = Path(tempfile.mkdtemp(dir=data, prefix="million-"))
    try:
        out = scratch / "scored.jsonl"
        cmd = [PY, "-m", "dagmath_viz", "score", *map(str, roots), "-o", str(out),
               "--cache-dir", str(scratch / "cache")]  # fmt: skip
        result = run_timed(cmd, sample_memory=True)
        with out.open("rb") as handle:
            result["records"] = sum(1 for _ in handle)
        result["scored_mib"] = round(out.stat().st_size / 2**20, 1)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    result["trajectories"] = summary["trajectories"] * copies
    result["json_gib"] = round(summary["bytes"] * copies / 2**30, 1)
    result["load_after"] = [round(x, 2) for x in os.getloadavg()]
    print(orjson.dumps(result).decode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
