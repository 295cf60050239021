"""Two trajectories' steps aligned by what they state, and a trajectory mapped onto a gold DAG.

**What a step states (ours).** A step's *content* is read from its text (the node, not the
justification): its normalised statement (:func:`~dagmath_viz.text.normalise_statement`),
its *values* and its *words*. The values are the numbers and expressions it asserts: each
math fragment (``$…$``, ``\\(…\\)``, ``\\[…\\]``) is cut at relation signs (``=``, ``<``,
``\\le``, ``\\ne``, …) and commas, and each piece read by the project's exact answer forms
(:func:`~dagmath_viz.answers.exactforms.read_value`: ``\\frac{1}{2}`` and ``0.5`` are one
value, ``11 - 5`` is ``6``); a piece outside that subset is kept as its normalised TeX
(``$E$`` and ``$O$`` differ); outside math, every bare number is a value. Values are kept
as a sorted multiset. The words are the lower-case words outside math, less a short list
of function words and fillers ("the", "has", "wait", …).

**When two steps match.** Either their normalised statements are equal and say something
(at least one value or word): a *statement* match, weight 4; or their values are equal and
not empty and their words are alike: Jaccard |A ∩ B| / |A ∪ B| ≥ 0.6 (:data:`WORD_OVERLAP`),
or either step has no words: a *math* match, weight 1 + that share (at most 2, so one
restatement outweighs any two look-alikes). No math-verify per pair: the exact forms are
read once per step. (0.6 keeps "Olivia has 23 fewer oranges than Caleb" with "Caleb has 23
more oranges than Olivia", 3 words of 5, and drops "Jonas has 4 onions" against "Julia has
4 more onions than Jonas", 2 of 4; on the bundled logic-program proofs it pairs 95.6 % of
the theorems any monotone alignment can pair, 99 % of its pairs right.)

**The alignment** is the monotone matching (each step used once, pairs in order on both
sides, as a diff is) of largest total weight: the heaviest increasing chain over the
candidate pairs, found with a Fenwick tree in O(K log K) time and O(K + n + m) memory for K
candidate pairs (a step keeps at most :data:`MAX_CANDIDATES` candidates, those nearest its
diagonal position). Steps in no pair are *only A* / *only B*; among them, an A step that
matches a B step out of order is reported as *moved* (greedily in A's order, restatements
before look-alikes).

**Gold DAG (ours).** Each trajectory step maps to the gold node it matches with the largest
weight (the earliest on ties), or to none; order is ignored (a DAG has many orders), and
several steps may map to one node (restatements). Gold coverage = gold nodes some step maps
to / gold nodes; *extra* steps map to none; *skipped* nodes have no step.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import pandas as pd

from dagmath_viz.answers.exactforms import read_value
from dagmath_viz.schema import Trajectory
from dagmath_viz.text import math_segments, normalise_statement

__all__ = [
    "MAX_CANDIDATES",
    "Alignment",
    "GoldCoverage",
    "Pair",
    "StepContent",
    "align_texts",
    "GOLD_MODEL",
    "gold_coverage",
    "gold_coverage_table",
    "gold_for",
    "match_weight",
    "step_content",
    "math_word_diff",
    "word_diff",
]

#: candidate partners kept per step (those nearest the diagonal): bounds time and memory on
#: chains where hundreds of steps state the same number
MAX_CANDIDATES = 64
STATEMENT_WEIGHT = 4.0
#: least share of shared words (Jaccard) for a math match between steps that have words
WORD_OVERLAP = 0.6

_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
_RELATION = re.compile(
    r"\\(?:le|ge|leq|geq|ne|neq|approx|equiv|lt|gt|implies|Rightarrow|to)(?![a-zA-Z])"
    r"|<=|>=|!=|[=<>,;]|\\quad|\\text\{[^}]*\}"
)
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
_WORD = re.compile(r"[a-z]+")
_STOP = frozenset(
    """a an the of to in on at by for from with and or but so as is are was were be been
    it its this that these those there here has have had do does did we i you he she they
    me my our us let lets number then thus therefore hence now also just than which what
    wait hmm okay ok um oh well right yes no maybe actually alternatively hold on
    after before each every one all""".split()
)


# --------------------------------------------------------------------------- step content


@dataclass(frozen=True, slots=True)
class StepContent:
    """What one step states: normalised statement, values (sorted), words."""

    statement: str
    values: tuple[str, ...]
    words: frozenset[str]

    @property
    def says_something(self) -> bool:
        return bool(self.values or self.words)


def step_content(text: str) -> StepContent:
    """The :class:`StepContent` of a step's text.

    >>> step_content(r"So $x = \\frac{1}{2}$.").values == step_content(r"so \\(x=0.5\\)").values
    True
    """
    values: list[str] = []
    rest = []
    last = 0
    for m in _MATH.finditer(text):
        rest.append(text[last : m.start()])
        last = m.end()
        body = next(g for g in m.groups() if g is not None)
        values += _math_values(body)
    rest.append(text[last:])
    plain = " ".join(rest)
    values += [_canonical_number(n) for n in _NUMBER.findall(plain)]
    words = frozenset(w for w in _WORD.findall(plain.lower()) if w not in _STOP and len(w) > 1)
    return StepContent(normalise_statement(text), tuple(sorted(values)), words)


def _math_values(body: str) -> list[str]:
    out = []
    for piece in _RELATION.split(body):
        piece = piece.strip()
        if not piece:
            continue
        read = read_value(piece)
        if read is None:
            out.append("tex:" + normalise_statement(piece))
        else:
            shape, vals, _ = read
            out.append(shape + "|".join(_value_key(v) for v in vals))
    return out


def _value_key(value: dict) -> str:
    return ";".join(f"{r},{k},{d}:{c}" for (r, k, d), c in sorted(value.items())) or "0"


def _canonical_number(text: str) -> str:
    return "value" + _value_key({(1, 0, 0): Fraction(text)} if Fraction(text) else {})


def match_weight(a: StepContent, b: StepContent) -> tuple[float, str | None]:
    """(weight, kind) of a match between two steps; (0, None) when they do not match."""
    if a.statement == b.statement and a.says_something:
        return STATEMENT_WEIGHT, "statement"
    if not a.values or a.values != b.values:
        return 0.0, None
    if not a.words or not b.words:
        return 1.0, "math"
    overlap = len(a.words & b.words) / len(a.words | b.words)
    return (1.0 + overlap, "math") if overlap >= WORD_OVERLAP else (0.0, None)


# --------------------------------------------------------------------------- the alignment


@dataclass(frozen=True, slots=True)
class Pair:
    """Step ``a`` (0-based position in A) aligned with step ``b``; ``kind`` says why."""

    a: int
    b: int
    kind: str


@dataclass(frozen=True, slots=True)
class Alignment:
    """A monotone alignment of two step lists (positions are 0-based)."""

    n_a: int
    n_b: int
    pairs: tuple[Pair, ...]
    only_a: tuple[int, ...]
    only_b: tuple[int, ...]
    moved: tuple[Pair, ...] = ()

    def rows(self, packed: bool = False) -> list[tuple[int | None, int | None]]:
        """The two sides interleaved as a diff shows them: (a, b), (a, None), (None, b).

        ``packed``: between two pairs, the steps only A has and those only B has sit side by
        side, row by row (a side-by-side diff's changed block), so both sides show text;
        such a row is not a pair (see :attr:`pairs`).
        """
        out: list[tuple[int | None, int | None]] = []
        i = j = 0
        for p in (*self.pairs, Pair(self.n_a, self.n_b, "end")):
            if packed:
                out += list(itertools.zip_longest(range(i, p.a), range(j, p.b)))
            else:
                out += [(x, None) for x in range(i, p.a)]
                out += [(None, y) for y in range(j, p.b)]
            if p.kind != "end":
                out.append((p.a, p.b))
            i, j = p.a + 1, p.b + 1
        return out


def align_texts(a: Sequence[str], b: Sequence[str]) -> Alignment:
    """Align two lists of step texts (see the module's docstring).

    >>> al = align_texts(["x = 2", "so y = 3", "done: 5"], ["x = 2", "then 5"])
    >>> [(p.a, p.b, p.kind) for p in al.pairs], al.only_a
    ([(0, 0, 'statement'), (2, 1, 'math')], (1,))
    """
    ca = [step_content(t) for t in a]
    cb = [step_content(t) for t in b]
    candidates = _candidates(ca, cb)
    chain = _heaviest_chain(candidates)
    pairs = tuple(Pair(i, j, kind) for i, j, _, kind in chain)
    used_a = {p.a for p in pairs}
    used_b = {p.b for p in pairs}
    only_a = tuple(i for i in range(len(a)) if i not in used_a)
    only_b = tuple(j for j in range(len(b)) if j not in used_b)
    return Alignment(len(a), len(b), pairs, only_a, only_b, _moved(candidates, only_a, only_b))


def _candidates(ca: list[StepContent], cb: list[StepContent]) -> list[tuple]:
    """(i, j, weight, kind) for every matching pair, at most MAX_CANDIDATES per A step."""
    by_statement: dict[str, list[int]] = defaultdict(list)
    by_values: dict[tuple, list[int]] = defaultdict(list)
    for j, c in enumerate(cb):
        if c.says_something:
            by_statement[c.statement].append(j)
        if c.values:
            by_values[c.values].append(j)
    scale = len(cb) / max(1, len(ca))
    out = []
    for i, c in enumerate(ca):
        js = set(by_statement.get(c.statement, ())) | set(by_values.get(c.values, ()))
        near = sorted(js, key=lambda j: (abs(j - i * scale), j))[:MAX_CANDIDATES]
        for j in sorted(near):
            weight, kind = match_weight(c, cb[j])
            if kind is not None:
                out.append((i, j, weight, kind))
    return out


def _heaviest_chain(candidates: list[tuple]) -> list[tuple]:
    """The chain of candidates strictly increasing in i and j with the largest total weight.

    Candidates come sorted by (i, j). A Fenwick tree over j holds, for each prefix, the best
    chain ending at a j in it; a row's candidates are all looked up before any is stored, so
    no chain uses one A step twice.
    """
    if not candidates:
        return []
    # B positions renumbered 1..K among the candidates: the tree is as small as they are
    rank = {j: r for r, j in enumerate(sorted({c[1] for c in candidates}))}
    tree: list[tuple[float, int]] = [(0.0, -1)] * (len(rank) + 1)
    best: list[float] = [0.0] * len(candidates)
    back: list[int] = [-1] * len(candidates)
    start = 0
    while start < len(candidates):
        stop = start
        while stop < len(candidates) and candidates[stop][0] == candidates[start][0]:
            stop += 1
        for k in range(start, stop):
            prev_w, prev = _query(tree, rank[candidates[k][1]])  # best over j' < j
            best[k], back[k] = prev_w + candidates[k][2], prev
        for k in range(start, stop):
            _update(tree, rank[candidates[k][1]] + 1, (best[k], k))
        start = stop
    k = max(range(len(candidates)), key=lambda x: (best[x], -x))
    chain = []
    while k != -1:
        chain.append(candidates[k])
        k = back[k]
    return chain[::-1]


def _query(tree: list[tuple[float, int]], j: int) -> tuple[float, int]:
    """The best (weight, candidate) stored at positions 1..j (i.e. B steps before j)."""
    out = (0.0, -1)
    while j > 0:
        if tree[j][0] > out[0]:
            out = tree[j]
        j -= j & -j
    return out


def _update(tree: list[tuple[float, int]], j: int, value: tuple[float, int]) -> None:
    while j < len(tree):
        if value[0] > tree[j][0]:
            tree[j] = value
        j += j & -j


def _moved(candidates: list[tuple], only_a: tuple[int, ...], only_b: tuple[int, ...]):
    """Unpaired A steps matching unpaired B steps out of order, greedily in A's order."""
    left_a, left_b = set(only_a), set(only_b)
    out = []
    # restatements first: a look-alike must not take an exact copy's place
    for i, j, _, kind in sorted(candidates, key=lambda c: (c[3] != "statement", c[0], c[1])):
        if i in left_a and j in left_b:
            out.append(Pair(i, j, kind))
            left_a.discard(i)
            left_b.discard(j)
    return tuple(out)


def word_diff(a: str, b: str) -> list[tuple[str, str]]:
    """A word-level diff of two step texts: (op, text) with op ``=``, ``-`` (only in a) or
    ``+`` (only in b), for showing two aligned steps' differences.

    >>> word_diff("x is 2", "x is 3")
    [('=', 'x is'), ('-', '2'), ('+', '3')]
    """
    wa, wb = a.split(), b.split()
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("=", " ".join(wa[i1:i2])))
            continue
        if i2 > i1:
            out.append(("-", " ".join(wa[i1:i2])))
        if j2 > j1:
            out.append(("+", " ".join(wb[j1:j2])))
    return out


def math_word_diff(a: str, b: str) -> list[tuple[str, list[tuple[int, str]]]]:
    """:func:`word_diff` that keeps every formula whole: the texts are cut into words and
    formulas (:func:`~dagmath_viz.text.math_segments`: ``(0, word)``, ``(1, inline TeX)``,
    ``(2, display TeX)``) and a formula is one token, equal only to the same formula, so a
    diff never splits one and a formula that differs is removed and added as a whole.

    >>> math_word_diff(r"so \\(x+1\\) is 2", r"so \\(x+2\\) is 2")
    [('=', [(0, 'so')]), ('-', [(1, 'x+1')]), ('+', [(1, 'x+2')]), ('=', [(0, 'is'), (0, '2')])]
    """
    ta, tb = _tokens(a), _tokens(b)
    out: list[tuple[str, list[tuple[int, str]]]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ta, tb, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("=", ta[i1:i2]))
            continue
        if i2 > i1:
            out.append(("-", ta[i1:i2]))
        if j2 > j1:
            out.append(("+", tb[j1:j2]))
    return out


def _tokens(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for kind, piece in math_segments(text):
        out.extend([(0, w) for w in piece.split()] if kind == 0 else [(kind, piece)])
    return out


# --------------------------------------------------------------------------- a gold DAG


@dataclass(frozen=True, slots=True)
class GoldCoverage:
    """A trajectory mapped onto a gold DAG (positions 0-based; see the module docstring).

    ``node_of_step[k]`` is the gold node position step k maps to, or None.
    """

    n_gold: int
    node_of_step: tuple[int | None, ...]
    stated: tuple[int, ...]
    skipped: tuple[int, ...]
    extra: tuple[int, ...]

    @property
    def coverage(self) -> float:
        """Share of gold nodes some step states (NaN for an empty gold DAG)."""
        return len(self.stated) / self.n_gold if self.n_gold else float("nan")


def gold_coverage(steps: Sequence[str], gold: Sequence[str]) -> GoldCoverage:
    """Map each step text to its best-matching gold node text, or to none.

    >>> g = gold_coverage(["x = 2", "hmm", "y = 3"], ["x = 2", "y = 3", "z = 9"])
    >>> g.node_of_step, g.coverage, g.skipped, g.extra
    ((0, None, 1), 0.6666666666666666, (2,), (1,))
    """
    cg = [step_content(t) for t in gold]
    by_statement: dict[str, list[int]] = defaultdict(list)
    by_values: dict[tuple, list[int]] = defaultdict(list)
    for j, c in enumerate(cg):
        by_statement[c.statement].append(j)
        if c.values:
            by_values[c.values].append(j)
    node_of_step: list[int | None] = []
    for text in steps:
        c = step_content(text)
        js = sorted(set(by_statement.get(c.statement, ())) | set(by_values.get(c.values, ())))
        scored = [(match_weight(c, cg[j])[0], -j) for j in js]
        scored = [s for s in scored if s[0] > 0]
        node_of_step.append(-max(scored)[1] if scored else None)
    stated = tuple(sorted({j for j in node_of_step if j is not None}))
    skipped = tuple(j for j in range(len(gold)) if j not in set(stated))
    extra = tuple(k for k, j in enumerate(node_of_step) if j is None)
    return GoldCoverage(len(gold), tuple(node_of_step), stated, skipped, extra)


#: the model name the loader gives gold-layout files (``<dataset>/problem_<id>.json``, the
#: published gold benchmark and ``dagmath gold`` output)
GOLD_MODEL = "gold"


def gold_for(trajectories: Iterable[Trajectory]) -> Callable[[Trajectory], Trajectory | None]:
    """A look-up of the gold DAG of a trajectory's problem among ``trajectories``.

    A gold DAG is a trajectory of model :data:`GOLD_MODEL`. The one of the same dataset and
    problem wins; otherwise the only gold of that problem id in any dataset (gold files sit
    in a folder of their own, so their dataset is that folder's name); else None.
    """
    exact: dict[tuple[str, str], Trajectory] = {}
    by_problem: dict[str, list[Trajectory]] = defaultdict(list)
    for t in trajectories:
        if t.model == GOLD_MODEL:
            exact.setdefault((t.dataset, t.problem_id), t)
            by_problem[t.problem_id].append(t)

    def find(traj: Trajectory) -> Trajectory | None:
        hit = exact.get((traj.dataset, traj.problem_id))
        if hit is not None:
            return hit
        found = by_problem.get(traj.problem_id, [])
        return found[0] if len(found) == 1 else None

    return find


def gold_coverage_table(trajectories: Iterable[Trajectory]) -> pd.DataFrame:
    """Gold coverage of every (non-gold) trajectory whose problem has a gold DAG loaded.

    Columns: model, dataset, problem_id, sample_id, gold_nodes, gold_coverage (a share),
    extra_steps, gold_skipped (counts); sorted by the first four.
    """
    trajectories = list(trajectories)
    find = gold_for(trajectories)
    rows = []
    for t in trajectories:
        gold = None if t.model == GOLD_MODEL else find(t)
        if gold is None:
            continue
        g = gold_coverage([s.text for s in t.steps], [s.text for s in gold.steps])
        rows.append({
            "model": t.model, "dataset": t.dataset, "problem_id": t.problem_id,
            "sample_id": t.sample_id, "gold_nodes": g.n_gold, "gold_coverage": g.coverage,
            "extra_steps": len(g.extra), "gold_skipped": len(g.skipped),
        })  # fmt: skip
    columns = [
        "model", "dataset", "problem_id", "sample_id",
        "gold_nodes", "gold_coverage", "extra_steps", "gold_skipped",
    ]  # fmt: skip
    table = pd.DataFrame(rows, columns=columns)
    return table.sort_values(columns[:4], kind="stable").reset_index(drop=True)
