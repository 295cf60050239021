"""Problem generator (the efficiency paper's Algorithm 2 and §4.3), seeded and verified.

The goal and its shortest proof are sampled top down: the goal is a cont of a fresh agent;
each cont node above the leaves picks a rule that concludes it (comparison, transfer, union,
rate, comparison of differences) and creates its premises with fresh agents (names are drawn
without replacement). One premise (the spine) gets the remaining depth, so the proof has
exactly the requested depth. Numbers are then filled in bottom up, so every quantity is a
natural number and the program is numerically consistent.

Irrelevant axioms are distractor trees built the same way (a single axiom is a tree of depth
0), with an overlap with the goal:

- ``none``: fresh agents, a fresh entity;
- ``entity``: fresh agents, the goal's entity;
- ``agent``: a fresh entity, and one distractor name replaced by a goal agent name;
- ``both``: the goal's entity, and the distractor's deepest spine leaf is a group made of a
  goal name and a fresh name ("Eleanor and Tom together have 25 cats"), whose quantity
  exceeds what the goal name is known to have. Nothing derives the goal name's own cont from
  it, so the distractor stays irrelevant while mentioning the goal's agent and entity.

Every problem is checked before it is returned: the closure has no contradiction and the goal
has exactly one shortest proof, the sampled one (so the distractors changed nothing).
A failed check resamples. Control problems take a problem's main tree and grow it (replacing
a given cont by a comparison with a fresh agent) until it has as many axioms as the problem,
all relevant.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from dagmath_viz.logic.program import (
    Agent,
    Atom,
    Comp,
    CompEq,
    Cont,
    Program,
    Query,
    Rate,
    Transfer,
    agent,
    atom_from_dict,
    atom_key,
    atom_to_dict,
    comparison,
    names_of,
    shift_time,
)
from dagmath_viz.logic.proofs import (
    Proof,
    ProofStep,
    certify_unique_shortest,
    proof_from_edges,
)
from dagmath_viz.logic.rules import Hyperedge, closure
from dagmath_viz.logic.verbalize import verbalize, verbalize_question
from dagmath_viz.logic.vocab import CONTAINERS, ENTITIES, NAMES, RELATIONS, TOPICS
from dagmath_viz.schema import DagMathError

__all__ = [
    "IRRELEVANT",
    "OVERLAPS",
    "GenerationError",
    "GeneratorConfig",
    "Problem",
    "generate_paired",
    "generate_problem",
    "generate_problems",
]

IRRELEVANT = ("none", "axiom", "tree", "trees")
OVERLAPS = ("none", "entity", "agent", "both")
RULES = ("comp", "compeq", "union", "rate", "transfer")


class GenerationError(DagMathError, RuntimeError):
    """No valid problem was found within the attempt budget (still a RuntimeError, as before)."""


class _Retry(Exception):
    """This attempt hit a dead end (a zero difference, an exhausted word list)."""


@dataclass(frozen=True, slots=True)
class GeneratorConfig:
    """Knobs of the generator; the defaults are what the CLI uses.

    ``rule_weights`` are relative probabilities of the rules a cont node is derived by;
    ``n_trees`` is the number of distractor trees of the ``trees`` structure.
    """

    depth: int = 3
    n_trees: int = 3
    leaf_min: int = 2
    leaf_max: int = 20
    diff_max: int = 10
    rate_max: int = 6
    rule_weights: tuple[tuple[str, float], ...] = (
        ("comp", 3.0),
        ("compeq", 1.0),
        ("union", 1.5),
        ("rate", 1.5),
        ("transfer", 1.0),
    )
    max_attempts: int = 200


@dataclass(frozen=True, slots=True)
class Problem:
    """A generated word problem with its program, answer and unique shortest proof.

    ``relevant[i]`` tells whether axiom i is used by the shortest proof.
    """

    problem_id: int
    seed: int
    program: Program
    answer: int
    proof: Proof
    sentences: tuple[str, ...]
    question: str
    irrelevant: str
    overlap: str
    control: bool
    relevant: tuple[bool, ...]

    @property
    def text(self) -> str:
        """The problem as one paragraph: the sentences, then the question."""
        return " ".join((*self.sentences, self.question))


@dataclass
class _Sub:
    """A sampled subtree: its conclusion and its proof steps in post-order."""

    atom: Cont
    steps: list[ProofStep]


def _step(head: Atom, rule: str, *tail: Atom) -> ProofStep:
    return ProofStep(head, rule, tuple(sorted(tail, key=atom_key)))


class _Builder:
    """Samples proof trees with fresh names, entities and containers (no replacement)."""

    def __init__(
        self,
        rng: random.Random,
        config: GeneratorConfig,
        exclude: frozenset[str] | set = frozenset(),
    ):
        self.rng, self.cfg = rng, config
        names = [n for n in NAMES if n not in exclude]
        self.names: Iterator[str] = iter(rng.sample(names, len(names)))
        self.entities: Iterator[str] = iter(rng.sample(ENTITIES, len(ENTITIES)))
        self.containers: Iterator[str] = iter(rng.sample(CONTAINERS, len(CONTAINERS)))
        self.transfers = True

    def fresh(self, pool: Iterator[str]) -> str:
        try:
            return next(pool)
        except StopIteration:
            raise _Retry("word list exhausted") from None

    def name(self) -> Agent:
        return (self.fresh(self.names),)

    def leaf_value(self) -> int:
        return self.rng.randint(self.cfg.leaf_min, self.cfg.leaf_max)

    def pick(
        self, entity: str, depth: int, given: Agent | None, anchored: bool, forbid: frozenset
    ) -> str:
        if depth == 0:
            return "leaf"
        ok = {
            "comp": True,
            "compeq": True,
            "union": given is None and not anchored,
            "rate": entity not in CONTAINERS
            and not anchored
            and (given is None or len(given) == 1),
            "transfer": self.transfers and not anchored and (given is None or len(given) == 1),
        }
        rules = [
            (r, w) for r, w in self.cfg.rule_weights if ok.get(r) and w > 0 and r not in forbid
        ]
        return self.rng.choices([r for r, _ in rules], [w for _, w in rules])[0]

    def node(
        self,
        entity: str,
        time: int,
        depth: int,
        given: Agent | None = None,
        anchor: Callable[[int], tuple[Agent, int]] | None = None,
        forbid: frozenset[str] = frozenset(),
    ) -> _Sub:
        """A cont node of ``depth`` rule applications.

        ``anchor`` fixes the leaf at the bottom of its spine; ``forbid`` lists rules the node
        may not use (a rate holds at every time, so the agent of a rate never takes part in
        a transfer: the frame rule would contradict it).
        """
        rule = self.pick(entity, depth, given, anchor is not None, forbid)
        if rule == "leaf":
            a, q = anchor(time) if anchor else (given or self.name(), self.leaf_value())
            x = Cont(a, entity, q, time)
            return _Sub(x, [ProofStep(x)])
        if given is None:
            size = 2 if rule != "union" or self.rng.random() < 0.7 else 3
            given = agent(*(self.fresh(self.names) for _ in range(size if rule == "union" else 1)))
        return getattr(self, "_" + rule)(given, entity, time, depth, anchor)

    def _comp(self, a: Agent, e: str, t: int, depth: int, anchor) -> _Sub:
        p = self.node(e, t, depth - 1, anchor=anchor)
        q0, d = p.atom.quantity, self.rng.randint(1, self.cfg.diff_max)
        fewer = q0 > d and self.rng.random() < 0.5
        q = q0 - d if fewer else q0 + d
        k = comparison(a, p.atom.agent, e, q - q0, t)
        head = Cont(a, e, q, t)
        return _Sub(head, [*p.steps, ProofStep(k), _step(head, "1b" if fewer else "1a", p.atom, k)])

    def _transfer(self, a: Agent, e: str, t: int, depth: int, anchor) -> _Sub:
        p = self.node(e, t - 1, depth - 1, given=a, forbid=frozenset(("rate",)))
        q0, d, other = p.atom.quantity, self.rng.randint(1, self.cfg.diff_max), self.name()
        give = q0 > d and self.rng.random() < 0.5
        if give:
            x, q, rule = Transfer(a, other, e, d, t - 1), q0 - d, "2a"
        else:
            x, q, rule = Transfer(other, a, e, d, t - 1), q0 + d, "2b"
        head = Cont(a, e, q, t)
        return _Sub(head, [*p.steps, ProofStep(x), _step(head, rule, p.atom, x)])

    def _union(self, a: Agent, e: str, t: int, depth: int, anchor) -> _Sub:
        spine = self.rng.randrange(len(a))
        parts = [
            self.node(e, t, depth - 1 if i == spine else self.rng.randint(0, depth - 1), (n,))
            for i, n in enumerate(a)
        ]
        head = Cont(a, e, sum(p.atom.quantity for p in parts), t)
        steps = [s for p in parts for s in p.steps]
        return _Sub(head, [*steps, _step(head, "3", *(p.atom for p in parts))])

    def _rate(self, a: Agent, e: str, t: int, depth: int, anchor) -> _Sub:
        c = self.fresh(self.containers)
        p = self.node(c, t, depth - 1, given=a, forbid=frozenset(("transfer",)))
        r = self.rng.randint(2, self.cfg.rate_max)
        x, head = Rate(a, e, c, r), Cont(a, e, p.atom.quantity * r, t)
        return _Sub(head, [*p.steps, ProofStep(x), _step(head, "4", p.atom, x)])

    def _compeq(self, a: Agent, e: str, t: int, depth: int, anchor) -> _Sub:
        pb = self.node(e, t, depth - 1, anchor=anchor)
        qb = pb.atom.quantity
        if depth >= 2 and self.rng.random() < 0.5:
            pc = self.node(e, t, self.rng.randint(0, depth - 2))
            pd = self.node(e, t, self.rng.randint(0, depth - 2))
            c, d, delta = pc.atom.agent, pd.atom.agent, pc.atom.quantity - pd.atom.quantity
            if delta == 0:
                raise _Retry("zero difference")
            k = comparison(c, d, e, delta, t)
            cd_steps = [*pc.steps, *pd.steps, _step(k, "1c", pc.atom, pd.atom)]
        else:
            c, d, m = self.name(), self.name(), self.rng.randint(1, self.cfg.diff_max)
            delta = -m if qb > m and self.rng.random() < 0.5 else m
            k = comparison(c, d, e, delta, t)
            cd_steps = [ProofStep(k)]
        if qb + delta >= 1:
            eq, q = CompEq.of(a, pb.atom.agent, c, d, e, t), qb + delta
        else:
            eq, q = CompEq.of(a, pb.atom.agent, d, c, e, t), qb - delta
        head = Cont(a, e, q, t)
        last = _step(head, "5a", k, eq, pb.atom)
        return _Sub(head, [*pb.steps, *cd_steps, ProofStep(eq), last])


def _shift(steps: list[ProofStep]) -> list[ProofStep]:
    """Move a tree in time so that its earliest time stamp is 0."""
    times = [s.theorem.time for s in steps if not isinstance(s.theorem, Rate)]
    dt = -min(times)
    if dt == 0:
        return steps
    return [
        ProofStep(shift_time(s.theorem, dt), s.rule, tuple(shift_time(p, dt) for p in s.premises))
        for s in steps
    ]


def _rename(x: Atom, old: str, new: str) -> Atom:
    d = atom_to_dict(x)
    for k, v in d.items():
        if isinstance(v, list):
            d[k] = [new if n == old else n for n in v]
    return atom_from_dict(d)


def _axioms(steps: list[ProofStep]) -> list[Atom]:
    return list(dict.fromkeys(s.theorem for s in steps if s.rule is None))


def _distractor(b: _Builder, overlap: str, depth: int, goal: Cont, known: dict) -> list[Atom]:
    """The axioms of one irrelevant tree with the requested overlap with the goal."""
    rng = b.rng
    entity = goal.entity if overlap in ("entity", "both") else b.fresh(b.entities)
    if overlap == "both":
        g = rng.choice(goal.agent)
        base = known.get(((g,), entity, goal.time), 0)

        def anchor(t: int) -> tuple[Agent, int]:
            return agent(g, b.fresh(b.names)), base + b.leaf_value()

        b.transfers = False
        try:
            return _axioms(b.node(entity, goal.time, depth, anchor=anchor).steps)
        finally:
            b.transfers = True
    axioms = _axioms(_shift(b.node(entity, 0, depth).steps))
    if overlap == "agent":
        names = sorted({n for x in axioms for n in names_of(x)})
        old, new = rng.choice(names), rng.choice(goal.agent)
        axioms = [_rename(x, old, new) for x in axioms]
    return axioms


def _order(axioms: list[Atom], rng: random.Random) -> list[Atom]:
    """Problem order: by time (a transfer between its two rounds), shuffled within a time."""
    axioms = list(axioms)
    rng.shuffle(axioms)

    def when(x: Atom) -> float:
        return 0.0 if isinstance(x, Rate) else x.time + (0.5 if isinstance(x, Transfer) else 0.0)

    return sorted(axioms, key=when)


def _verified(main: list[ProofStep], axioms: list[Atom], goal: Cont) -> Proof | None:
    """The unique shortest proof if it is the sampled one and the program is consistent."""
    program = Program(tuple(axioms), Query(goal.agent, goal.entity, goal.time))
    clos = closure(program)
    if clos.violations:
        return None
    chosen = {s.theorem: Hyperedge(s.rule, s.premises, s.theorem) if s.rule else None for s in main}
    proof = proof_from_edges(goal, chosen)
    return proof if certify_unique_shortest(program, proof, clos) else None


def _grow(b: _Builder, steps: list[ProofStep], n_axioms: int) -> list[ProofStep]:
    """Replace given conts by comparisons with fresh agents until there are n_axioms axioms."""
    steps = list(steps)
    while len(_axioms(steps)) < n_axioms:
        leaves = [i for i, s in enumerate(steps) if s.rule is None and isinstance(s.theorem, Cont)]
        i = b.rng.choice(leaves)
        x = steps[i].theorem
        q = b.leaf_value()
        if q == x.quantity:
            continue
        y = Cont(b.name(), x.entity, q, x.time)
        k = comparison(x.agent, y.agent, x.entity, x.quantity - q, x.time)
        rule = "1a" if k.more == x.agent else "1b"
        steps[i : i + 1] = [ProofStep(y), ProofStep(k), _step(x, rule, y, k)]
    return steps


def _attempt(
    rng: random.Random, cfg: GeneratorConfig, irrelevant: str, overlap: str
) -> tuple[list[Atom], Proof, list[Atom]] | None:
    """One try: the main tree, its distractors, the check. None when the check fails."""
    b = _Builder(rng, cfg)
    main = _shift(b.node(b.fresh(b.entities), 0, cfg.depth).steps)
    goal = main[-1].theorem
    main_axioms = _axioms(main)
    if _verified(main, main_axioms, goal) is None:
        return None
    main_program = Program(tuple(main_axioms), Query(goal.agent, goal.entity, goal.time))
    known = {x.key: x.quantity for x in closure(main_program).theorems if isinstance(x, Cont)}
    n_trees = {"none": 0, "axiom": 1, "tree": 1, "trees": cfg.n_trees}[irrelevant]
    extra: list[Atom] = []
    for _ in range(n_trees):
        depth = 0 if irrelevant == "axiom" else rng.randint(1, cfg.depth)
        extra += [x for x in _distractor(b, overlap, depth, goal, known) if x not in extra]
    axioms = main_axioms + [x for x in extra if x not in main_axioms]
    proof = _verified(main, axioms, goal)
    return None if proof is None else (_order(axioms, rng), proof, main_axioms)


def control_problem(problem: Problem, cfg: GeneratorConfig) -> Problem:
    """Grow a problem's shortest proof, with fresh names, to as many axioms as it has."""
    rng = random.Random(f"gsm-logic-control:{problem.seed}:{problem.problem_id}")
    used = {n for x in problem.program.axioms for n in names_of(x)}
    target, goal = len(problem.program.axioms), problem.proof.goal
    for _ in range(cfg.max_attempts):
        try:
            steps = _grow(_Builder(rng, cfg, exclude=used), list(problem.proof.steps), target)
        except _Retry:
            continue
        axioms = _axioms(steps)
        proof = _verified(steps, axioms, goal)
        if proof is not None:
            labels = (problem.irrelevant, problem.overlap, True)
            ordered = _order(axioms, rng)
            return _problem(
                rng, problem.seed, problem.problem_id, ordered, proof, set(axioms), labels
            )
    raise GenerationError(f"no control problem for seed {problem.seed}, id {problem.problem_id}")


