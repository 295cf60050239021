"""Structural faults of one trajectory, and its graph of well-formed edges.

Faults (DEFINITIONS.md §1, class ``illegal``): duplicate step ids, ids that are not
integers, a parent that does not exist, a parent that is not earlier than its child (a self
or forward reference), a cycle, no steps, no final answer. A faulty trajectory is kept; its
graph keeps only the edges that are well formed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dagmath_viz.schema import Fault, Step, Trajectory
from dagmath_viz.score.graph import StepGraph
from dagmath_viz.text import short_repr, step_name

__all__ = ["Fault", "Validation", "is_step_id", "step_name", "validate", "validate_steps"]


def validate(traj: Trajectory) -> Validation:
    """All faults of a trajectory: load errors, structure, and a missing final answer."""
    result = validate_steps(traj.steps)
    faults = list(traj.load_errors) + list(result.faults)
    if not traj.steps:
        faults.append(Fault(None, "no_steps", "no steps"))
    elif not traj.steps[-1].text.strip():
        sid = traj.steps[-1].step_id
        message = f"{step_name(sid)}: final step has no answer text"
        faults.append(Fault(sid, "no_answer", message, (len(traj.steps) - 1,)))
    return Validation(graph=result.graph, faults=tuple(faults))


def validate_steps(steps: tuple[Step, ...]) -> Validation:
    """Check the steps' ids and references; keep only well-formed edges.

    Messages name the step (``step 4: parent 9 does not exist``); callers add the file,
    problem and sample.
    """
    faults: list[Fault] = []
    position: dict[int, int] = {}
    for i, step in enumerate(steps):
        sid = step.step_id
        if not is_step_id(sid):
            message = f"step at position {i + 1}: step_id {short_repr(sid)} is not an integer"
            faults.append(Fault(sid, "step_id", message, (i,)))
        elif sid in position:
            first = position[sid]
            message = f"step {sid}: duplicate step_id (first at position {first + 1})"
            faults.append(Fault(sid, "duplicate_id", message, (first, i)))
        else:
            position[sid] = i

    parents_out: list[tuple[int, ...]] = []
    forward: list[tuple[int, int]] = []  # (child pos, parent pos) for the cycle check
    for i, step in enumerate(steps):
        kept: set[int] = set()
        sid = step.step_id
        name = step_name(sid)
        for p in step.parents:
            if not is_step_id(p):
                message = f"{name}: parent {short_repr(p)} is not an integer step id"
                faults.append(Fault(sid, "parent", message, (i,)))
            elif p not in position:
                faults.append(
                    Fault(sid, "missing_parent", f"{name}: parent {p} does not exist", (i,))
                )
            elif position[p] == i:
                faults.append(Fault(sid, "self_reference", f"{name}: cites itself", (i,)))
            elif position[p] > i:
                message = f"{name}: parent {p} is not an earlier step"
                faults.append(Fault(sid, "forward_reference", message, (i,)))
                forward.append((i, position[p]))
            else:
                kept.add(position[p])
        parents_out.append(tuple(sorted(kept)))

    graph = StepGraph(ids=tuple(s.step_id for s in steps), parents=tuple(parents_out))
    if forward:
        cycle = _find_cycle(graph, forward)
        if cycle:
            message = "cycle: " + " -> ".join(str(graph.ids[c]) for c in cycle)
            faults.append(Fault(graph.ids[cycle[0]], "cycle", message, tuple(cycle[:-1])))
    return Validation(graph=graph, faults=tuple(faults))


def _find_cycle(graph: StepGraph, forward: list[tuple[int, int]]) -> list[int] | None:
    """A cycle through the forward references, if any, as positions (first one repeated).

    An iterative depth-first search, linear in steps + references: networkx's
    ``find_cycle`` is quadratic on long chains (10,000 forward references took minutes),
    and a recursive search would overflow Python's stack.
    """
    n = graph.n_nodes
    children: list[list[int]] = [[] for _ in range(n)]
    for child, parents in enumerate(graph.parents):
        for p in parents:
            children[p].append(child)
    for child, parent in forward:
        children[parent].append(child)
    state = [0] * n  # 0: not seen, 1: on the current path, 2: finished
    for start in range(n):
        if state[start]:
            continue
        path = [start]
        todo = [iter(children[start])]
        state[start] = 1
        while todo:
            nxt = next(todo[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                todo.pop()
            elif state[nxt] == 1:
                return path[path.index(nxt) :] + [nxt]
            elif state[nxt] == 0:
                state[nxt] = 1
                path.append(nxt)
                todo.append(iter(children[nxt]))
    return None


def is_step_id(value: Any) -> bool:
    """True for a JSON integer (``True``/``False`` and ``3.0`` are not step ids)."""
    return type(value) is int


@dataclass(frozen=True, slots=True)
class Validation:
    """The well-formed graph of a trajectory and the structural faults found in it."""

    graph: StepGraph
    faults: tuple[Fault, ...]

    @property
    def legal(self) -> bool:
        return not self.faults
