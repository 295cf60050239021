"""Data types shared by every stage: steps, trajectories, scores and the error hierarchy.

All records are frozen dataclasses with tuple fields, so a loaded corpus can be shared
read-only (the app keeps one per data source in ``st.cache_resource``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CLASSES",
    "COHORTS",
    "FAULT_KINDS",
    "DagMathError",
    "Fault",
    "InputError",
    "LoadIssue",
    "Score",
    "Step",
    "Trajectory",
    "StructureError",
    "UnsafePathError",
]

#: Trajectory classes (DEFINITIONS.md §1), exclusive, in display order.
CLASSES = ("perfect", "imperfect", "incorrect", "illegal", "unscored")
#: The paper's Table 1 cohorts; not exclusive.
COHORTS = ("All", "Incorrect", "Correct", "Perfect")


class DagMathError(Exception):
    """Base class of every error this package raises on purpose."""


class InputError(DagMathError):
    """A file or record could not be read; the message names the file and the place."""


class StructureError(DagMathError):
    """A trajectory's steps do not form a graph (:meth:`Trajectory.to_networkx`)."""


class UnsafePathError(DagMathError):
    """A path or archive member would lead outside the folder it belongs to."""


@dataclass(frozen=True, slots=True)
class Step:
    """One derivation step.

    ``step_id`` and ``parents`` are kept exactly as read (they are ints in well-formed
    data); validation reports anything else. ``text`` is the conclusion (``node`` in gold
    files, ``text`` in model output); ``justification`` is ``edge`` / ``thinking``.
    ``tags`` are labels the source gives the step (Thought Anchors' ``function_tags``,
    such as ``active_computation``); empty for DAG-MATH files. ``fields`` are the other
    values the source gives the step, as (name, value) pairs in the source's order
    (Thought Anchors' importance scores, ``accuracy``, ``summary``); values are JSON
    scalars.
    """

    step_id: Any
    parents: tuple[Any, ...] = ()
    text: str = ""
    justification: str = ""
    tags: tuple[str, ...] = ()
    fields: tuple[tuple[str, Any], ...] = ()


#: What a :class:`Fault` is about (DEFINITIONS.md §1, class ``illegal``).
FAULT_KINDS = (
    "record",  # a field read with the wrong type, or missing (found while loading)
    "step_id",  # a step id that is not an integer
    "duplicate_id",
    "parent",  # a parent that is not an integer step id
    "missing_parent",
    "self_reference",
    "forward_reference",
    "cycle",
    "no_steps",
    "no_answer",  # the final step has no text
)


