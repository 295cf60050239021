"""Step alignment and gold coverage (dagmath_viz/analysis/align.py), checked where the truth
is known: logic-program proofs name the theorem of every statement, and a gold solution
shuffled or with steps dropped was changed by the test itself."""

from __future__ import annotations

import bisect
import json
import random
from collections import defaultdict
from pathlib import Path

import pytest

from dagmath_viz.analysis.align import (
    Alignment,
    Pair,
    align_texts,
    gold_coverage,
    gold_coverage_table,
    match_weight,
    math_word_diff,
    step_content,
    word_diff,
)
from dagmath_viz.formats.discovery import load_paths

REPO = Path(__file__).parents[1]
PROOFS = REPO / "sample_data" / "gsm" / "proofs.jsonl"


# --------------------------------------------------------------------------- what a step states


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # one value, written two ways (exact forms, not text)
        (r"So $x = \frac{1}{2}$.", r"so \(x=0.5\)"),
        (r"Then $2\sqrt{3}$ is the length.", r"Then $\sqrt{12}$ is the length."),
        # an expression is read as its value: 11 - 5 is 6
        (r"We get $11 - 5 = 6$ apples.", r"We get $6 = 6$ apples."),
        # bare numbers outside math, in any order
        ("After round 1, Ian has 6 oranges.", "Ian has 6 oranges after round 1."),
    ],
)
def test_equal_values(a, b):
    assert step_content(a).values == step_content(b).values != ()


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("After round 1, Ian has 6 oranges.", "After round 2, Ian has 6 oranges."),
        (
            r"Any two vertices in $E$ are $\sqrt2$ apart.",
            r"Any two vertices in $O$ are $\sqrt2$ apart.",
        ),
        (r"$x = 3$", r"$x = 4$"),
    ],
)
def test_different_values(a, b):
    assert step_content(a).values != step_content(b).values


def test_match_kinds_and_the_word_rule():
    c = step_content
    assert match_weight(c("Let $x=2$."), c(r"let $x = 2$"))[1] == "statement"
    # a paraphrase: same number, words {olivia, fewer, oranges, caleb} against
    # {caleb, more, oranges, olivia}: Jaccard 3/5 = 0.6, the least that matches
    w, kind = match_weight(
        c("Olivia has 23 fewer oranges than Caleb."), c("Caleb has 23 more oranges than Olivia.")
    )
    assert kind == "math" and w == pytest.approx(1.6)
    # same number, words {jonas, onions} against {julia, more, onions, jonas}: 2/4 < 0.6
    assert (
        match_weight(c("Jonas has 4 onions."), c("Julia has 4 more onions than Jonas."))[1] is None
    )
    # steps without words match on their math alone
    assert match_weight(c("$x = 5$"), c(r"Wait, so \(x=5\)."))[1] == "math"
    # fillers say nothing and never match, not even themselves
    assert match_weight(c("Wait."), c("Wait."))[1] is None


def test_rows_interleave_like_a_diff():
    al = Alignment(4, 3, (Pair(1, 0, "statement"), Pair(3, 2, "math")), (0, 2), (1,))
    assert al.rows() == [(0, None), (1, 0), (2, None), (None, 1), (3, 2)]
    # packed: the unpaired steps between two pairs face each other
    assert al.rows(packed=True) == [(0, None), (1, 0), (2, 1), (3, 2)]


def test_word_diff():
    assert word_diff("x is 2 now", "x is 3 now") == [
        ("=", "x is"),
        ("-", "2"),
        ("+", "3"),
        ("=", "now"),
    ]


def test_empty_sides():
    assert align_texts([], []).rows() == []
    al = align_texts(["x = 1"], [])
    assert al.pairs == () and al.only_a == (0,) and al.rows() == [(0, None)]


# --------------------------------------------------------------------------- logic-program proofs


def _proofs_by_problem() -> dict:
    by = defaultdict(dict)
    for line in PROOFS.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        by[r["problem_id"]][r["strategy"]] = r["theorems"]
    return by


def _key(row: dict) -> str:
    return json.dumps(row["theorem"], sort_keys=True)


