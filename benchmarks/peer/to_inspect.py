"""Convert a raw run (official layout) into Inspect eval logs with the same content.

Runs in the peer venv (``benchmarks/.data/inspect-venv``, inspect_ai installed), not in the
project's: it imports only the standard library and inspect_ai, so it never sees
``dagmath_viz``. Called by ``benchmarks/peer_inspect.py``:

    python to_inspect.py RAW_FOLDER SCORED_JSONL OUT_DIR [--format eval|json]

One log per model × dataset (``<model>/<dataset>/problem_<id>_all_samples.json``), one
sample per trajectory: the problem text as the user message, every step (id, parents,
thinking, text) as the assistant message, the final answer as the model output, the
reference answer as the target and a ``match`` score (C/I, from ``dagmath score``'s
``final_correct`` in SCORED_JSONL, so both viewers show the same verdicts). The logs are
built with inspect_ai's own classes and written by ``write_eval_log``, so Inspect View
reads them as it reads its own.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalMetric,
    EvalResults,
    EvalSample,
    EvalScore,
    EvalSpec,
    EvalStats,
    write_eval_log,
)
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelOutput
from inspect_ai.scorer import Score

#: A fixed creation time: the same run converts to the same logs (and file names).
CREATED = "2026-01-01T00:00:00+00:00"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("raw", type=Path)
    parser.add_argument("scored", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--format", choices=("eval", "json"), default="eval")
    args = parser.parse_args(argv)
    verdicts = read_verdicts(args.scored)
    args.out.mkdir(parents=True, exist_ok=True)
    groups: dict[tuple[str, str], list[Path]] = defaultdict(list)
    for path in sorted(args.raw.glob("*/*/problem_*_all_samples.json")):
        groups[path.parent.parent.name, path.parent.name].append(path)
    total = 0
    for index, ((model, dataset), files) in enumerate(sorted(groups.items())):
        log = eval_log(model, dataset, files, verdicts, index)
        name = f"2026-01-01T00-00-00+00-00_{dataset}-{model}_{index:04d}.{args.format}"
        write_eval_log(log, args.out / name, format=args.format)
        total += len(log.samples or [])
    print(json.dumps({"logs": len(groups), "samples": total}))
    return 0


def read_verdicts(scored: Path) -> dict[tuple, dict]:
    """(model, dataset, problem_id, sample_id) -> the scored record's answer fields."""
    out = {}
    with scored.open("rb") as handle:
        for line in handle:
            r = json.loads(line)
            key = (r["model"], r["dataset"], str(r["problem_id"]), str(r["sample_id"]))
            out[key] = {
                k: r.get(k)
                for k in ("final_correct", "predicted_answer", "reference_answer", "class")
            }
    return out


def eval_log(model: str, dataset: str, files: list[Path], verdicts: dict, index: int) -> EvalLog:
    samples = []
    for path in files:
        for record in json.loads(path.read_bytes()):
            key = (model, dataset, str(record["problem_id"]), str(record["sample_id"]))
            samples.append(eval_sample(model, record, verdicts.get(key, {})))
    correct = sum(s.scores["match"].value == "C" for s in samples)
    n = len(samples)
    return EvalLog(
        status="success",
        eval=EvalSpec(
            eval_id=f"dagmath-{index:04d}",
            run_id="dagmath-peer-benchmark",
            created=CREATED,
            task=dataset,
            task_id=f"{dataset}-{index:04d}",
            dataset=EvalDataset(name=dataset, samples=n),
            model=f"dagmath/{model}",
            config=EvalConfig(),
        ),
        results=EvalResults(
            total_samples=n,
            completed_samples=n,
            scores=[
                EvalScore(
                    name="match",
                    scorer="match",
                    scored_samples=n,
                    metrics={"accuracy": EvalMetric(name="accuracy", value=correct / max(n, 1))},
                )
            ],
        ),
        stats=EvalStats(started_at=CREATED, completed_at=CREATED),
        samples=samples,
    )


def eval_sample(model: str, record: dict, verdict: dict) -> EvalSample:
    steps = "\n\n".join(
        f"Step {s.get('step_id')} (from {s.get('direct_dependent_steps')}):\n"
        f"{s.get('thinking') or ''}\n{s.get('text') or ''}"
        for s in record.get("steps") or []
    )
    problem = record.get("problem_text") or ""
    final = record.get("final_answer") or ""
    return EvalSample(
        id=f"{record['problem_id']}-{record['sample_id']}",
        epoch=1,
        input=problem,
        target=str(verdict.get("reference_answer") or ""),
        messages=[ChatMessageUser(content=problem), ChatMessageAssistant(content=steps)],
        output=ModelOutput.from_content(f"dagmath/{model}", final),
        scores={
            "match": Score(
                value="C" if verdict.get("final_correct") else "I",
                answer=verdict.get("predicted_answer"),
                explanation=verdict.get("class"),
            )
        },
        metadata={"problem_id": str(record["problem_id"]), "sample_id": record["sample_id"]},
    )


if __name__ == "__main__":
    sys.exit(main())