def generate_problem(
    seed: int,
    problem_id: int,
    irrelevant: str = "none",
    overlap: str = "none",
    control: bool = False,
    config: GeneratorConfig | None = None,
) -> Problem:
    """Generate one verified problem; the same arguments always give the same problem.

    A control problem is matched to the non-control problem with the same arguments: its
    shortest proof is that problem's, grown (with fresh names) until it has as many axioms
    as the problem, all relevant. Same goal, same answer.

    Args:
        seed: the run's seed.
        problem_id: the problem's index; with ``seed`` it seeds the problem's own generator.
        irrelevant: ``none``, ``axiom``, ``tree`` or ``trees``.
        overlap: ``none``, ``entity``, ``agent`` or ``both``.
        control: build the control problem instead.
        config: generator knobs.
    """
    if irrelevant not in IRRELEVANT or overlap not in OVERLAPS:
        raise ValueError(f"unknown structure {irrelevant!r} or overlap {overlap!r}")
    cfg = config or GeneratorConfig()
    rng = random.Random(f"gsm-logic:{seed}:{problem_id}")
    for _ in range(cfg.max_attempts):
        try:
            found = _attempt(rng, cfg, irrelevant, overlap)
        except _Retry:
            continue
        if found is not None:
            axioms, proof, relevant = found
            labels = (irrelevant, overlap, False)
            problem = _problem(rng, seed, problem_id, axioms, proof, set(relevant), labels)
            return control_problem(problem, cfg) if control else problem
    raise GenerationError(f"no valid problem for seed {seed}, id {problem_id}")


