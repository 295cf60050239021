"""score-proofs on the authors' own worked examples, scored as the authors' code scores them.

The paper's own Appendix D proofs are scored in test_logic_paper_appendix.py (from
../shared/data/efficiency-paper-examples). This file uses the authors' repository,
rycolab/reasoning-efficiency at commit c16e905, and in it:

- experiments/proof_search/test.ipynb: the output of its generator for one base problem (seed
  14) in the "complex" (one irrelevant tree) and "more complex" (three trees) variants, each
  with the problem and its reasoning trace ``rt`` (every tree's proof, a sentence per theorem,
  each marked ``relevant`` or not). The sentences below are quoted from those outputs.
- experiments/proof_search/experiments/proof-matching.ipynb: how a model's proof is scored.
  With ``matched`` the list of reasoning-trace indices that the model's numbered steps match
  (one entry per step, -1 for a step that matches nothing) and ``efficient`` the indices of the
  relevant trace sentences: precision = |set(efficient) & set(matched)| / len(matched),
  recall = |set(efficient) & set(matched)| / len(efficient), exact match = (efficient ==
  matched), on the problems answered correctly.
- experiments/proof_search/experiments/data_processing.py (``format_cot``) and evaluate.py:
  the proof format the models were shown: "Let's think step by step.", the trace's sentences
  numbered "1. ...", then "Therefore, the answer (arabic numerals) is N.".

Every expected number below is worked out by hand from those definitions (comments show it).
"""

from __future__ import annotations

import re

import pytest

from dagmath_viz.logic.efficiency import efficiency
from dagmath_viz.logic.modelproofs import reference_orders, score_proof_record, solve_text
from dagmath_viz.logic.text import parse_proof_text, stated

# --- the authors' examples (quoted from experiments/proof_search/test.ipynb) ----------------

# "complex": the base tree and one irrelevant tree, all about "kilograms of gold" (the
# generator's problem sentences as it lists them, each after the first with a leading space;
# format_problem joins them with a space).
COMPLEX_PROBLEM = [
    "Mason has 18 kilograms of gold.",
    " Christian has 9 kilograms of gold more than Mason.",
    " Harper has 19 kilograms of gold.",
    " Harper has 10 kilograms of gold more than Elijah.",
    " Logan has 7 kilograms of gold fewer than Elijah.",
    " Christian has 5 kilograms of gold fewer than James.",
    " Alexander has 6 kilograms of gold more than Logan.",
    " How many kilograms of gold does James have?",
]
# its reasoning trace; (sentence, relevant)
COMPLEX_RT = [
    ("Mason has 18 kilograms of gold.", True),  # 1
    (" Christian has 9 kilograms of gold more than Mason.", True),  # 2
    (" So Christian has 18 + 9 = 27 kilograms of gold.", True),  # 3 conclusion
    (" Harper has 19 kilograms of gold.", False),  # 4
    (" Harper has 10 kilograms of gold more than Elijah.", False),  # 5
    (" So Elijah has 19 - 10 = 9 kilograms of gold.", False),  # 6 conclusion
    (" Logan has 7 kilograms of gold less than Elijah.", False),  # 7
    (" So Logan has 9 - 7 = 2 kilograms of gold.", False),  # 8 conclusion
    (" Christian has 5 kilograms of gold less than James.", True),  # 9
    (" So James has 27 + 5 = 32 kilograms of gold.", True),  # 10 conclusion
    (" Alexander has 6 kilograms of gold more than Logan.", False),  # 11
    (" So Alexander has 2 + 6 = 8 kilograms of gold.", False),  # 12 conclusion
]