def _lcs_length(x: list, y: list) -> int:
    """The most same-theorem pairs any monotone alignment can have (textbook DP)."""
    prev = [0] * (len(y) + 1)
    for xi in x:
        row = [0]
        for j, yj in enumerate(y):
            row.append(prev[j] + 1 if xi == yj else max(prev[j + 1], row[j]))
        prev = row
    return prev[-1]


def _missed(keys, other, pairs, s) -> bool:
    """Unpaired statement s had a same-theorem partner, unpaired, between its neighbours' pairs."""
    lo = max((o for a, o in pairs if a < s), default=-1)
    hi = min((o for a, o in pairs if a > s), default=len(other))
    used = {o for _, o in pairs}
    return any(other[o] == keys[s] and o not in used for o in range(lo + 1, hi))


def test_logic_program_proofs_align_as_their_theorems_do():
    """Four strategies' proofs of 26 problems, every pair of strategies: 156 alignments,
    8,004 statements. The aligner sees the text only; the truth is the theorem each
    statement names (half the theorems are worded differently by different strategies)."""
    pairs_made = right_pairs = best = 0
    statements = right_statements = 0
    for proofs in _proofs_by_problem().values():
        names = sorted(proofs)
        for i, x in enumerate(names):
            for y in names[i + 1 :]:
                a, b = proofs[x], proofs[y]
                al = align_texts([t["text"] for t in a], [t["text"] for t in b])
                ka, kb = [_key(t) for t in a], [_key(t) for t in b]
                ab = [(p.a, p.b) for p in al.pairs]
                ba = [(q, p) for p, q in ab]
                pairs_made += len(ab)
                right_pairs += sum(ka[p] == kb[q] for p, q in ab)
                best += _lcs_length(ka, kb)
                for keys, other, mine in ((ka, kb, ab), (kb, ka, ba)):
                    partner = dict(mine)
                    for s in range(len(keys)):
                        statements += 1
                        if s in partner:
                            right_statements += keys[s] == other[partner[s]]
                        else:
                            right_statements += not _missed(keys, other, mine, s)
    assert statements == 8004
    # every statement exactly right: paired with its own theorem, or unpaired with no
    # same-theorem partner it could have had without crossing a pair
    assert right_statements / statements >= 0.95
    # the pairs made join the same theorem, and are nearly as many as any alignment can have
    assert right_pairs / pairs_made >= 0.98
    assert right_pairs / best >= 0.95


# --------------------------------------------------------------------------- gold solutions


def _gold_nodes(shared_data: Path, pid: int) -> list[str]:
    raw = json.loads((shared_data / "gold" / f"problem_{pid}.json").read_text(encoding="utf-8"))
    return [s["node"] for s in raw[0]["steps"]]


def _lis(seq: list[int]) -> int:
    tails: list[int] = []
    for x in seq:
        k = bisect.bisect_left(tails, x)
        tails[k : k + 1] = [x]
    return len(tails)