def _problem(
    rng: random.Random,
    seed: int,
    problem_id: int,
    axioms: list[Atom],
    proof: Proof,
    relevant: set[Atom],
    labels: tuple[str, str, bool],
) -> Problem:
    irrelevant, overlap, control = labels
    goal = proof.goal
    query = Query(goal.agent, goal.entity, goal.time)
    return Problem(
        problem_id=problem_id,
        seed=seed,
        program=Program(tuple(axioms), query),
        answer=goal.quantity,
        proof=proof,
        sentences=tuple(verbalize(x, rng) for x in axioms),
        question=verbalize_question(query),
        irrelevant=irrelevant,
        overlap=overlap,
        control=control,
        relevant=tuple(x in relevant for x in axioms),
    )


def generate_problems(
    n: int,
    seed: int,
    irrelevant: str = "none",
    overlap: str = "none",
    control: bool = False,
    config: GeneratorConfig | None = None,
    first_id: int = 0,
) -> list[Problem]:
    """``n`` problems with ids ``first_id ..``; each depends only on (seed, id, options)."""
    return [
        generate_problem(seed, first_id + i, irrelevant, overlap, control, config) for i in range(n)
    ]


# --- paired overlap conditions (the authors' design) --------------------------------------


def _relabel(x: Atom, names: dict[str, str], entities: dict[str, str]) -> Atom:
    d = atom_to_dict(x)
    for k, v in d.items():
        if isinstance(v, list):
            d[k] = [names.get(n, n) for n in v]
        elif k == "entity" and isinstance(v, str):
            d[k] = entities.get(v, v)
    return atom_from_dict(d)


