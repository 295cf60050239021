"""The log-count example of the paper's Figure 1 (DEFINITIONS.md §4) in the official layout.

Shared by the page, navigation and streamed-loading tests. Parents use the task-DAG node
numbers; each trajectory is renumbered 1..L by :func:`sample`.
"""

from __future__ import annotations

import json
from pathlib import Path

LOGCOUNT = {
    1: [], 2: [], 3: [], 4: [1], 5: [1], 6: [1], 7: [6], 8: [3, 4, 7], 9: [7],
    10: [2, 5, 8], 11: [3, 9],
}  # fmt: skip
ANSWER_TEXT = {10: r"The final answer is $\boxed{300}$.", 11: r"The final answer is $\boxed{0}$."}
WALKS = {
    "perfect": [1, 2, 3, 4, 5, 6, 7, 8, 10],
    "imperfect": [1, 2, 3, 4, 5, 6, 7, 9, 8, 10],  # v9 (step 8) is cited by nothing
    "wrong": [1, 2, 3, 6, 7, 9, 11],  # v2 (step 2), a given, is cited by nothing
}
#: model-a writes the perfect, imperfect and wrong walks; model-b the perfect one twice.
TWO_MODELS = {"model-a": ["perfect", "imperfect", "wrong"], "model-b": ["perfect", "perfect"]}


def sample(walk: list[int], sample_id: int) -> dict:
    """One trajectory of problem 1 walking the task DAG's nodes ``walk`` in order."""
    number = {v: i + 1 for i, v in enumerate(walk)}
    steps = [
        {
            "step_id": number[v],
            "thinking": f"why v{v}",
            "direct_dependent_steps": [number[p] for p in LOGCOUNT[v]] or None,
            "text": ANSWER_TEXT.get(v, f"statement v{v}"),
        }
        for v in walk
    ]
    return {
        "problem_id": 1,
        "sample_id": sample_id,
        "problem_text": "log-count",
        "steps": steps,
        "final_answer": steps[-1]["text"],
        "metadata": {"model": None},
    }


def write_logcount(root: Path, runs: dict[str, list[str]] = TWO_MODELS) -> Path:
    """``root/<model>/logs/problem_1_all_samples.json`` for each model's walks, and the
    answer key (300)."""
    for model, walks in runs.items():
        folder = root / model / "logs"
        folder.mkdir(parents=True)
        samples = [sample(WALKS[w], i) for i, w in enumerate(walks)]
        (folder / "problem_1_all_samples.json").write_text(json.dumps(samples))
    (root / "answers.json").write_text(json.dumps({"1": "300"}))
    return root
