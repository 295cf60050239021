"""``dagmath score`` on a million trajectories: wall time, CPU time and peak memory.

``python benchmarks/million.py [COPIES] [--data-dir DIR] [--links-dir DIR]`` takes the
20,000-trajectory run from DIR (generated there by ``generate.py`` unless a complete copy
is already there; default ``benchmarks/.data``, only read otherwise), hard-links it COPIES
times (default 50: 1,000,000 trajectories, 31,250 files, 37 GB of JSON as the scorer reads
it but one copy on disk) under ``--links-dir`` (default DIR/million; it must be on the
same filesystem as DIR) and scores them all in one command with an empty verdict cache,
the whole process tree's RSS sampled every 20 ms. Prints one JSON line.

Hard links, not symbolic ones: the scorer refuses a file whose link leads outside the
folder it was given.
"""

from __future__ import annotations

import argparse
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("copies", nargs="?", type=int, default=50)
    parser.add_argument("--data-dir", type=Path, default=HERE / ".data")
    parser.add_argument("--links-dir", type=Path, help="default: DATA_DIR/million")
    args = parser.parse_args(argv)
    result = bench_million(args.data_dir, args.copies, args.links_dir)
    print(orjson.dumps(result).decode())
    return 0


def bench_million(data_dir: Path, copies: int = 50, links_dir: Path | None = None) -> dict:
    """One ``dagmath score`` over ``copies`` linked copies of the 20,000-trajectory run:
    wall and CPU seconds, peak RSS of the process tree, records written."""
    source, summary = ensure_run(20_000, data_dir)
    links = links_dir or data_dir / "million"
    links.mkdir(parents=True, exist_ok=True)
    roots = link_copies(source, links, copies)
    scratch = Path(tempfile.mkdtemp(dir=links, prefix="million-"))
    load_before = [round(x, 2) for x in os.getloadavg()]
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
    result["load_before"] = load_before
    result["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return result


def link_copies(source: Path, target: Path, copies: int) -> list[Path]:
    """``copies`` hard-linked copies of the run ``source`` under ``target``."""
    roots = []
    for i in range(1, copies + 1):
        root = target / f"copy{i:02d}"
        if not root.exists():
            partial = target / f".copy{i:02d}.partial"  # a copy cut short is never used
            shutil.rmtree(partial, ignore_errors=True)
            shutil.copytree(source, partial, copy_function=os.link)
            partial.rename(root)
        roots.append(root)
    return roots


if __name__ == "__main__":
    sys.exit(main())