def _paired_maps(
    trees: list[tuple[list[Atom], frozenset[str], str]], goal: Cont, rng: random.Random
) -> dict[str, tuple[dict[str, str], dict[str, str]]]:
    """Per overlap condition, the renaming of the distractor trees' names and entities.

    As in the authors' generator: ``entity`` gives every tree the goal's entity; ``agent``
    makes each tree's own goal agent the goal's agent and every other name a possessive of it
    ("Ryan's aunt"), so every irrelevant axiom names the goal's agent; ``both`` does both,
    with possessives only.
    """
    g = goal.agent[0]
    relations = iter(rng.sample(RELATIONS, len(RELATIONS)))
    poss: dict[str, str] = {}
    agent_names: dict[str, str] = {}
    ents: dict[str, str] = {}
    for tree, root_names, entity in trees:
        ents[entity] = goal.entity
        for n in sorted({n for x in tree for n in names_of(x)}):
            if n not in poss:
                try:
                    poss[n] = f"{g}'s {next(relations)}"
                except StopIteration:
                    raise _Retry("relations exhausted") from None
            agent_names[n] = g if n in root_names else poss[n]
    return {
        "none": ({}, {}),
        "entity": ({}, ents),
        "agent": (agent_names, {}),
        "both": (poss, ents),
    }


