"""The naive baseline: how one would score a run without thinking about speed.

One process; the standard library's ``json``; a networkx ``DiGraph`` per trajectory for the
graph statistics, dead ends and ancestors; and one uncached math-verify call per trajectory
(``verify(parse(reference), parse(prediction))`` in the main thread, with math-verify's own
default timeouts). It is written to be plain, not slow: no needless copies, no repeated
passes, and it computes the same record fields ``dagmath score`` writes for a well-formed
trajectory (illegal ones get the same class, not the same error texts).

Usage: ``python benchmarks/naive.py RUN_DIR -o OUT.jsonl``; answers come from
``RUN_DIR/answers.jsonl`` (``dataset``, ``problem_id``, ``answer``, ``difficulty``).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

import networkx as nx
from math_verify import parse, verify


def last_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` (nested braces included), else None."""
    start = text.rfind("\\boxed{")
    if start == -1:
        return None
    depth = 0
    for k in range(start + len("\\boxed"), len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return text[start + len("\\boxed{") : k].strip()
    return text[start + len("\\boxed{") :].strip()


def score_sample(sample: dict, model: str, dataset: str, reference: str | None) -> dict:
    steps = sample["steps"]
    g = nx.DiGraph()
    legal = True
    seen = set()
    for step in steps:
        sid = step["step_id"]
        legal = legal and isinstance(sid, int) and sid not in seen
        seen.add(sid)
        g.add_node(sid)
    for step in steps:
        for parent in step.get("direct_dependent_steps") or []:
            if parent in seen and parent < step["step_id"]:
                g.add_edge(parent, step["step_id"])
            else:
                legal = False
    legal = legal and nx.is_directed_acyclic_graph(g) and bool(steps)
    final = steps[-1]["step_id"]
    n, e = g.number_of_nodes(), g.number_of_edges()
    dead = sorted(v for v, d in g.out_degree() if d == 0 and v != final)
    closed = legal and not dead
    prediction = last_boxed(steps[-1]["text"]) or steps[-1]["text"].strip()
    correct = None
    if reference is not None:
        gold = parse("\\boxed{" + reference + "}")
        correct = bool(verify(gold, parse("\\boxed{" + prediction + "}")))
    if not legal:
        cls = "illegal"
    elif correct is None:
        cls = "unscored"
    else:
        cls = "incorrect" if not correct else ("perfect" if closed else "imperfect")
    return {
        "model": model,
        "dataset": dataset,
        "problem_id": str(sample["problem_id"]),
        "sample_id": sample["sample_id"],
        "n_nodes": n,
        "n_edges": e,
        "density": 2 * e / (n * (n - 1)) if n > 1 else 0.0,
        "max_in_degree": max((d for _, d in g.in_degree()), default=0),
        "max_out_degree": max((d for _, d in g.out_degree()), default=0),
        "dead_ends": dead,
        "closeness_rate": (n - len(dead)) / n if n else 0.0,
        "closed": closed,
        "ancestor_share": (len(nx.ancestors(g, final)) + 1) / n if n else 0.0,
        "predicted_answer": prediction,
        "reference_answer": reference,
        "final_correct": correct,
        "perfect": None if correct is None else closed and correct,
        "class": cls,
    }


def score_run(root: Path, out: Path) -> int:
    answers = {}
    for line in (root / "answers.jsonl").read_text().splitlines():
        row = json.loads(line)
        answers[row["dataset"], str(row["problem_id"])] = row["answer"]
    n = 0
    with out.open("w") as handle:
        for path in sorted(root.rglob("problem_*_all_samples.json")):
            model, dataset = path.parent.parent.name, path.parent.name
            with path.open() as f:
                samples = json.load(f)
            for sample in samples:
                ref = answers.get((dataset, str(sample["problem_id"])))
                handle.write(json.dumps(score_sample(sample, model, dataset, ref)) + "\n")
                n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="naive baseline scorer")
    parser.add_argument("root", type=Path)
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    n = score_run(args.root, args.output)
    print(f"naive: {n} trajectories", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
