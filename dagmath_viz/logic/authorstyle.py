"""Generated problems written in the efficiency paper's own sentence templates.

The paired generator (:mod:`dagmath_viz.logic.generator`) samples problems with the paper's
design (main tree, distractor trees, overlap conditions, controls) but writes them in this
project's templates ("After round 1, ..."). This module writes the same programs the way the
authors' generator does (rycolab/reasoning-efficiency, ``experiments/proof_search/data/
templates/extended``), so ``dagmath gsm solve --text`` can be judged on a large set made the
same way as the authors' problems:

- counts: "A has / owns / possesses N E." (one of the three at random), groups
  "A, B and C together have N E.";
- comparisons: "A has N E more than B." or "B has N E less / fewer than A." (which of the two
  agents is the subject is random, as the authors shuffle subject and object);
- comparisons of differences: "The number of E that A has more than B is the same as the
  difference between the number of E that C has compared to D.";
- transfers, written about the agent whose count the proof tree concludes: receiver side
  "R then gets N more E from S.", "R then receives N more E from S.", "R then gets another
  N E from S.", "S then gives N E more to R."; giver side "S then gives R N E.", "S then
  donates N E to R." (the authors' "loses" and sender-less "gets" forms need a transfer with
  one side missing, which their generator never draws: none is in the 155 sample problems);
- rates: "A possesses N E per C." (C singular);
- questions: "How many E does A have[ in their collection| in total| totaled| in all]?",
  "What is the number of E that A has?", and for groups "If A, B and C sum up the E that they
  have, how many E do they have combined? / ... in total? / what is the number of E that they
  have in total?".

As in the authors' part-whole problems, a group goal usually totals *different* entities of
one topic into a category ("If A, B and C sum up the snacks ..."): each member's subtree gets
its own entity of the topic (the subtrees share no name, so the numbers and the proof are
unchanged). As in the authors' agent overlap for part-whole goals, distractors then name the
goal's agent only through possessives ("Ryan's aunt"). Possessives use the typographic
apostrophe, as in the authors' texts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from dagmath_viz.logic.generator import IRRELEVANT, GeneratorConfig, Problem, generate_paired
from dagmath_viz.logic.generator import control_problem as _control
from dagmath_viz.logic.program import (
    Atom,
    Comp,
    CompEq,
    Cont,
    Rate,
    Transfer,
    atom_from_dict,
    atom_to_dict,
    comparison,
    names_of,
)
from dagmath_viz.logic.vocab import CATEGORIES, CONTAINERS, NAMES, RELATIONS, TOPICS

__all__ = ["AuthorsProblem", "authors_problem_set", "render_authors"]

#: share of group goals that total different entities into a category (the authors draw
#: part entities from a topic with probability 0.7: ``prob_pick_standard_ents_as_parts``)
CATEGORY_SHARE = 0.7

#: the rules a count below the goal is derived by: the authors' ContCompCont, ContTransferCont,
#: ContRateCont and ContCompCompeqCont (part-whole is only ever the goal's rule), with the
#: generator's default weights
AUTHORS_RULES = (("comp", 3.0), ("compeq", 1.0), ("rate", 1.5), ("transfer", 1.0))

#: Words in the style of the authors' lists (written here): for each of our topics, in the
#: order of ``vocab.TOPICS``, a category and entities with several words, "of" phrases and
#: plurals like "goldfish"; and containers with two-word singulars ("per paper bag").
AUTHOR_TOPICS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("fruits", ("apples", "bananas", "mangoes", "cherries", "kiwis", "grapefruits", "figs")),
    ("vegetables", ("spinach leaves", "heads of lettuce", "zucchinis")),
    ("snacks", ("granola bars", "rice cakes", "candy bars", "pretzels", "cheese sticks")),
    (
        "school supplies",
        ("glue sticks", "paper clips", "erasers", "sharpeners", "water bottles", "scissors"),
    ),
    (
        "toys",
        (
            "teddy bears",
            "yo-yos",
            "action figures",
            "lego bricks",
            "hula hoops",
            "toy dinosaurs",
            "frisbees",
        ),
    ),
    ("pets", ("goldfish", "guinea pigs", "hamsters", "parrots", "turtles", "hedgehogs")),
    ("pieces of furniture", ("chairs", "bookcases", "storage boxes", "benches")),
)
AUTHOR_CONTAINERS = (
    "paper bags",
    "plastic bags",
    "lunch boxes",
    "backpacks",
    "toolboxes",
    "packages",
    "pet stores",
    "music stores",
    "crates",
    "glass jars",
)

#: the authors' "connected" structures: distractor trees whose leaf is a count of the main
#: tree (their ``_generate_connected``): one comparison, one tree, three trees
CONNECTED = ("connected-axiom", "connected-tree", "connected-trees")

_HAS = ("has", "owns", "possesses")
_Q_ONE = (
    "How many {e} does {a} have?",
    "How many {e} does {a} have in their collection?",
    "How many {e} does {a} have in total?",
    "How many {e} does {a} have totaled?",
    "How many {e} does {a} have in all?",
    "What is the number of {e} that {a} has?",
)
_Q_GROUP = (
    "If {a} sum up the {e} that they have, how many {e} do they have combined?",
    "If {a} sum up the {e} that they have, how many {e} do they have in total?",
    "If {a} sum up the {e} that they have, what is the number of {e} that they have in total?",
)
_GET = (
    "{r} then gets {n} more {e} from {g}.",
    "{r} then receives {n} more {e} from {g}.",
    "{r} then gets another {n} {e} from {g}.",
    "{g} then gives {n} {e} more to {r}.",
)
_GIVE = ("{g} then gives {r} {n} {e}.", "{g} then donates {n} {e} to {r}.")


@dataclass(frozen=True, slots=True)
class AuthorsProblem:
    """A generated problem in the authors' templates, with the generator's answer."""

    id: str
    text: str
    answer: int
    irrelevant: str
    overlap: str
    control: bool

    def to_dict(self) -> dict:
        """The JSON line ``gsm solve --text`` reads, plus the answer and the variant."""
        return {
            "id": self.id,
            "text": self.text,
            "answer": self.answer,
            "irrelevant": self.irrelevant,
            "overlap": self.overlap,
            "control": self.control,
        }


def _list(a: tuple[str, ...]) -> str:
    return a[0] if len(a) == 1 else ", ".join(a[:-1]) + " and " + a[-1]


def _singular(c: str) -> str:
    if c.endswith("ies"):
        return c[:-3] + "y"
    if c.endswith(("xes", "ches", "shes", "sses")):
        return c[:-2]
    return c[:-1] if c.endswith("s") else c


def _relabel(x: Atom, names: dict[str, str], entity: str | None) -> Atom:
    d = atom_to_dict(x)
    for k, v in d.items():
        if isinstance(v, list):
            d[k] = [names.get(n, n) for n in v]
    if entity is not None:
        d["entity"] = entity
    return atom_from_dict(d)


def _sides(problem: Problem, rng: random.Random) -> dict[Transfer, str]:
    """Which side each transfer sentence is about: the agent whose count the tree concludes."""
    sides: dict[Transfer, str] = {}
    for s in problem.proof.steps:
        for p in s.premises:
            if isinstance(p, Transfer):
                sides[p] = "giver" if s.theorem.agent == p.giver else "receiver"
    mentioned: dict[str, int] = {}
    for x in problem.program.axioms:
        for n in set(names_of(x)):
            mentioned[n] = mentioned.get(n, 0) + 1
    for x in problem.program.axioms:
        if isinstance(x, Transfer) and x not in sides:
            g = sum(mentioned.get(n, 0) for n in x.giver)
            r = sum(mentioned.get(n, 0) for n in x.receiver)
            pick = rng.choice(("giver", "receiver"))
            sides[x] = "giver" if g > r else "receiver" if r > g else pick
    return sides


def _sentence(x: Atom, side: str | None, rng: random.Random) -> str:
    if isinstance(x, Cont):
        if len(x.agent) > 1:
            return f"{_list(x.agent)} together have {x.quantity} {x.entity}."
        return f"{x.agent[0]} {rng.choice(_HAS)} {x.quantity} {x.entity}."
    if isinstance(x, Comp):
        more, less = _list(x.more), _list(x.less)
        if rng.random() < 0.5:
            return f"{more} has {x.diff} {x.entity} more than {less}."
        return f"{less} has {x.diff} {x.entity} {rng.choice(('less', 'fewer'))} than {more}."
    if isinstance(x, CompEq):
        a, b, c, d = (_list(y) for y in (x.a, x.b, x.c, x.d))
        return (
            f"The number of {x.entity} that {a} has more than {b} is the same as the difference"
            f" between the number of {x.entity} that {c} has compared to {d}."
        )
    if isinstance(x, Transfer):
        g, r = _list(x.giver), _list(x.receiver)
        form = rng.choice(_GET if side == "receiver" else _GIVE)
        return form.format(g=g, r=r, n=x.amount, e=x.entity)
    if isinstance(x, Rate):
        return f"{_list(x.agent)} possesses {x.rate} {x.entity} per {_singular(x.container)}."
    raise TypeError(f"cannot write {x!r}")


def _subtree_names(problem: Problem, part: Atom) -> set[str]:
    """The names in the proof subtree of one part of a group goal."""
    by_head = {s.theorem: s for s in problem.proof.steps}
    names: set[str] = set()
    todo = [part]
    while todo:
        x = todo.pop()
        names.update(names_of(x))
        todo.extend(by_head[x].premises if x in by_head else ())
    return names


def _categorise(problem: Problem, rng: random.Random) -> tuple[list[Atom], str] | None:
    """Give each member of a group goal its own entity of one topic; the question's category.

    None when the goal is not a group or no topic has enough unused entities.
    """
    goal = problem.proof.goal
    last = problem.proof.steps[-1]
    if not isinstance(goal, Cont) or len(goal.agent) < 2 or last.rule != "3":
        return None
    used = {x.entity for x in problem.program.axioms} | {
        x.container for x in problem.program.axioms if isinstance(x, Rate)
    }
    parts = list(last.premises)
    topics = [
        (t, c)
        for t, c in zip(TOPICS, CATEGORIES, strict=True)
        if len([e for e in t if e not in used or e == goal.entity]) >= len(parts)
    ]
    if not topics:
        return None
    topic, category = rng.choice(topics)
    pool = [e for e in topic if e not in used or e == goal.entity]
    chosen = rng.sample(pool, len(parts))
    entity_of: dict[str, str] = {}
    for part, e in zip(parts, chosen, strict=True):
        for n in _subtree_names(problem, part):
            entity_of[n] = e
    relevant = set(problem.proof.theorems)
    # distractors about the goal's entity: each connected group of names gets one member's
    # entity (an ``entity`` overlap with one of the totalled entities)
    # (a tree hung on the main tree takes the entity of the count it hangs on)
    comp: dict[str, str] = dict(entity_of)
    out: list[Atom] = []
    for x, rel in zip(problem.program.axioms, problem.relevant, strict=True):
        if x.entity != goal.entity:
            out.append(x)
            continue
        if rel or x in relevant:
            e = next((entity_of[n] for n in sorted(names_of(x)) if n in entity_of), chosen[0])
            out.append(_relabel(x, {}, e))
            continue
        names = sorted(names_of(x))
        e = next((comp[n] for n in names if n in comp), None) or rng.choice(chosen)
        for n in names:
            comp[n] = e
        out.append(_relabel(x, {}, e))
    return out, category


def _possessive_overlap(
    axioms: list[Atom], relevant: tuple[bool, ...], goal: Cont, rng: random.Random
) -> list[Atom]:
    """Distractors name the group goal's members only through possessives (as the authors)."""
    members = set(goal.agent)
    taken = {n for x in axioms for n in names_of(x)}
    rels = [r for r in RELATIONS]
    rng.shuffle(rels)
    new: dict[str, str] = {}
    out = []
    for x, rel in zip(axioms, relevant, strict=True):
        if rel or not members.intersection(names_of(x)):
            out.append(x)
            continue
        for n in members.intersection(names_of(x)):
            while n not in new:
                if not rels:
                    raise ValueError("relations exhausted")
                cand = f"{n}'s {rels.pop()}"
                if cand not in taken:
                    new[n] = cand
                    taken.add(cand)
        out.append(_relabel(x, new, None))
    return out