# "more complex": three irrelevant trees with entities of their own (the notebook prints the
# problem and the trace as one string each; cell "4.3 more complex case").
MORE_COMPLEX_PROBLEM = (
    "Mason has 18 kilograms of gold. Charlotte has 18 grams of butter. Harper has 19 liters of "
    "milk. Harper has 10 liters of milk more than Elijah. Logan has 7 liters of milk fewer than "
    "Elijah. Christian has 9 kilograms of gold more than Mason. Evelyn has 10 acres of "
    "farmland. Alexander has 6 liters of milk more than Logan. Nicholas has 7 acres of farmland "
    "less than Evelyn. Nicholas has 19 acres of farmland fewer than Amelia. Hannah has 7 acres "
    "of farmland fewer than Amelia. Christian has 5 kilograms of gold fewer than James. Mia has "
    "6 acres of farmland more than Hannah. Charlotte has 8 grams of butter more than Grace. Mila "
    "has 4 grams of butter fewer than Grace. Mila has 12 grams of butter fewer than Natalie. "
    "Liam has 12 grams of butter less than Natalie. Liam has 3 grams of butter more than Ava. "
    "How many kilograms of gold does James have?"
)
MORE_COMPLEX_RT_TEXT = (
    "Mason has 18 kilograms of gold. Charlotte has 18 grams of butter. Harper has 19 liters of "
    "milk. Harper has 10 liters of milk more than Elijah. So Elijah has 19 - 10 = 9 liters of "
    "milk. Logan has 7 liters of milk less than Elijah. So Logan has 9 - 7 = 2 liters of milk. "
    "Christian has 9 kilograms of gold more than Mason. So Christian has 18 + 9 = 27 kilograms "
    "of gold. Evelyn has 10 acres of farmland. Alexander has 6 liters of milk more than Logan. "
    "So Alexander has 2 + 6 = 8 liters of milk. Nicholas has 7 acres of farmland less than "
    "Evelyn. So Nicholas has 10 - 7 = 3 acres of farmland. Nicholas has 19 acres of farmland "
    "less than Amelia. So Amelia has 3 + 19 = 22 acres of farmland. Hannah has 7 acres of "
    "farmland fewer than Amelia. So Hannah has 22 - 7 = 15 acres of farmland. Christian has 5 "
    "kilograms of gold less than James. So James has 27 + 5 = 32 kilograms of gold. Mia has 6 "
    "acres of farmland more than Hannah. So Mia has 15 + 6 = 21 acres of farmland. Charlotte "
    "has 8 grams of butter more than Grace. So Grace has 18 - 8 = 10 grams of butter. Mila has "
    "4 grams of butter fewer than Grace. So Mila has 10 - 4 = 6 grams of butter. Mila has 12 "
    "grams of butter fewer than Natalie. So Natalie has 6 + 12 = 18 grams of butter. Liam has "
    "12 grams of butter less than Natalie. So Liam has 18 - 12 = 6 grams of butter. Liam has 3 "
    "grams of butter more than Ava. So Ava has 6 - 3 = 3 grams of butter."
)
# The notebook marks these trace sentences (1-based) relevant, and these are conclusions:
MORE_COMPLEX_RELEVANT = [1, 8, 9, 19, 20]
MORE_COMPLEX_CONCLUSIONS = [5, 7, 9, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32]

# The notebook's "more complex" instance with entity overlap (its first cell's output): the
# same problem and trace with every entity "kilograms of gold".
_OTHERS = ("grams of butter", "liters of milk", "acres of farmland")


def _gold(text: str) -> str:
    for e in _OTHERS:
        text = text.replace(e, "kilograms of gold")
    return text


def _sentences(text: str) -> list[str]:
    """The trace split as format_cot splits it (after . ! or ? and white space)."""
    return re.split(r"(?<=[.!?])\s+", text.strip())


def _cot(sentences: list[str], answer: int) -> str:
    """A proof in the format of the authors' few-shot answers (format_cot, evaluate.py)."""
    steps = "".join(f"{i + 1}. {s.strip()}\n" for i, s in enumerate(sentences))
    tail = f"Therefore, the answer (arabic numerals) is {answer}.\n"
    return f"Let's think step by step.\n{steps}\n{tail}"


def _score(problem: str, sentences: list[str], answer: int = 32) -> dict:
    out = score_proof_record({"id": "x", "text": problem, "proof": _cot(sentences, answer)})
    assert "error" not in out, out.get("error")
    return out


# --- the problems parse fully and are solved as the authors' trace says ----------------------


