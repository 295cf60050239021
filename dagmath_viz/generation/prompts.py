"""What is sent to the model: our system prompt, the user prompt, the JSON schemas.

The user prompt is exactly the DAG-MATH authors' (``Problem: <problem>\\n\\nSolution:``), so
runs stay comparable with theirs; the default system prompt is ours, written for this
project, with two small worked examples in the format. ``--system-prompt FILE`` replaces
it (for instance with the authors' published few-shot instructions).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = [
    "DEFAULT_SYSTEM_PROMPT",
    "DEPENDS_PROMPT",
    "DEPENDS_PROMPT_NAME",
    "DEPENDS_SCHEMA",
    "EDGES_PROMPT",
    "EDGES_SCHEMA",
    "NODES_PROMPT",
    "NODES_SCHEMA",
    "PARENTS_PROMPT",
    "PARENTS_SCHEMA",
    "SOLUTION_SCHEMA",
    "depends_prompt_digest",
    "depends_user_prompt",
    "prompt_hash",
    "user_prompt",
]

#: ``DAGSolution {steps: [SolutionStep]}`` as a strict JSON schema: every property required,
#: no extra ones (what strict structured output demands).
SOLUTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "steps": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "step_id": {"type": "integer"},
                    "thinking": {"type": "string"},
                    "direct_dependent_steps": {
                        "anyOf": [
                            {"type": "array", "items": {"type": "integer"}},
                            {"type": "null"},
                        ]
                    },
                    "text": {"type": "string"},
                },
                "required": ["step_id", "thinking", "direct_dependent_steps", "text"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["steps"],
    "additionalProperties": False,
}

_EXAMPLE_1 = {
    "steps": [
        {
            "step_id": 1,
            "thinking": "The problem states the perimeter; we record it as a given.",
            "direct_dependent_steps": None,
            "text": "The rectangle's perimeter is $20$.",
        },
        {
            "step_id": 2,
            "thinking": "The problem states one side; we record it as a given.",
            "direct_dependent_steps": None,
            "text": "The rectangle's length is $6$.",
        },
        {
            "step_id": 3,
            "thinking": "A rectangle's perimeter is twice the sum of its sides, so by Step 1 "
            "the length and width add up to half of $20$.",
            "direct_dependent_steps": [1],
            "text": "The length plus the width is $10$.",
        },
        {
            "step_id": 4,
            "thinking": "Subtracting the length from Step 2 from the sum in Step 3 leaves "
            "the width.",
            "direct_dependent_steps": [2, 3],
            "text": "The width is $10 - 6 = 4$.",
        },
        {
            "step_id": 5,
            "thinking": "The area is length times width: Step 2 gives the length and "
            "Step 4 the width.",
            "direct_dependent_steps": [2, 4],
            "text": "The area is $6 \\times 4 = 24$.",
        },
        {
            "step_id": 6,
            "thinking": "Step 5 is the quantity asked for, so we state it as the answer.",
            "direct_dependent_steps": [5],
            "text": "The final answer is $\\boxed{24}$.",
        },
    ]
}

_EXAMPLE_2 = {
    "steps": [
        {
            "step_id": 1,
            "thinking": "The problem gives the equation to solve; we restate it.",
            "direct_dependent_steps": None,
            "text": "We must solve $3x + 5 = 2x + 9$.",
        },
        {
            "step_id": 2,
            "thinking": "Subtracting $2x$ from both sides of the equation in Step 1 keeps "
            "it balanced and collects the unknown on the left.",
            "direct_dependent_steps": [1],
            "text": "Then $x + 5 = 9$.",
        },
        {
            "step_id": 3,
            "thinking": "Subtracting $5$ from both sides of Step 2 isolates $x$.",
            "direct_dependent_steps": [2],
            "text": "So $x = 4$.",
        },
        {
            "step_id": 4,
            "thinking": "Step 3 gives the value of $x$ that was asked for.",
            "direct_dependent_steps": [3],
            "text": "The final answer is $\\boxed{4}$.",
        },
    ]
}

DEFAULT_SYSTEM_PROMPT = f"""\
You solve mathematics problems and write each solution as a directed acyclic graph of \
small, checkable steps (the DAG-MATH format).