def _author_words(rng: random.Random) -> dict[str, str]:
    """A one-to-one map of our entities, containers and categories to the authors'-style ones.

    Each topic maps to the same topic position of :data:`AUTHOR_TOPICS` (so distractor
    entities stay topic-related and category totals stay in one category), shuffled.
    """
    out: dict[str, str] = {}
    for ours, cat, (their_cat, theirs) in zip(TOPICS, CATEGORIES, AUTHOR_TOPICS, strict=True):
        out[cat] = their_cat
        out.update(zip(ours, rng.sample(theirs, len(theirs)), strict=False))
    out.update(zip(CONTAINERS, rng.sample(AUTHOR_CONTAINERS, len(AUTHOR_CONTAINERS)), strict=True))
    return out


def _in_author_words(x: Atom, words_of: dict[str, str]) -> Atom:
    d = atom_to_dict(x)
    for k in ("entity", "container"):
        if k in d:
            d[k] = words_of.get(d[k], d[k])
    return atom_from_dict(d)


def _interleave(axioms: list[Atom], relevant: tuple[bool, ...], rng: random.Random) -> list[Atom]:
    """Merge the relevant and the irrelevant axioms at random, each keeping its own order.

    The generator orders all axioms by time; the authors' texts interleave the trees, so a
    count may follow another tree's transfer ("Malory then gets 2 more chocolate bars from
    Winne. Anthony owns 6 candy bars."). Each sequence stays in time order, and the two share
    no (agent, entity) pair, so every statement still holds where it is said.
    """
    main = [x for x, r in zip(axioms, relevant, strict=True) if r]
    rest = [x for x, r in zip(axioms, relevant, strict=True) if not r]
    out: list[Atom] = []
    while main or rest:
        take_main = bool(main) and (not rest or rng.random() < len(main) / (len(main) + len(rest)))
        out.append((main if take_main else rest).pop(0))
    return out