@pytest.mark.parametrize(
    "problem",
    [" ".join(COMPLEX_PROBLEM), MORE_COMPLEX_PROBLEM, _gold(MORE_COMPLEX_PROBLEM)],
    ids=["complex", "more-complex", "more-complex-entity-overlap"],
)
def test_problem_parses_and_the_shortest_proof_is_the_relevant_trace(problem):
    solved = solve_text(problem)
    assert solved.answer == 32  # the notebook's answer
    relevant = [s for s, r in COMPLEX_RT if r]  # the same five sentences in both variants
    want = [stated(x.atom) for x in parse_proof_text(" ".join(relevant))]
    assert len(want) == 5 and None not in want
    assert {stated(x) for x in solved.proof.theorems} == set(want)


@pytest.mark.parametrize(
    "rt", [MORE_COMPLEX_RT_TEXT, _gold(MORE_COMPLEX_RT_TEXT)], ids=["none", "entity"]
)
def test_every_trace_sentence_is_read(rt):
    sentences = _sentences(rt)
    assert len(sentences) == 32
    read = parse_proof_text("\n".join(sentences))
    assert len(read) == 32 and all(s.atom is not None for s in read)


# --- scores, as the authors' proof matching computes them -----------------------------------


def test_complex_full_trace():
    """A model that writes out the whole trace (every tree's proof) of the complex variant.

    matched = [1, ..., 12] (each step is the trace sentence of that number), efficient =
    [1, 2, 3, 9, 10]: precision 5/12, recall 5/5, exact match no. Over conclusions only
    (the notebook's compute_precision_conclusions): matched conclusions [3, 6, 8, 10, 12],
    efficient ones [3, 10]: 2/5.
    """
    out = _score(" ".join(COMPLEX_PROBLEM), [s for s, _ in COMPLEX_RT])
    assert out["correct"] is True and out["answer"] == 32
    assert out["unmatched"] == []
    assert out["n_statements"] == 12 and out["shortest_size"] == 5
    assert out["efficiency"] == pytest.approx(5 / 12)
    assert out["efficiency_non_axiom"] == pytest.approx(2 / 5)
    assert out["recall"] == 1.0
    assert out["exact_match"] is False


def test_complex_search_order_distances():
    """The full trace against the authors' three reference orders (parse_reasoning_models.py).

    dfs = the trace order itself, so the distance is 0. bfs = bfs_hypergraph from the axioms
    [1, 2, 4, 5, 7, 9, 11] (FIFO): 3 is ready after 2, 6 after 5, then 10 after 3 and 8 after
    6, 12 after 8: conclusions [3, 6, 10, 8, 12] against the trace's [3, 6, 8, 10, 12], two
    substitutions in five: 0.4. efficient = [3, 10]: three deletions in five: 0.6.
    """
    out = _score(" ".join(COMPLEX_PROBLEM), [s for s, _ in COMPLEX_RT])
    assert out["distance"] == pytest.approx({"dfs": 0.0, "bfs": 0.4, "efficient": 0.6})


@pytest.mark.parametrize(
    "rt", [MORE_COMPLEX_RT_TEXT, _gold(MORE_COMPLEX_RT_TEXT)], ids=["none", "entity"]
)
def test_more_complex_full_trace(rt):
    """matched = [1..32], efficient = [1, 8, 9, 19, 20]: precision 5/32, recall 1; over the 14
    conclusions, efficient ones [9, 20]: 2/14."""
    problem = MORE_COMPLEX_PROBLEM if rt == MORE_COMPLEX_RT_TEXT else _gold(MORE_COMPLEX_PROBLEM)
    out = _score(problem, _sentences(rt))
    assert out["correct"] is True and out["unmatched"] == []
    assert out["n_statements"] == 32
    assert out["efficiency"] == pytest.approx(5 / 32)
    assert out["efficiency_non_axiom"] == pytest.approx(2 / 14)
    assert out["recall"] == 1.0 and out["exact_match"] is False
    assert out["distance"]["dfs"] == 0.0


