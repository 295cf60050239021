"""Phase 2: the stochastic process over a task DAG (DEFINITIONS.md §5, paper §2.2, Eq. 2.1).

A *task DAG* is a problem's full derivation graph in the gold layout: the gold solution plus
detours, with one or more sinks (answer statements). A trajectory is drawn step by step:
the first step is a source; each next step is drawn from the **admissible set** (nodes whose
parents are all visited and which are not visited yet) with the weights of a
:class:`Policy`; the walk stops at the first sink it visits. A *sink* (the paper's V_out) has
incoming edges and no outgoing ones: a given that nothing uses is a source, never a sink, so
a walk that visits it goes on (DEFINITIONS.md §5).

Correct sinks (ours): the sinks whose answer -- the last ``\\boxed{...}`` of the node text,
else the whole text -- equals the reference answer (the gold record's ``final_answer``) after
removing all whitespace and surrounding ``$``. Plain string equality, not math-verify: the
hand-written task DAGs box their answers in the reference's own form, and the simulator
then needs no answer-check worker. Every other sink is a wrong sink.

Policy (ours): ``weight(v) = exp(focus)`` if ``v`` is a correct sink or one of its
ancestors, ``1`` otherwise, and that weight times ``exp(-aversion)`` if ``v`` is a wrong
sink; the next step is drawn with probability ``weight / total weight`` over the admissible
set. ``focus = 0, aversion = 0`` is the uniform policy; a large focus approaches a perfect
reasoner. The second knob, *wrong-sink aversion*, models search: a model that declines to
stop at a wrong answer and keeps exploring until it finds the right one. Raising it lifts
PASS@1 while PRR barely moves, since the extra correct walks wander through detours (the
paper's "search inflates PASS@1"). (Computed as ``exp(-focus)`` for the other nodes: the
same distribution, and no overflow for a large focus.)

A visited walk is *perfect* when it ends at a correct sink and every visited node but the
last has a child among the visited nodes (logically closed, DEFINITIONS.md §1). Exact PRR
and PASS@1 come from dynamic programming over visited sets (bitmasks); Monte-Carlo
estimates come from the same sampler that writes trajectories.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dagmath_viz import jsonio
from dagmath_viz.answers.check import extract_boxed
from dagmath_viz.formats import official
from dagmath_viz.schema import DagMathError, InputError, Step, UnsafePathError
from dagmath_viz.score.validation import validate_steps

__all__ = [
    "DEFAULT_MAX_STATES",
    "ExactResult",
    "ExactTooLargeError",
    "MonteCarloResult",
    "Policy",
    "TaskDag",
    "TaskDagError",
    "TaskNode",
    "dump_json",
    "exact_rates",
    "load_task_dag",
    "monte_carlo_rates",
    "parse_task_dag",
    "sample_path",
    "sample_walks",
    "simulate_samples",
    "walk_outcome",
    "walk_to_record",
    "write_samples",
]

#: The exact method refuses once this many visited sets (states) have been reached.
DEFAULT_MAX_STATES = 200_000


class TaskDagError(InputError):
    """A task DAG file cannot be read or is not a usable task DAG; the message names it."""


class ExactTooLargeError(DagMathError):
    """The exact dynamic programme would need more visited-set states than allowed."""


# --------------------------------------------------------------------------- task DAGs


@dataclass(frozen=True, slots=True)
class TaskNode:
    """One node of a task DAG; ``parents`` are 0-based positions of earlier nodes."""

    step_id: int
    parents: tuple[int, ...]
    text: str
    justification: str = ""


@dataclass(frozen=True, slots=True)
class TaskDag:
    """A problem's task DAG, nodes in topological order (positions 0..n-1).

    Attributes:
        problem_id: as in the file (an int in the gold layout).
        reference_answer: the gold record's ``final_answer``.
        nodes: the nodes; parents are positions.
        correct_sinks: positions of the sinks whose answer matches the reference.
        difficulty, domain: copied into simulated samples when present.
        source: the file it came from, for messages.
    """

    problem_id: int | str
    problem_text: str
    reference_answer: str
    nodes: tuple[TaskNode, ...]
    correct_sinks: frozenset[int]
    difficulty: float | None = None
    domain: str | None = None
    source: str = "<memory>"

    @property
    def children(self) -> tuple[tuple[int, ...], ...]:
        """For each position, the positions that list it as a parent (ascending)."""
        out: list[list[int]] = [[] for _ in self.nodes]
        for child, node in enumerate(self.nodes):
            for p in node.parents:
                out[p].append(child)
        return tuple(tuple(c) for c in out)

    @property
    def sinks(self) -> tuple[int, ...]:
        """Positions of the sinks: nodes with parents and without children (§5).

        A given (no parents) that nothing uses is a source, never a sink.
        """
        return tuple(i for i, c in enumerate(self.children) if not c and self.nodes[i].parents)

    @property
    def focus_set(self) -> frozenset[int]:
        """The correct sinks and all their ancestors: the nodes a focused policy favours."""
        seen = set(self.correct_sinks)
        stack = list(self.correct_sinks)
        while stack:
            for p in self.nodes[stack.pop()].parents:
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
        return frozenset(seen)


def _normalise_answer(text: str) -> str:
    return "".join(text.split()).strip("$")


def _sink_answer(text: str) -> str:
    boxed = extract_boxed(text)
    return boxed if boxed is not None else text


def load_task_dag(path: str | Path) -> TaskDag:
    """Read a task DAG file in the gold layout (a JSON list holding one problem object).

    Raises:
        TaskDagError: unreadable file, invalid JSON, or not a usable task DAG.
    """
    try:
        obj = jsonio.read_json(path)
    except InputError as exc:  # read as every file is: BOM, nesting limit, located errors
        raise TaskDagError(str(exc)) from None
    return parse_task_dag(obj, source=str(path))


def parse_task_dag(obj: Any, source: str = "<memory>") -> TaskDag:
    """Build a :class:`TaskDag` from a parsed gold-layout document (list of one, or an object).

    Raises:
        TaskDagError: the document is not a usable task DAG; the message starts with ``source``.
    """

    def fail(message: str) -> TaskDagError:
        return TaskDagError(f"{source}: {message}")

    if isinstance(obj, list):
        if len(obj) != 1:
            raise fail(f"holds {len(obj)} records; a task DAG file holds exactly one problem")
        obj = obj[0]
    if not isinstance(obj, dict):
        raise fail(f"expected a problem object, found JSON {type(obj).__name__}")
    pid = obj.get("problem_id")
    if isinstance(pid, bool) or not isinstance(pid, int | str) or str(pid).strip() == "":
        raise fail("field 'problem_id' is missing or not an integer or text")
    reference = obj.get("final_answer")
    if isinstance(reference, bool) or not isinstance(reference, str | int) or not str(reference):
        raise fail("field 'final_answer' (the reference answer) is missing or empty")
    nodes = _parse_nodes(obj.get("steps"), fail)
    used = {p for n in nodes for p in n.parents}
    sinks = [i for i, n in enumerate(nodes) if i not in used and n.parents]
    want = _normalise_answer(str(reference))
    correct = frozenset(i for i in sinks if _normalise_answer(_sink_answer(nodes[i].text)) == want)
    if not correct:
        raise fail(f"no sink's boxed answer equals the reference answer {str(reference)!r}")
    return TaskDag(
        problem_id=pid,
        problem_text=text if isinstance(text := obj.get("problem_text"), str) else "",
        reference_answer=str(reference),
        nodes=nodes,
        correct_sinks=correct,
        difficulty=_number_or_none(obj.get("difficulty")),
        domain=obj.get("domain") if isinstance(obj.get("domain"), str) else None,
        source=source,
    )


def _number_or_none(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return value


def _parse_nodes(raw: Any, fail) -> tuple[TaskNode, ...]:
    """Check fields and structure (ids, parents earlier, acyclic) of the steps list."""
    if not isinstance(raw, list) or not raw:
        raise fail("field 'steps' must be a non-empty list")
    steps: list[Step] = []
    for i, item in enumerate(raw, start=1):
        if not isinstance(item, dict):
            raise fail(f"step at position {i}: expected an object")
        parents = item.get("direct_dependent_steps")
        if parents is not None and not isinstance(parents, list):
            raise fail(f"step at position {i}: direct_dependent_steps must be a list or null")
        text, edge = item.get("node"), item.get("edge", "")
        if not isinstance(text, str) or not isinstance(edge, str):
            raise fail(f"step at position {i}: 'node' and 'edge' must be text")
        steps.append(Step(item.get("step_id"), tuple(parents or ()), text, edge))
    checked = validate_steps(tuple(steps))
    if checked.faults:
        more = f" (and {len(checked.faults) - 1} more faults)" if len(checked.faults) > 1 else ""
        raise fail(checked.faults[0].message + more)
    return tuple(
        TaskNode(s.step_id, checked.graph.parents[i], s.text, s.justification)
        for i, s in enumerate(steps)
    )


# --------------------------------------------------------------------------- policies


@dataclass(frozen=True, slots=True)
class Policy:
    """A transition policy: ``uniform``, or ``focused`` with ``focus >= 0`` and ``aversion >= 0``.

    ``aversion`` is the wrong-sink aversion b: a wrong sink's weight is multiplied by
    ``exp(-b)``.

    Example:
        >>> Policy("focused", 2.0).label
        'focused(focus=2)'
        >>> Policy("focused", 1.0, aversion=3.0).label
        'focused(focus=1, aversion=3)'
    """

    kind: str = "uniform"
    focus: float = 0.0
    aversion: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in ("uniform", "focused"):
            raise DagMathError(f"unknown policy {self.kind!r}; use uniform or focused")
        for name, value in (("focus", self.focus), ("wrong-sink aversion", self.aversion)):
            if not math.isfinite(value) or value < 0:
                raise DagMathError(f"{name} must be a finite number >= 0, got {value!r}")
        if self.kind == "uniform" and (self.focus != 0 or self.aversion != 0):
            raise DagMathError(
                "the uniform policy takes no focus or wrong-sink aversion; use --policy focused"
            )

    @property
    def label(self) -> str:
        if self.kind == "uniform":
            return "uniform"
        extra = f", aversion={self.aversion:g}" if self.aversion else ""
        return f"focused(focus={self.focus:g}{extra})"

    def weights(self, dag: TaskDag) -> tuple[float, ...]:
        """Unnormalised weight of each node (see the module docstring for the formula)."""
        favoured = dag.focus_set
        other = math.exp(-self.focus)
        wrong = set(dag.sinks) - dag.correct_sinks
        averse = math.exp(-self.aversion)
        return tuple(
            (1.0 if i in favoured else other) * (averse if i in wrong else 1.0)
            for i in range(len(dag.nodes))
        )


# --------------------------------------------------------------------------- sampling


@dataclass(frozen=True, slots=True)
class _Compiled:
    """Bitmask form of a task DAG and a policy, for the sampler and the exact method."""

    n_parents: tuple[int, ...]
    parent_mask: tuple[int, ...]
    child_mask: tuple[int, ...]
    children: tuple[tuple[int, ...], ...]
    sources: tuple[int, ...]
    is_sink: tuple[bool, ...]
    correct: tuple[bool, ...]
    weights: tuple[float, ...]


def _compile(dag: TaskDag, policy: Policy) -> _Compiled:
    children = dag.children
    sinks = set(dag.sinks)
    return _Compiled(
        n_parents=tuple(len(n.parents) for n in dag.nodes),
        parent_mask=tuple(sum(1 << p for p in n.parents) for n in dag.nodes),
        child_mask=tuple(sum(1 << c for c in cs) for cs in children),
        children=children,
        sources=tuple(i for i, n in enumerate(dag.nodes) if not n.parents),
        is_sink=tuple(i in sinks for i in range(len(dag.nodes))),
        correct=tuple(i in dag.correct_sinks for i in range(len(dag.nodes))),
        weights=policy.weights(dag),
    )


def _draw(admissible: list[int], weights: tuple[float, ...], rng: random.Random) -> int:
    """Remove and return one admissible node, drawn with probability weight / total."""
    total = sum(weights[v] for v in admissible)
    r = rng.random() * total
    acc = 0.0
    chosen = len(admissible) - 1
    for i, v in enumerate(admissible):
        acc += weights[v]
        if r < acc:
            chosen = i
            break
    else:  # rounding left r at the very top: take the last node that has weight
        while weights[admissible[chosen]] == 0.0:
            chosen -= 1
    return admissible.pop(chosen)


def _walk(c: _Compiled, rng: random.Random) -> list[int]:
    missing = list(c.n_parents)
    admissible = list(c.sources)
    walk: list[int] = []
    while True:
        v = _draw(admissible, c.weights, rng)
        walk.append(v)
        if c.is_sink[v]:
            return walk
        for child in c.children[v]:
            missing[child] -= 1
            if missing[child] == 0:
                admissible.append(child)


def _closed(c: _Compiled, visited: int, nodes: Sequence[int]) -> bool:
    return all(c.child_mask[v] & visited for v in nodes)


def _outcome(c: _Compiled, walk: Sequence[int]) -> tuple[bool, bool]:
    visited = 0
    for v in walk:
        visited |= 1 << v
    correct = c.correct[walk[-1]]
    return correct, correct and _closed(c, visited, walk[:-1])


def walk_outcome(dag: TaskDag, walk: Sequence[int]) -> tuple[bool, bool]:
    """(final correct, perfect) of a walk given as node positions in visiting order."""
    return _outcome(_compile(dag, Policy()), walk)


def sample_walks(dag: TaskDag, policy: Policy, n: int, seed: int | str) -> list[list[int]]:
    """``n`` walks (node positions in visiting order) from ``random.Random(seed)``.

    Python's Mersenne Twister and string seeding are stable across versions and platforms,
    so the same seed gives the same walks everywhere.
    """
    c = _compile(dag, policy)
    rng = random.Random(seed)
    return [_walk(c, rng) for _ in range(n)]


@dataclass(frozen=True, slots=True)
class MonteCarloResult:
    """Monte-Carlo PRR and PASS@1 with their standard errors sqrt(p(1 - p) / n)."""

    n: int
    prr: float
    prr_se: float
    pass_at_1: float
    pass_at_1_se: float


def monte_carlo_rates(
    dag: TaskDag, policy: Policy, n: int, seed: int | str = 0
) -> MonteCarloResult:
    """Estimate PRR and PASS@1 from ``n`` sampled walks.

    Raises:
        DagMathError: ``n`` is not positive.
    """
    if n < 1:
        raise DagMathError(f"the number of samples must be positive, got {n}")
    c = _compile(dag, policy)
    rng = random.Random(seed)
    n_correct = n_perfect = 0
    for _ in range(n):
        correct, perfect = _outcome(c, _walk(c, rng))
        n_correct += correct
        n_perfect += perfect
    prr, pass1 = n_perfect / n, n_correct / n
    return MonteCarloResult(
        n=n,
        prr=prr,
        prr_se=math.sqrt(prr * (1 - prr) / n),
        pass_at_1=pass1,
        pass_at_1_se=math.sqrt(pass1 * (1 - pass1) / n),
    )


# --------------------------------------------------------------------------- exact method


@dataclass(frozen=True, slots=True)
class ExactResult:
    """Exact PRR and PASS@1 of a policy, and how many visited-set states were reached."""

    prr: float
    pass_at_1: float
    n_states: int


def exact_rates(dag: TaskDag, policy: Policy, max_states: int = DEFAULT_MAX_STATES) -> ExactResult:
    """Exact PRR and PASS@1 by dynamic programming over visited sets.

    The probability of each non-absorbed visited set (a bitmask) is pushed forward one
    step at a time; a set reached by several orders is stored once (this is the
    memoisation). Mass that steps onto a sink is absorbed and classified.

    Raises:
        ExactTooLargeError: more than ``max_states`` visited sets would be reached.
    """
    c = _compile(dag, policy)
    full = (1 << len(dag.nodes)) - 1
    layer: dict[int, float] = {0: 1.0}
    totals = [0.0, 0.0]  # absorbed mass: [perfect, correct]
    n_states = 1
    while layer:
        following: dict[int, float] = {}
        for visited, mass in layer.items():
            for v, share in _steps(c, full & ~visited, mass):
                after = visited | 1 << v
                if c.is_sink[v]:
                    _absorb(c, totals, v, visited, share)
                elif after in following:
                    following[after] += share
                elif n_states + len(following) >= max_states:
                    raise ExactTooLargeError(
                        f"{dag.source}: the exact method needs more than {max_states:,} "
                        "visited-set states for this task DAG; use the Monte-Carlo estimate "
                        "(--samples N) instead"
                    )
                else:
                    following[after] = share
        n_states += len(following)
        layer = following
    return ExactResult(prr=totals[0], pass_at_1=totals[1], n_states=n_states)


def _steps(c: _Compiled, unvisited: int, mass: float) -> list[tuple[int, float]]:
    """Each admissible node and the probability mass that steps onto it."""
    admissible = [
        v for v in range(len(c.weights)) if unvisited >> v & 1 and not c.parent_mask[v] & unvisited
    ]
    total = sum(c.weights[v] for v in admissible)
    return [(v, mass * c.weights[v] / total) for v in admissible]


def _absorb(c: _Compiled, totals: list[float], sink: int, visited: int, share: float) -> None:
    """Classify mass that stops at ``sink`` after visiting ``visited``."""
    if c.correct[sink]:
        totals[1] += share
        if _closed(c, visited | 1 << sink, _members(visited)):
            totals[0] += share


def _members(mask: int) -> list[int]:
    out = []
    v = 0
    while mask:
        if mask & 1:
            out.append(v)
        mask >>= 1
        v += 1
    return out


# --------------------------------------------------------------------------- output


def walk_to_record(dag: TaskDag, walk: Sequence[int], sample_id: int, model: str) -> dict:
    """One sample in the official model-output layout, steps renumbered 1..L.

    ``thinking`` is the node's edge text, ``text`` its node text; parents are the
    trajectory's own step ids (ascending), ``null`` for a source.
    """
    number = {v: i for i, v in enumerate(walk, start=1)}
    steps = []
    for v in walk:
        node = dag.nodes[v]
        parents = sorted(number[p] for p in node.parents)
        steps.append(
            {
                "step_id": number[v],
                "thinking": node.justification,
                "direct_dependent_steps": parents or None,
                "text": node.text,
            }
        )
    record = {
        "problem_id": dag.problem_id,
        "sample_id": sample_id,
        "problem_text": dag.problem_text,
        "steps": steps,
        "final_answer": steps[-1]["text"],
        "metadata": {"model": model, "reasoning_content": ""},
        "answer": dag.reference_answer,
        "difficulty": dag.difficulty,
    }
    if dag.domain is not None:
        record["domain"] = dag.domain
    return record


def simulate_samples(
    dag: TaskDag, policy: Policy, n: int, seed: int | str, model: str
) -> list[dict]:
    """``n`` simulated samples (sample ids 0..n-1) in the official model-output layout."""
    walks = sample_walks(dag, policy, n, seed)
    return [walk_to_record(dag, w, i, model) for i, w in enumerate(walks)]


def dump_json(obj: Any) -> str:
    """The canonical text of a written file: UTF-8 text, trailing newline.

    A list is written one item per line (``[``, the items, ``]``): compact enough that the
    bundled sample data stays small, and a diff still shows which sample changed. Anything
    else is one line.
    """
    if isinstance(obj, list) and obj:
        items = ",\n".join(json.dumps(item, ensure_ascii=False) for item in obj)
        return f"[\n{items}\n]\n"
    return json.dumps(obj, ensure_ascii=False) + "\n"


def _safe_part(value: str, what: str) -> str:
    if not value or value in (".", "..") or "/" in value or "\\" in value or "\0" in value:
        raise UnsafePathError(f"{what} {value!r} cannot be used as a folder or file name")
    return value


def sample_path(out_dir: str | Path, model: str, dataset: str, problem_id: int | str) -> Path:
    """``out_dir/<model>/<dataset>/problem_<id>_all_samples.json``.

    Raises:
        UnsafePathError: a name would leave its folder (empty, ``..``, or holds a slash).
    """
    pid = _safe_part(str(problem_id), "problem id")
    return (
        Path(out_dir)
        / _safe_part(model, "model name")
        / _safe_part(dataset, "dataset name")
        / official.file_name(pid)
    )


def write_samples(
    records: list[dict], out_dir: str | Path, model: str, dataset: str, problem_id: int | str
) -> Path:
    """Write ``records`` as the official layout's sample file; returns its path."""
    path = sample_path(out_dir, model, dataset, problem_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dump_json(records).encode("utf-8"))  # "\n" on every platform
    return path