def render_authors(problem: Problem, rng: random.Random) -> str:
    """The problem's text in the authors' templates (see the module docstring).

    The axioms keep the generator's order (by time, so every statement made after k transfer
    sentences holds after the k-th transfer, as the text reader assumes).
    """
    goal = problem.proof.goal
    axioms = list(problem.program.axioms)
    entity = goal.entity
    if len(goal.agent) > 1 and problem.irrelevant not in CONNECTED:
        axioms = _possessive_overlap(axioms, problem.relevant, goal, rng)
        problem = _with_axioms(problem, axioms)
        if rng.random() < CATEGORY_SHARE:
            found = _categorise(problem, rng)
            if found is not None:
                axioms, entity = found
    words_of = _author_words(rng)
    axioms = [_in_author_words(x, words_of) for x in axioms]
    entity = words_of.get(entity, entity)
    sides = _sides(_with_axioms(problem, axioms), rng)
    axioms = _interleave(axioms, problem.relevant, rng)
    words = [_sentence(x, sides.get(x) if isinstance(x, Transfer) else None, rng) for x in axioms]
    who = _list(goal.agent)
    form = rng.choice(_Q_GROUP if len(goal.agent) > 1 else _Q_ONE)
    text = " ".join([*words, form.format(a=who, e=entity)])
    return text.replace("'s ", "\u2019s ")


