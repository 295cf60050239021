"""Build the bundled sample data: ``python -m dagmath_viz.sample_data``.

Everything under ``sample_data/runs/`` is made by this one seeded, byte-for-byte reproducible
command from the hand-written task DAGs in ``sample_data/task_dags/<dataset>/``. The build is
a list of *parts* (:data:`PARTS`); each part reads what it needs from the sample-data folder
and returns the files it makes (paths relative to that folder) plus answer records, which
are merged into the one ``runs/answers.json``. To add a data set, write a function
``(source: Path) -> Part`` and append it to :data:`PARTS`.

``python -m dagmath_viz.sample_data --check`` rebuilds into a temporary folder and reports
every file that differs from, or is missing in, ``sample_data/runs/``.
"""

from __future__ import annotations

import argparse
import filecmp
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dagmath_viz.schema import DagMathError
from dagmath_viz.simulate import (
    Policy,
    TaskDag,
    dump_json,
    load_task_dag,
    sample_path,
    simulate_samples,
)

__all__ = [
    "DEFAULT_SOURCE",
    "ILLEGAL_CASES",
    "PARTS",
    "SAMPLES_PER_PROBLEM",
    "SIM_MODELS",
    "IllegalCase",
    "Part",
    "SimModel",
    "build",
    "build_gsm",
    "build_simulated_runs",
    "check",
    "main",
    "seed_for",
]

#: The repository's sample-data folder (holds task_dags/, runs/ and README.md).
DEFAULT_SOURCE = Path(__file__).resolve().parents[1] / "sample_data"
SAMPLES_PER_PROBLEM = 12


@dataclass(frozen=True, slots=True)
class SimModel:
    """A simulated model: a name and the focus of its focused policy."""

    name: str
    focus: float


#: Focus values chosen so that, with 12 samples per problem, every model shows every class
#: (exact class probabilities per problem say a class is missing with chance < 0.5%).
SIM_MODELS = (
    SimModel("sim-focus-1.0", 1.0),
    SimModel("sim-focus-1.6", 1.6),
    SimModel("sim-focus-2.2", 2.2),
)


@dataclass(frozen=True, slots=True)
class IllegalCase:
    """An illegal trajectory written on purpose: a corrupted copy of sample 0.

    It is appended as sample ``SAMPLES_PER_PROBLEM`` of the problem at ``problem_index``
    (in ascending id order) of every dataset, for ``model``.
    """

    model: str
    problem_index: int
    fault: str  # forward_reference | unknown_parent | duplicate_id
    note: str


ILLEGAL_CASES = (
    IllegalCase(
        "sim-focus-1.0",
        0,
        "forward_reference",
        "illegal on purpose: step 1 cites the last step, a later step",
    ),
    IllegalCase(
        "sim-focus-1.6",
        1,
        "unknown_parent",
        "illegal on purpose: the last step also cites step 99, which does not exist",
    ),
    IllegalCase(
        "sim-focus-2.2",
        2,
        "duplicate_id",
        "illegal on purpose: the last step repeats the step_id of the step before it",
    ),
)


@dataclass(frozen=True, slots=True)
class Part:
    """What one part of the build makes.

    Attributes:
        files: text of each file, by path relative to the sample-data folder.
        answers: answer records ``{problem_id, dataset, answer, difficulty}``.
    """

    files: dict[str, str] = field(default_factory=dict)
    answers: tuple[dict[str, Any], ...] = ()


def seed_for(model: str, dataset: str, problem_id: int | str) -> str:
    """The string seed of one sample file: ``"<model>/<dataset>/<problem_id>"``."""
    return f"{model}/{dataset}/{problem_id}"


def _corrupt(record: dict, fault: str, note: str, sample_id: int) -> dict:
    """A deep-enough copy of ``record`` with one structural fault."""
    steps = [dict(s) for s in record["steps"]]
    last = len(steps)
    if fault == "forward_reference":
        steps[0]["direct_dependent_steps"] = [last]
    elif fault == "unknown_parent":
        steps[-1]["direct_dependent_steps"] = [*(steps[-1]["direct_dependent_steps"] or []), 99]
    elif fault == "duplicate_id":
        steps[-1]["step_id"] = steps[-2]["step_id"]
    else:
        raise DagMathError(f"unknown fault {fault!r}")
    metadata = {**record["metadata"], "note": note}
    return {**record, "sample_id": sample_id, "steps": steps, "metadata": metadata}


def _task_dags(source: Path) -> list[tuple[str, TaskDag]]:
    """(dataset, task DAG) for every ``task_dags/<dataset>/problem_<id>.json``, sorted."""
    found = []
    for path in sorted((source / "task_dags").glob("*/problem_*.json")):
        found.append((path.parent.name, load_task_dag(path)))
    if not found:
        raise DagMathError(f"{source / 'task_dags'}: no task DAGs found")
    return sorted(found, key=lambda item: (item[0], _id_key(item[1].problem_id)))


def _id_key(problem_id: int | str) -> tuple[int, int | str]:
    return (0, problem_id) if isinstance(problem_id, int) else (1, str(problem_id))