@pytest.mark.shared
@pytest.mark.parametrize("pid", [1, 2, 3, 4])
def test_gold_with_steps_dropped(shared_data, pid):
    gold = _gold_nodes(shared_data, pid)
    dropped = {1, 5, len(gold) // 2}
    kept = [k for k in range(len(gold)) if k not in dropped]
    al = align_texts(gold, [gold[k] for k in kept])
    assert [(p.a, kept[p.b]) for p in al.pairs] == [(k, k) for k in kept]
    assert set(al.only_a) == dropped and al.only_b == () and al.moved == ()


@pytest.mark.shared
@pytest.mark.parametrize("pid", [1, 2, 3, 4])
def test_gold_with_one_step_moved(shared_data, pid):
    gold = _gold_nodes(shared_data, pid)
    order = list(range(len(gold)))
    order.insert(len(gold) - 2, order.pop(2))  # step 3 moved near the end
    al = align_texts(gold, [gold[k] for k in order])
    assert all(order[p.b] == p.a for p in al.pairs) and len(al.pairs) == len(gold) - 1
    assert al.only_a == (2,) and al.only_b == (len(gold) - 2,)
    assert al.moved == (Pair(2, len(gold) - 2, "statement"),)


@pytest.mark.shared
@pytest.mark.parametrize("pid", [1, 2, 3, 4])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gold_shuffled(shared_data, pid, seed):
    gold = _gold_nodes(shared_data, pid)
    perm = list(range(len(gold)))
    random.Random(seed).shuffle(perm)
    al = align_texts(gold, [gold[k] for k in perm])
    identity = [p for p in al.pairs if perm[p.b] == p.a]
    # the longest run kept in order is found, each step with itself; a pair joining two
    # different steps is a look-alike by its math ("pairs of two complex socks is 1"
    # against "... synthetic socks is 1"), never a statement match
    assert len(identity) == _lis(perm)
    assert all(p.kind == "math" for p in al.pairs if perm[p.b] != p.a)
    # everything else is reported as moved, to its own copy
    restated = [p for p in al.moved if p.kind == "statement"]
    assert all(perm[p.b] == p.a for p in restated)
    assert len(al.pairs) + len(al.moved) >= len(gold) - 2


# --------------------------------------------------------------------------- gold coverage


@pytest.mark.shared
def test_gold_coverage_by_hand(shared_data):
    """Gold problem 3 has 25 nodes. The trajectory: its nodes in order, with
    nodes 10 and 12 (two general facts) left out, node 18 reworded, an extra remark, and
    node 1 restated before the answer."""
    gold = _gold_nodes(shared_data, 3)
    assert len(gold) == 25
    steps = [t for k, t in enumerate(gold, 1) if k not in (10, 12)]
    at18 = steps.index(gold[17])
    # words outside math: {arcs, equal} against {since, arcs, equal}: Jaccard 2/3; same math
    reworded = r"As arcs $AY$ and $YB$ are equal, $\angle ATY=\angle YTB$."
    steps[at18] = reworded
    steps.insert(5, "Let me double-check the picture.")
    steps.insert(len(steps) - 1, gold[0])
    g = gold_coverage(steps, gold)
    assert g.n_gold == 25
    assert g.coverage == pytest.approx(23 / 25)
    assert g.skipped == (9, 11)  # nodes 10 and 12 (0-based positions)
    assert g.extra == (5,)
    assert g.node_of_step[len(steps) - 2] == 0  # the restatement maps to node 1, not extra
    assert g.node_of_step[steps.index(reworded)] == 17  # node 18, by its math


@pytest.mark.shared
def test_gold_coverage_table_on_the_fewshot_files(shared_data):
    """The four few-shot solutions loaded beside their gold files: each states its gold
    DAG exactly (the README of the data: the same four solutions in two layouts)."""
    result = load_paths([shared_data])
    table = gold_coverage_table(result.trajectories)
    assert sorted(table["problem_id"]) == ["1", "2", "3", "4"]
    assert set(table["model"]) == {"dagmath-authors-fewshot"}
    assert table["gold_coverage"].tolist() == [1.0, 1.0, 1.0, 1.0]
    assert table["extra_steps"].tolist() == [0, 0, 0, 0]
    assert table["gold_skipped"].tolist() == [0, 0, 0, 0]
    assert table["gold_nodes"].tolist() == [22, 26, 25, 38]


def test_gold_coverage_table_without_gold():
    assert gold_coverage_table([]).empty


def test_math_word_diff_keeps_formulas_whole():
    # "x + 1" and "x + 2" share two of their three words: a word diff would split them
    assert math_word_diff(r"so \(x + 1\) is $y$ here", r"so \(x + 2\) is $y$ now") == [
        ("=", [(0, "so")]),
        ("-", [(1, "x + 1")]),
        ("+", [(1, "x + 2")]),
        ("=", [(0, "is"), (1, "y")]),
        ("-", [(0, "here")]),
        ("+", [(0, "now")]),
    ]
    # an unclosed delimiter is words
    assert math_word_diff(r"\( a b", r"\( a c") == [
        ("=", [(0, "\\("), (0, "a")]),
        ("-", [(0, "b")]),
        ("+", [(0, "c")]),
    ]