def _with_axioms(problem: Problem, axioms: list[Atom]) -> Problem:
    if axioms == list(problem.program.axioms):
        return problem
    # the proof's atoms keep their names only when relabelling left them alone; the sides of
    # transfers are found from the proof, so map relabelled transfers back by position
    old = problem.program.axioms
    steps = []
    swap = {a: b for a, b in zip(old, axioms, strict=True) if a != b}
    for s in problem.proof.steps:
        steps.append(
            replace(
                s,
                theorem=swap.get(s.theorem, s.theorem),
                premises=tuple(swap.get(p, p) for p in s.premises),
            )
        )
    return replace(
        problem,
        program=replace(problem.program, axioms=tuple(axioms)),
        proof=replace(problem.proof, steps=tuple(steps)),
    )


def _connected(
    problem: Problem, structure: str, depth: int, rng: random.Random, possessive: bool
) -> Problem:
    """The problem with irrelevant trees hung on counts of its main tree (the authors' connected
    case): each is a chain of comparisons from a count of the main tree to fresh agents, the
    last of which may then get or give some ("Sibel has 41 granola bars more than Rock.").

    The anchors are counts of one agent whose (agent, entity) no transfer changes, as the
    authors' ``get_single_assign_cont`` picks them; the chains derive only fresh agents'
    counts, so the answer and the shortest proof do not change. With ``possessive`` the fresh
    names are possessives of the goal's first agent ("Ryan's aunt"), the authors' lexical
    agent overlap.
    """
    moved = {
        (n, x.entity)
        for x in problem.program.axioms
        if isinstance(x, Transfer)
        for n in names_of(x)
    }
    anchors = [
        s.theorem
        for s in problem.proof.steps
        if isinstance(s.theorem, Cont)
        and len(s.theorem.agent) == 1
        and (s.theorem.agent[0], s.theorem.entity) not in moved
    ]
    if not anchors:
        return problem
    used = {n for x in problem.program.axioms for n in names_of(x)} | set(problem.proof.goal.agent)
    g = problem.proof.goal.agent[0]
    if possessive:
        pool = [f"{g}'s {r}" for r in RELATIONS if f"{g}'s {r}" not in used]
    else:
        pool = [n for n in NAMES if n not in used]
    rng.shuffle(pool)
    n_trees = 3 if structure.endswith("trees") else 1
    extra: list[Atom] = []
    for _ in range(n_trees):
        x = rng.choice(anchors)
        length = 1 if structure.endswith("axiom") else rng.randint(1, depth)
        who, q = x.agent, x.quantity
        for _ in range(length):
            if len(pool) < 2:
                break
            new = (pool.pop(),)
            d = rng.randint(1, 10)
            fewer = q > d and rng.random() < 0.5
            extra.append(comparison(new, who, x.entity, -d if fewer else d, x.time))
            who, q = new, q - d if fewer else q + d
        if structure != "connected-axiom" and pool and rng.random() < 0.3:
            other, d = (pool.pop(),), rng.randint(1, 10)
            give = q > d and rng.random() < 0.5
            giver, receiver = (who, other) if give else (other, who)
            extra.append(Transfer(giver, receiver, x.entity, d, x.time))
    return replace(
        problem,
        program=replace(problem.program, axioms=problem.program.axioms + tuple(extra)),
        relevant=problem.relevant + (False,) * len(extra),
        irrelevant=structure,
    )