Reply with one JSON object and nothing else: {{"steps": [ ... ]}}. Every step is an object \
with exactly four fields:
- "step_id": an integer; the steps are numbered 1, 2, 3, ... in order.
- "thinking": a few sentences saying why this step holds: which earlier steps it uses \
(name each one as "Step k") and the rule or fact that turns them into this step's claim.
- "direct_dependent_steps": the ids of the earlier steps this step uses directly, in \
increasing order, and no more than it needs; null for a fact read straight from the problem.
- "text": one sentence making exactly one claim (a given, a definition, an equation, the \
result of one calculation).

Rules:
- A step may only depend on steps with smaller ids.
- Every step except the last must be used by some later step: leave out anything that \
does not lead to the answer.
- Put one fact per step: split compound statements and multi-stage calculations.
- Write mathematics in LaTeX between dollar signs.
- The last step's text is exactly "The final answer is $\\boxed{{ANSWER}}$." with the answer \
in the box.

Example 1.
Problem: A rectangle has perimeter $20$ and length $6$. What is its area?

Solution:
{json.dumps(_EXAMPLE_1, indent=2)}

Example 2.
Problem: Solve $3x + 5 = 2x + 9$.

Solution:
{json.dumps(_EXAMPLE_2, indent=2)}
"""


def user_prompt(problem_text: str) -> str:
    r"""The user message, exactly as the DAG-MATH authors send it.

    >>> user_prompt("  What is $1+1$? ")
    'Problem: What is $1+1$?\n\nSolution:'
    """
    return f"Problem: {problem_text.strip()}\n\nSolution:"


def prompt_hash(system_prompt: str, schema: dict[str, Any] | None = None) -> str:
    """SHA-256 of the system prompt, the user template and the schema: names the prompt
    a run used, so two runs can be compared without storing the text twice."""
    digest = hashlib.sha256()
    for part in (system_prompt, user_prompt("{problem}"), json.dumps(schema, sort_keys=True)):
        digest.update(part.encode())
        digest.update(b"\0")
    return "sha256:" + digest.hexdigest()


# --------------------------------------------------------------------------- gold stages
# The three prompts of `dagmath gold` (paper §4, Appendix D), in our own words.

NODES_PROMPT = """\
You turn a reference solution of a mathematics problem into a list of assertions for a \
gold reasoning graph. Rules:
- One assertion per item, one primitive step each: a given from the problem, a \
definition, one equation, or the result of one calculation.
- Follow the reference solution; add no idea it does not contain, and keep only what \
leads to the answer.
- Write mathematics in LaTeX between dollar signs; keep calculations correct.
- The last item is exactly "The final answer is $\\boxed{ANSWER}$." with the reference answer.
Reply with one JSON object: {"nodes": ["first assertion", "second assertion", ...]}."""

PARENTS_PROMPT = """\
You are given a mathematics problem and a numbered list of assertions that solve it. For \
each assertion, list the minimal set of earlier assertions it follows from directly \
(null for a fact taken from the problem statement). Parents must have smaller numbers.
Reply with one JSON object: {"parents": [{"step_id": 1, "direct_dependent_steps": null}, \
{"step_id": 2, "direct_dependent_steps": [1]}, ...]} with one entry per assertion."""

EDGES_PROMPT = """\
You are given a mathematics problem and a reasoning graph: numbered assertions, each \
with the earlier assertions it follows from. For each assertion, write a short \
justification of how it follows from its parents (or, for one without parents, where the \
problem states it). Cite parents as "Step k". Introduce no fact, number or idea that is \
not in the assertion or its parents.
Reply with one JSON object: {"edges": [{"step_id": 1, "edge": "..."}, ...]} with one \
entry per assertion."""

NODES_SCHEMA = {
    "type": "object",
    "properties": {"nodes": {"type": "array", "items": {"type": "string"}}},
    "required": ["nodes"],
    "additionalProperties": False,
}
PARENTS_SCHEMA = {
    "type": "object",
    "properties": {
        "parents": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "step_id": {"type": "integer"},
                    "direct_dependent_steps": {
                        "anyOf": [
                            {"type": "array", "items": {"type": "integer"}},
                            {"type": "null"},
                        ]
                    },
                },
                "required": ["step_id", "direct_dependent_steps"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["parents"],
    "additionalProperties": False,
}
EDGES_SCHEMA = {
    "type": "object",
    "properties": {
        "edges": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"step_id": {"type": "integer"}, "edge": {"type": "string"}},
                "required": ["step_id", "edge"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["edges"],
    "additionalProperties": False,
}


# --------------------------------------------------------------------------- depends
# `dagmath depends`: the parents of each step of a free-form chain of thought, in batches.
# DAG-MATH's stage 2 (PARENTS_PROMPT) in our words, with Thought Anchors' depends_on
# guidance (uses a result or an idea; short- and long-range; conservative).

#: Names the prompt on every trajectory it labelled (with :func:`depends_prompt_digest`).
DEPENDS_PROMPT_NAME = "dagmath-depends-v1"

DEPENDS_PROMPT = """\
You are given a mathematics problem and a chain of thought that works on it, split into \
numbered steps. For each step you are asked about, list the earlier steps it directly \
uses: a step uses an earlier one when it takes that step's result, equation, fact or plan \
and builds on it. Include long-range uses as well as the step just before, but only the \
steps this one needs directly, not their own parents. A step that uses no earlier step \
(restating the problem, recalling a general fact, a new plan) gets an empty list.
Parents must have smaller numbers than the step itself. Earlier steps may be shown \
shortened; the steps you are asked about are shown in full.
Reply with one JSON object: {"parents": [{"step_id": 5, "direct_dependent_steps": [2, 4]}, \
{"step_id": 6, "direct_dependent_steps": []}, ...]} with exactly one entry for each step \
you are asked about, and no other entries."""

DEPENDS_SCHEMA = PARENTS_SCHEMA


def depends_user_prompt(
    problem_text: str, earlier: list[tuple[int, str]], asked: list[tuple[int, str]]
) -> str:
    """The user message for one batch: the problem, the earlier steps (as given, already
    shortened by the caller), and the steps to label in full.

    >>> print(depends_user_prompt("Find x.", [(1, "Let x = 2.")], [(2, "So x + 1 = 3.")]))
    Problem: Find x.
    <BLANKLINE>
    Earlier steps:
    1. Let x = 2.
    <BLANKLINE>
    Steps to label (2 to 2):
    2. So x + 1 = 3.
    """
    parts = [f"Problem: {problem_text.strip()}"]
    if earlier:
        parts.append("Earlier steps:\n" + "\n".join(f"{i}. {t}" for i, t in earlier))
    lines = "\n".join(f"{i}. {t}" for i, t in asked)
    parts.append(f"Steps to label ({asked[0][0]} to {asked[-1][0]}):\n{lines}")
    return "\n\n".join(parts)


def depends_prompt_digest() -> str:
    """SHA-256 of the system prompt, the user template and the schema (as
    :func:`prompt_hash` names a ``generate`` prompt)."""
    digest = hashlib.sha256()
    template = depends_user_prompt("{problem}", [(1, "{earlier}")], [(2, "{step}")])
    for part in (DEPENDS_PROMPT, template, json.dumps(DEPENDS_SCHEMA, sort_keys=True)):
        digest.update(part.encode())
        digest.update(b"\0")
    return "sha256:" + digest.hexdigest()