def generate_paired(
    seed: int,
    problem_id: int,
    irrelevant: str = "tree",
    config: GeneratorConfig | None = None,
) -> dict[str, Problem]:
    """One problem in all four overlap conditions, paired as the authors pair them.

    The main tree and the distractor trees are sampled once, with fresh names and entities
    (the ``none`` condition); the ``entity``, ``agent`` and ``both`` conditions rename only
    the distractors' names and entities (:func:`_paired_maps`), so the axioms, numbers,
    structure, order and sentence templates are the same in all four. Every condition is
    verified (consistent; the sampled shortest proof is the unique shortest one); a failure
    resamples the whole set.

    Returns:
        ``{"none": ..., "entity": ..., "agent": ..., "both": ...}``.
    """
    if irrelevant not in IRRELEVANT:
        raise ValueError(f"unknown structure {irrelevant!r}")
    cfg = config or GeneratorConfig()
    rng = random.Random(f"gsm-logic-paired:{seed}:{problem_id}")
    for _ in range(cfg.max_attempts):
        try:
            found = _paired_attempt(rng, cfg, irrelevant)
        except _Retry:
            continue
        if found is None:
            continue
        out = {}
        for overlap, (axioms, proof, relevant) in found.items():
            vrng = random.Random(f"gsm-logic-paired-text:{seed}:{problem_id}")
            labels = (irrelevant, overlap, False)
            out[overlap] = _problem(vrng, seed, problem_id, axioms, proof, relevant, labels)
        return out
    raise GenerationError(f"no valid paired problem for seed {seed}, id {problem_id}")


