"""Trajectories built straight from the Thought Anchors files, for render tests.

``../shared/data/thought-anchors/<model>/<correct|incorrect>_base_solution/problem_<id>/
chunks_labeled.json``: each chunk is a step (``chunk_idx`` 0-based, so step id = idx + 1),
``depends_on`` (chunk indices as strings) gives its parents. Used by the render tests so they
do not depend on the app's loader.
"""

from __future__ import annotations

import json
from pathlib import Path

from dagmath_viz.schema import Step, Trajectory

ROOT = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "thought-anchors"


def files(root: Path = ROOT) -> list[Path]:
    """Every ``chunks_labeled.json`` under ``root``, sorted."""
    return sorted(root.resolve().glob("*/*/*/chunks_labeled.json"))


def trajectory(path: Path) -> Trajectory:
    """The chunks of one file as a trajectory (ids 1..n; parents from ``depends_on``)."""
    chunks = json.loads(path.read_text(encoding="utf-8"))
    steps = []
    for chunk in chunks:
        sid = int(chunk["chunk_idx"]) + 1
        parents = tuple(int(p) + 1 for p in chunk.get("depends_on") or () if str(p).isdigit())
        steps.append(Step(sid, parents, str(chunk.get("chunk", ""))))
    model, kind, problem = path.parts[-4], path.parts[-3], path.parts[-2]
    return Trajectory(model, kind, problem.removeprefix("problem_"), 0, tuple(steps))