def build_simulated_runs(source: Path) -> Part:
    """The simulated models' runs over every hand-written task DAG (see the README)."""
    dags = _task_dags(source)
    by_dataset: dict[str, list[TaskDag]] = {}
    for dataset, dag in dags:
        by_dataset.setdefault(dataset, []).append(dag)
    illegal = {
        (case.model, dataset, ds_dags[case.problem_index].problem_id): case
        for case in ILLEGAL_CASES
        for dataset, ds_dags in by_dataset.items()
    }
    files: dict[str, str] = {}
    for model in SIM_MODELS:
        policy = Policy("focused", model.focus)
        for dataset, dag in dags:
            seed = seed_for(model.name, dataset, dag.problem_id)
            records = simulate_samples(dag, policy, SAMPLES_PER_PROBLEM, seed, model.name)
            case = illegal.get((model.name, dataset, dag.problem_id))
            if case is not None:
                records.append(_corrupt(records[0], case.fault, case.note, SAMPLES_PER_PROBLEM))
            rel = sample_path("runs", model.name, dataset, dag.problem_id)
            files[rel.as_posix()] = dump_json(records)
    answers = tuple(
        {
            "problem_id": dag.problem_id,
            "dataset": dataset,
            "answer": dag.reference_answer,
            "difficulty": dag.difficulty,
        }
        for dataset, dag in dags
    )
    return Part(files=files, answers=answers)


#: The GSM logic-program set: (irrelevant structure, overlap) cells, problems per cell, seed.
GSM_CELLS = (
    ("none", "none"),
    *((s, o) for s in ("axiom", "tree", "trees") for o in ("none", "entity", "agent", "both")),
)
GSM_PER_CELL = 2
GSM_SEED = 2025
GSM_DATASET = "gsm-logic"
GSM_STRATEGIES = ("shortest", "dfs", "bfs", "overlap")


def build_gsm(source: Path) -> Part:
    """Generated logic-program word problems, solved by each strategy acting as a model.

    Writes ``gsm/problems.jsonl`` and ``gsm/proofs.jsonl`` (the Efficiency page reads them)
    and each proof as a DAG-MATH trajectory under ``runs/gsm-<strategy>/gsm-logic/``.
    """
    from dagmath_viz.logic import generate_problems, problem_to_record, solve_record
    from dagmath_viz.logic.export import trajectory_sample

    problems = []
    for i, (irrelevant, overlap) in enumerate(GSM_CELLS):
        batch = generate_problems(
            GSM_PER_CELL, GSM_SEED, irrelevant, overlap, first_id=1 + i * GSM_PER_CELL
        )
        problems.extend(problem_to_record(p) for p in batch)
    proofs = [solve_record(p, s) for s in GSM_STRATEGIES for p in problems]
    files = {
        "gsm/problems.jsonl": _jsonl(problems),
        "gsm/proofs.jsonl": _jsonl(proofs),
    }
    for proof in proofs:
        rel = sample_path("runs", f"gsm-{proof['strategy']}", GSM_DATASET, proof["problem_id"])
        files[rel.as_posix()] = dump_json([trajectory_sample(proof)])
    answers = tuple(
        {"problem_id": p["problem_id"], "dataset": GSM_DATASET, "answer": str(p["answer"]),
         "difficulty": p["depth"]}
        for p in problems
    )  # fmt: skip
    return Part(files=files, answers=answers)


def _jsonl(records: Sequence[dict[str, Any]]) -> str:
    import json

    return "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in records)


#: The build, in order. Append a ``(source: Path) -> Part`` function to add a data set.
PARTS: tuple[Callable[[Path], Part], ...] = (build_simulated_runs, build_gsm)
#: The folders under the sample-data folder that the build owns entirely.
BUILT_FOLDERS = ("runs", "gsm")


def _merge(parts: Sequence[Part]) -> dict[str, str]:
    files: dict[str, str] = {}
    answers: list[dict[str, Any]] = []
    for part in parts:
        for rel, text in part.files.items():
            if rel in files:
                raise DagMathError(f"two parts of the build write {rel}")
            files[rel] = text
        answers.extend(part.answers)
    answers.sort(key=lambda r: (str(r["dataset"]), _id_key(r["problem_id"])))
    files["runs/answers.json"] = dump_json(answers)
    return files


def build(source: Path = DEFAULT_SOURCE, out: Path | None = None) -> list[Path]:
    """Build every part from ``source`` and write the files under ``out`` (default: source).

    Returns:
        The written paths, sorted.
    """
    out = source if out is None else out
    files = _merge([part(source) for part in PARTS])
    written = []
    for rel in sorted(files):
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(files[rel].encode("utf-8"))
        written.append(path)
    return written


def _tree(root: Path, folder: str) -> set[str]:
    """Files under ``root/folder``, as paths relative to ``root``."""
    return {p.relative_to(root).as_posix() for p in (root / folder).rglob("*") if p.is_file()}


def check(source: Path = DEFAULT_SOURCE) -> list[str]:
    """Rebuild into a temporary folder; describe each difference with the built folders.

    Returns:
        One line per differing, missing or extra file (empty when identical).
    """
    with tempfile.TemporaryDirectory() as tmp:
        build(source, Path(tmp))
        fresh = {rel for folder in BUILT_FOLDERS for rel in _tree(Path(tmp), folder)}
        committed = {rel for folder in BUILT_FOLDERS for rel in _tree(source, folder)}
        problems = [f"missing: {rel}" for rel in sorted(fresh - committed)]
        problems += [f"not made by the build: {rel}" for rel in sorted(committed - fresh)]
        problems += [
            f"differs: {rel}"
            for rel in sorted(fresh & committed)
            if not filecmp.cmp(Path(tmp) / rel, source / rel, shallow=False)
        ]
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: build (default) or ``--check``; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m dagmath_viz.sample_data", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="sample-data folder")
    parser.add_argument("--out", type=Path, help="write here instead of the source folder")
    parser.add_argument("--check", action="store_true", help="compare a rebuild with runs/")
    args = parser.parse_args(argv)
    try:
        if args.check:
            problems = check(args.source)
            for line in problems:
                print(line, file=sys.stderr)
            print("sample data up to date" if not problems else f"{len(problems)} differences")
            return 1 if problems else 0
        written = build(args.source, args.out)
    except (DagMathError, OSError) as exc:
        print(f"sample_data: error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {len(written)} files under {args.out or args.source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