def test_more_complex_bfs_reference_is_the_authors():
    """bfs_hypergraph on the more complex trace, worked by hand: the 18 axioms first, then in
    FIFO order 5 (after 4), 9 (after 8), 14 (after 13), 24 (after 23); then 7, 20, 16, 26;
    then 12, 18, 28; then 22, 30; then 32."""
    sentences = _sentences(MORE_COMPLEX_RT_TEXT)
    key = {i + 1: stated(s.atom) for i, s in enumerate(parse_proof_text("\n".join(sentences)))}
    order = [5, 9, 14, 24, 7, 20, 16, 26, 12, 18, 28, 22, 30, 32]
    assert sorted(order) == MORE_COMPLEX_CONCLUSIONS
    refs = reference_orders(solve_text(MORE_COMPLEX_PROBLEM))
    axioms = {key[i] for i in key if i not in MORE_COMPLEX_CONCLUSIONS}
    assert [k for k in refs["bfs"] if k not in axioms] == [key[i] for i in order]
    assert [k for k in refs["dfs"] if k not in axioms] == [key[i] for i in MORE_COMPLEX_CONCLUSIONS]
    assert refs["efficient"] == [key[i] for i in MORE_COMPLEX_RELEVANT]


@pytest.mark.parametrize("gold", [False, True], ids=["none", "entity"])
def test_the_efficient_trace_scores_one(gold):
    """The relevant sentences alone, in trace order: matched == efficient, so precision 1,
    recall 1 and an exact match (also by the authors' list equality)."""
    sentences = _sentences(MORE_COMPLEX_RT_TEXT)
    relevant = [sentences[i - 1] for i in MORE_COMPLEX_RELEVANT]
    problem = MORE_COMPLEX_PROBLEM
    if gold:
        problem, relevant = _gold(problem), [_gold(s) for s in relevant]
    out = _score(problem, relevant)
    assert out["correct"] is True
    assert (out["efficiency"], out["efficiency_non_axiom"], out["recall"]) == (1.0, 1.0, 1.0)
    assert out["exact_match"] is True
    assert out["distance"]["efficient"] == 0.0


def test_a_wrong_answer_is_not_scored():
    """The notebook keeps only rows with model_answer == true_answer."""
    out = _score(" ".join(COMPLEX_PROBLEM), [s for s, r in COMPLEX_RT if r], answer=31)
    assert out["answer"] == 31 and out["correct"] is False
    assert out["efficiency"] is None and out["recall"] is None


# --- the formula against the notebook's own printed numbers --------------------------------


@pytest.mark.parametrize(
    ("matched", "efficient", "precision", "recall"),
    [
        # proof-matching.ipynb, entity overlap table, row id 1: overlap {6, 9, 10, 14}
        ([1, 3, 4, 2, 7, 8, 5, 11, 12, 6, 9, 10, -1, 14], [6, 9, 10, 13, 14], 0.285714, 0.8),
        # row id 5: overlap {3, 5, 6, 13, 17, 18}; two unmatched steps, both in len(matched)
        ([5, 3, -1, 6, 17, 13, -1, 18], [1, 3, 5, 6, 7, 13, 14, 17, 18], 0.75, 0.666667),
    ],
)
def test_efficiency_reproduces_the_notebooks_precision_and_recall(
    matched, efficient, precision, recall
):
    # each unmatched step is its own statement (score-proofs keys them by their text)
    p = [("unmatched", i) if m == -1 else m for i, m in enumerate(matched)]
    got = efficiency(p, efficient, axioms=())
    assert got.efficiency == pytest.approx(precision, abs=1e-6)
    assert got.recall == pytest.approx(recall, abs=1e-6)
    assert got.exact_match is False


def test_a_repeated_statement_counts_once_unlike_the_authors_list_length():
    """DEFINITIONS.md §6 counts a repeated theorem once; the authors' precision divides by
    len(matched), one entry per step, so restating Mason's 18 would give them 5/6. Ours: 5/5."""
    relevant = [s for s, r in COMPLEX_RT if r]
    out = _score(" ".join(COMPLEX_PROBLEM), [relevant[0], *relevant])
    assert out["n_statements"] == 5
    assert out["efficiency"] == 1.0 and out["exact_match"] is True