def authors_problem_set(
    n: int, seed: int = 0, depths: tuple[int, ...] = (2, 3)
) -> list[AuthorsProblem]:
    """``n`` problems in the authors' templates, every variant of the paper's design in turn.

    Each base problem gets one irrelevant-axiom structure, cycling through ``none``,
    ``axiom``, ``tree``, ``trees`` (the authors' disconnected cases, drawn with
    :func:`~dagmath_viz.logic.generator.generate_paired` and written in its four overlap
    conditions) and ``connected-axiom``, ``connected-tree``, ``connected-trees`` (trees hung on
    the main tree, :func:`_connected`, with fresh or possessive names), and the depths; every
    structure with distractors also gets its control (the main tree grown to as many axioms,
    all relevant). The same (n, seed, depths) give the same set.
    """
    structures = (*IRRELEVANT, *CONNECTED)
    out: list[AuthorsProblem] = []
    k = 0
    while len(out) < n:
        irrelevant = structures[k % len(structures)]
        depth = depths[(k // len(structures)) % len(depths)]
        cfg = GeneratorConfig(depth=depth, rule_weights=AUTHORS_RULES)
        if irrelevant in CONNECTED:
            base = generate_paired(seed, k, "none", cfg)["none"]
            crng = random.Random(f"gsm-authors-connected:{seed}:{k}")
            variants = [
                (
                    ov,
                    _connected(base, irrelevant, depth, random.Random(crng.random()), ov != "none"),
                )
                for ov in ("none", "agent")
            ]
            # the control grows the main tree to as many axioms as the "none" variant has
            variants.append(
                ("control", _control(replace(base, program=variants[0][1].program), cfg))
            )
        else:
            paired = generate_paired(seed, k, irrelevant, cfg)
            variants = list(paired.items())
            if irrelevant != "none":
                variants.append(("control", _control(paired["none"], cfg)))
            else:
                variants = variants[:1]  # without distractors the four conditions coincide
        for overlap, p in variants:
            rng = random.Random(f"gsm-authors-text:{seed}:{k}")
            out.append(
                AuthorsProblem(
                    id=f"s{seed}/p{k}/d{depth}/{irrelevant}/{overlap}",
                    text=render_authors(p, rng),
                    answer=p.answer,
                    irrelevant=irrelevant,
                    overlap="none" if overlap == "control" else overlap,
                    control=overlap == "control",
                )
            )
        k += 1
    return out[:n]
