"""`dagmath depends`, its parts: the Thought Anchors split, reading chains, checking replies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dagmath_viz.generation.chains import read_chains, split_into_chunks
from dagmath_viz.generation.depends import check_batch, shortened, spans, trajectory_record
from dagmath_viz.generation.prompts import depends_prompt_digest
from dagmath_viz.schema import InputError

# --------------------------------------------------------------------------- the split


def test_the_split_gives_the_published_chunks_of_every_real_chain(thought_anchors_data):
    """Thought Anchors' chunks_labeled.json was made from base_solution.json's text: our
    split of that text gives exactly their chunks, all 20 chains."""
    found = sorted(thought_anchors_data.glob("*/*/problem_*/base_solution.json"))
    assert len(found) == 20
    for path in found:
        text = json.loads(path.read_text())["solution"]
        published = json.loads((path.parent / "chunks_labeled.json").read_text())
        assert split_into_chunks(text) == [c["chunk"] for c in published], path


@pytest.mark.parametrize(
    ("text", "chunks"),
    [
        # sentence ends: . ? ! followed by a space or a newline; a blank line ends a paragraph
        ("First we add. Then we divide? Yes indeed!\nAnd now more",
         ["First we add.", "Then we divide?", "Yes indeed!", "And now more"]),
        ("Paragraph one here\n\nParagraph two here", ["Paragraph one here", "Paragraph two here"]),
        # a dot inside a number or at the very end is no boundary
        ("So pi is about 3.14159 here. That is all",
         ["So pi is about 3.14159 here.", "That is all"]),
        # display math with no blank line and no ". " stays one chunk
        ("Now we compute:\n\\[\n x = 1.5 \\cdot 2\n\\]\nwhich is 3.",
         ["Now we compute:\n\\[\n x = 1.5 \\cdot 2\n\\]\nwhich is 3."]),
        # only the text inside <think> ... </think>
        ("Prompt text <think>We think hard now. Yes we do.</think> The answer is 4.",
         ["We think hard now.", "Yes we do."]),
        # a fragment under 10 characters joins the next one; the last joins the one before
        ("Hmm. Let me think about it. Okay.", ["Hmm. Let me think about it. Okay."]),
        ("Wait. Wait. This is long enough.", ["Wait. Wait.", "This is long enough."]),
        ("Yes indeed! And more", ["Yes indeed! And more"]),
        ("A long first sentence. So.", ["A long first sentence. So."]),
        ("Short.", ["Short."]),
        ("", []),
    ],
)  # fmt: skip
def test_split_rules(text, chunks):
    assert split_into_chunks(text) == chunks


# --------------------------------------------------------------------------- reading chains


def test_a_thought_anchors_chain_keeps_the_source_keys_and_gets_its_answer_step(
    thought_anchors_data,
):
    folder = thought_anchors_data / "deepseek-r1-distill-qwen-14b" / "correct_base_solution"
    base = folder / "problem_2236" / "base_solution.json"
    (chain,) = read_chains(base)
    published = json.loads((base.parent / "chunks_labeled.json").read_text())
    source = json.loads(base.read_text())
    assert source["answer"] == "90" and "\\boxed" not in published[-1]["chunk"]
    # the published chunks, then the source's own answer as the final step
    assert list(chain.steps[:-1]) == [c["chunk"] for c in published]
    assert chain.steps[-1] == "The final answer is $\\boxed{90}$."
    assert chain.answer_step == len(published) + 1
    assert (chain.model, chain.dataset, chain.problem_id, chain.sample_id) == (
        "deepseek-r1-distill-qwen-14b", "thought-anchors", "2236", 0,
    )  # fmt: skip
    assert chain.reference_answer == "90" and chain.difficulty == 5.0

    # a chain whose last chunk boxes the source's answer gets no extra step
    (other,) = read_chains(folder / "problem_1591" / "base_solution.json")
    last = json.loads((folder / "problem_1591" / "chunks_labeled.json").read_text())[-1]
    assert other.steps[-1] == last["chunk"] and "\\boxed{6.17}" in last["chunk"]
    assert other.answer_step is None


def test_a_folder_gives_every_chain_once(thought_anchors_data):
    chains = read_chains(thought_anchors_data)
    assert len(chains) == 20
    assert sorted(c.sample_id for c in chains) == [0] * 10 + [1] * 10
    assert len({c.key for c in chains}) == 20
    # the chains whose last published chunk does not box the source's answer get one more
    # step (README: 9 of 20)
    lacking = 0
    for base in sorted(thought_anchors_data.glob("*/*/problem_*/base_solution.json")):
        answer = json.loads(base.read_text())["answer"]
        last = json.loads((base.parent / "chunks_labeled.json").read_text())[-1]["chunk"]
        lacking += f"\\boxed{{{answer}}}" not in last
    assert lacking == 9 == sum(c.answer_step is not None for c in chains)


def _write(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_records_with_think_text_and_the_answer_after_it(tmp_path):
    path = _write(
        tmp_path / "r1.jsonl",
        [
            {
                "id": "p1",
                "question": "What is 2 + 3?",
                "output": "<think>We add two and three. That makes five.</think>\n"
                "So the sum is $\\boxed{5}$.",
                "gt": "5",
            }
        ],
    )
    (chain,) = read_chains(path, {"solution": "output", "answer": "gt"})
    # the think text is split; the boxed answer after </think> becomes the final step
    assert chain.steps == (
        "We add two and three.",
        "That makes five.",
        "The final answer is $\\boxed{5}$.",
    )
    assert chain.answer_step == 3
    assert (chain.problem_id, chain.model, chain.dataset, chain.reference_answer) == (
        "p1", "r1", "r1", "5",
    )  # fmt: skip


def test_given_chunks_are_taken_as_they_are(tmp_path):
    path = _write(
        tmp_path / "c.jsonl",
        [{"problem": "P", "steps_text": ["a. b. c.", {"chunk": "so $\\boxed{1}$"}], "model": "m"}],
    )
    (chain,) = read_chains(path, {"chunks": "steps_text"}, use_chunks=True)
    assert chain.steps == ("a. b. c.", "so $\\boxed{1}$")
    assert chain.split == "given" and chain.answer_step is None and chain.model == "m"


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"solution": "x. y."}], "r.jsonl: line 1: no problem text"),
        ([{"problem": "P"}], "r.jsonl: line 1: no chain of thought to split (field 'solution'"),
        ([{"problem": "P", "solution": "<think></think>"}], "line 1: the chain of thought holds"),
        ([{"problem": "P", "solution": "a", "id": 1}, {"problem": "Q", "solution": "b", "id": 1}],
         "r.jsonl:line 2: problem '1' sample 0 repeats the one at"),
        (["text"], "r.jsonl: line 1: expected an object, found str"),
    ],
)  # fmt: skip
def test_bad_records_name_the_file_and_the_line(tmp_path, rows, message):
    with pytest.raises(InputError, match=None) as info:
        read_chains(_write(tmp_path / "r.jsonl", rows))
    assert message in str(info.value)


def test_a_missing_input_is_one_clear_error(tmp_path):
    with pytest.raises(InputError, match="no such file or folder"):
        read_chains(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match="no Thought Anchors base_solution.json"):
        read_chains(tmp_path)


# --------------------------------------------------------------------------- replies


def _entries(**parents) -> dict:
    return {
        "parents": [
            {"step_id": int(k[1:]), "direct_dependent_steps": v} for k, v in parents.items()
        ]
    }


@pytest.mark.parametrize(
    ("value", "first", "last", "parents", "reason"),
    [
        (_entries(s3=[1, 2], s4=None), 3, 4, [[1, 2], []], None),
        (_entries(s3=[2, 1, 2], s4=[]), 3, 4, [[1, 2], []], None),  # sorted, once each
        (_entries(s3=[4], s4=[3]), 3, 4, None, "step 3 cites step 4, which is not an earlier step"),
        (_entries(s3=[3], s4=[]), 3, 4, None, "step 3 cites step 3, which is not an earlier step"),
        (_entries(s3=[0], s4=[]), 3, 4, None, "step 3 cites step 0, which is not an earlier step"),
        (_entries(s3=["1"], s4=[]), 3, 4, None, "step 3: parent '1' is not an integer step id"),
        (_entries(s3=[True], s4=[]), 3, 4, None, "step 3: parent true is not an integer step id"),
        (_entries(s3=[1]), 3, 4, None, "no entry for step 4"),
        (_entries(s3=[1], s4=[1], s5=[1]), 3, 4, None,
         "step 5 was not asked about (only steps 3 to 4)"),
        ({"parents": [{"step_id": 3, "direct_dependent_steps": [1]}] * 2}, 3, 3, None,
         "step 3 is listed twice"),
        (_entries(s3="1"), 3, 3, None, "step 3: direct_dependent_steps is not a list"),
        ({"parents": [{"id": 3}]}, 3, 3, None, 'an entry has no integer step_id: {"id": 3}'),
        ({"steps": []}, 3, 3, None, "the JSON has no 'parents' list"),
    ],
)  # fmt: skip
def test_check_batch(value, first, last, parents, reason):
    assert check_batch(value, first, last) == (parents, reason)


def test_batches_shortening_and_the_record():
    assert spans(7, 3) == [(1, 3), (4, 6), (7, 7)]
    assert spans(3, 40) == [(1, 3)]
    assert shortened("a  b\n c", 10) == "a b c"
    assert shortened("abcdefghijkl", 6) == "abcde…"

    from dagmath_viz.generation.chains import Chain

    steps = ("given.", "so.", "The final answer is $\\boxed{2}$.")
    chain = Chain("src", "ds", "7", 1, "P?", steps, "f.jsonl:line 1", reference_answer="2",
                  source_answer="2", answer_step=3)  # fmt: skip
    record = trajectory_record(chain, [[], [1], [1, 2]], {"model": "lab", "prompt": "x"})
    assert [s["direct_dependent_steps"] for s in record["steps"]] == [None, [1], [1, 2]]
    assert [s["step_id"] for s in record["steps"]] == [1, 2, 3]
    assert record["answer"] == "2" and record["metadata"]["model"] == "src"
    assert record["metadata"]["depends"] == {
        "model": "lab", "prompt": "x", "split": "thought-anchors", "answer_step": 3,
    }  # fmt: skip
    assert depends_prompt_digest().startswith("sha256:") and len(depends_prompt_digest()) == 71


def test_a_thought_anchors_solution_with_no_thinking_is_one_clear_error(tmp_path):
    folder = tmp_path / "m" / "correct_base_solution" / "problem_7"
    folder.mkdir(parents=True)
    (folder / "problem.json").write_text(json.dumps({"problem": "P?", "gt_answer": "1"}))
    (folder / "base_solution.json").write_text(json.dumps({"solution": "<think> \n</think>"}))
    with pytest.raises(InputError, match="base_solution.json: the solution holds no text"):
        read_chains(tmp_path)
    (folder / "problem.json").write_text("[1, 2")
    with pytest.raises(InputError, match="problem.json"):
        read_chains(folder / "base_solution.json")