@dataclass(frozen=True, slots=True)
class Fault:
    """One structural fault of a trajectory; ``str()`` is its message.

    ``step_id`` is the id of the step it is about, as read (None when it is about the
    whole trajectory, or about a step that has no id); ``positions`` are the 0-based
    positions of every step it names (a cycle names several; a duplicate id, both steps).
    """

    step_id: Any
    kind: str
    message: str
    positions: tuple[int, ...] = ()

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, slots=True)
class Trajectory:
    """One sampled chain of thought for one problem.

    ``problem_id`` is always a string (JSON files use ints, answer-key objects use string
    keys). ``source`` names the file and the place in it, e.g.
    ``run/m/d/problem_3_all_samples.json:item 2``.
    ``load_errors`` holds faults found while reading the record (wrong field types, ...,
    each a :class:`Fault` of kind ``record``); they make the trajectory illegal.
    ``answer`` and ``answer_correct`` are the source's own final answer and its own grade
    of it, for sources that give them (Thought Anchors' ``base_solution.json``): scoring
    then takes them instead of reading the steps and checking the answer.
    """

    model: str
    dataset: str
    problem_id: str
    sample_id: int
    steps: tuple[Step, ...]
    problem_text: str = ""
    reference_answer: str | None = None
    difficulty: float | None = None
    domain: str | None = None
    source: str = ""
    load_errors: tuple[Fault, ...] = ()
    answer: str | None = None
    answer_correct: bool | None = None

    @property
    def key(self) -> tuple[str, str, str, int]:
        """(model, dataset, problem_id, sample_id): unique within a loaded corpus."""
        return (self.model, self.dataset, self.problem_id, self.sample_id)

    def to_networkx(self):
        """The trajectory as a ``networkx.DiGraph``, for the graph algorithms people use.

        One node per step, keyed by its step id, carrying the step's fields (``text``,
        ``justification``, ``tags``, ``parents``) and its 0-based ``position`` in written
        order; an edge ``parent -> step`` for each parent that is a step of the trajectory
        (a missing parent adds no node). The graph's own attributes are ``model``,
        ``dataset``, ``problem_id``, ``sample_id`` and ``source``. It is the graph as
        written: on a legal trajectory its node and edge counts, density, degrees and
        sinks are those :mod:`dagmath_viz.score.graph` computes (a test holds them equal on
        the real data); on an illegal one it keeps the faulty edges the scorer drops.
        networkx is imported here only: the scorer never needs it.

        Raises:
            StructureError: two steps share an id (they would be one node).
        """
        try:
            import networkx as nx
        except ModuleNotFoundError:
            raise ModuleNotFoundError(
                "Trajectory.to_networkx() needs networkx: pip install networkx "
                "(pip install dagmath-viz installs it)",
                name="networkx",
            ) from None

        graph = nx.DiGraph(
            model=self.model,
            dataset=self.dataset,
            problem_id=self.problem_id,
            sample_id=self.sample_id,
            source=self.source,
        )
        for position, step in enumerate(self.steps):
            if not _hashable(step.step_id):
                raise StructureError(
                    f"{self.source or self.problem_id}: step {position + 1}'s id "
                    f"{step.step_id!r} cannot name a node"
                )
            if step.step_id in graph:
                raise StructureError(
                    f"{self.source or self.problem_id}: step id {step.step_id!r} is used twice; "
                    "a graph needs one node per step"
                )
            graph.add_node(
                step.step_id,
                position=position,
                text=step.text,
                justification=step.justification,
                tags=step.tags,
                parents=step.parents,
            )
        for step in self.steps:
            graph.add_edges_from(
                (p, step.step_id) for p in step.parents if _hashable(p) and p in graph
            )
        return graph


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:  # a list or object read where an id belongs
        return False
    return True


@dataclass(frozen=True, slots=True)
class LoadIssue:
    """A problem met while loading: which file, where in it, and what went wrong."""

    file: str
    location: str
    message: str
    severity: str = "error"  # "error": data was lost or marked illegal; "warning": filled in

    def __str__(self) -> str:
        where = f"{self.file}: {self.location}" if self.location else self.file
        return f"{where}: {self.message}"


@dataclass(frozen=True, slots=True)
class Score:
    """Everything computed for one trajectory (DEFINITIONS.md §1 and §3).

    ``final_correct`` and ``perfect`` are ``None`` when there is no reference answer.
    ``dead_ends`` are sorted step ids; for an illegal trajectory they are computed on its
    well-formed edges and ``closed`` is always False.
    """

    n_nodes: int
    n_edges: int
    density: float
    max_in_degree: int
    max_out_degree: int
    dead_ends: tuple[int, ...]
    closeness_rate: float
    closed: bool
    predicted_answer: str | None
    reference_answer: str | None
    final_correct: bool | None
    perfect: bool | None
    trajectory_class: str
    errors: tuple[str, ...] = field(default=())
    #: share of steps that are the final step or its ancestors (DEFINITIONS.md §7)
    ancestor_share: float = 1.0
    #: id of the step the predicted answer was read from; None when no step has a \boxed{}
    answer_step: Any = None
    #: the per-trajectory metrics of the record contract's graph functions, as (name,
    #: value) pairs (:data:`dagmath_viz.score.record.GRAPH_METRICS`)
    metrics: tuple[tuple[str, Any], ...] = ()