#: share of group-total goals in the paired generator (the issue's count of the authors' data)
GROUP_GOALS = 0.57
#: distractor trees of the paired generator use the rules the paper's distractors use
DISTRACTOR_RULES = (("comp", 3.0), ("transfer", 1.0))


def _topical(b: _Builder, goal_entity: str, used: set[str]) -> str:
    """A distractor entity from the goal entity's topic, as the authors draw them (else any)."""
    topic = next((t for t in TOPICS if goal_entity in t), ())
    options = sorted(e for e in topic if e not in used)
    if options:
        return b.rng.choice(options)
    while (e := b.fresh(b.entities)) in used:
        pass
    return e


def _lone_axiom(b: _Builder, entity: str) -> Atom:
    """One irrelevant axiom: a count, a comparison or a transfer, with fresh names."""
    kind = b.rng.choice(("cont", "comp", "transfer"))
    x, y, q = b.name(), b.name(), b.leaf_value()
    if kind == "cont":
        return Cont(x, entity, q, 0)
    if kind == "comp":
        return comparison(x, y, entity, b.rng.randint(1, b.cfg.diff_max), 0)
    return Transfer(y, x, entity, b.rng.randint(1, b.cfg.diff_max), 0)


def _paired_attempt(
    rng: random.Random, cfg: GeneratorConfig, irrelevant: str
) -> dict[str, tuple[list[Atom], Proof, set[Atom]]] | None:
    b = _Builder(rng, cfg)
    entity = b.fresh(b.entities)
    if rng.random() < GROUP_GOALS:  # the paper's goals are mostly group totals
        size = rng.choice((2, 3, 3, 4))
        root = b._union(agent(*(b.fresh(b.names) for _ in range(size))), entity, 0, cfg.depth, None)
    else:
        root = b.node(entity, 0, cfg.depth, forbid=frozenset(("union",)))
    main = _shift(root.steps)
    goal = main[-1].theorem
    main_axioms = _axioms(main)
    n_trees = {"none": 0, "axiom": 1, "tree": 1, "trees": cfg.n_trees}[irrelevant]
    trees: list[tuple[list[Atom], frozenset[str], str]] = []  # axioms, root names, entity
    # the paper's distractors: counts, comparisons and transfers (no rates, no compeq)
    b.cfg = replace(cfg, rule_weights=DISTRACTOR_RULES)
    used = {x.entity for x in main_axioms} | {
        x.container for x in main_axioms if isinstance(x, Rate)
    }
    for _ in range(n_trees):
        entity = _topical(b, goal.entity, used)
        used.add(entity)
        if irrelevant == "axiom":
            tree = [_lone_axiom(b, entity)]
            root_names = frozenset(tree[0].agent if isinstance(tree[0], Cont) else ())
            if isinstance(tree[0], Comp):
                root_names = frozenset(tree[0].more)
            elif isinstance(tree[0], Transfer):
                root_names = frozenset(tree[0].receiver)
        else:
            sub = b.node(entity, 0, rng.randint(1, cfg.depth))
            steps = _shift(sub.steps)
            tree = [x for x in _axioms(steps) if x not in main_axioms]
            root_names = frozenset(steps[-1].theorem.agent)
        trees.append((tree, root_names, entity))
    b.cfg = cfg
    b.transfers = True
    maps = _paired_maps(trees, goal, rng)
    extra = [x for t, _, _ in trees for x in t]
    order = _order(main_axioms + [x for x in dict.fromkeys(extra) if x not in main_axioms], rng)
    relevant = set(main_axioms)
    out = {}
    for overlap, (names, ents) in maps.items():
        axioms = [x if x in relevant else _relabel(x, names, ents) for x in order]
        if len(set(axioms)) != len(axioms):
            return None
        proof = _verified(main, axioms, goal)
        if proof is None:
            return None
        out[overlap] = (axioms, proof, relevant)
    return out
