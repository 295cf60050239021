"""Build the bundled sample data: ``python sample_data/build.py`` (``--check`` to verify).

A repository tool, not part of the installed package. Everything under ``sample_data/runs/``,
``sample_data/task_dags/`` and ``sample_data/gsm/`` is made by this one seeded, byte-for-byte
reproducible command. The build is a list of *parts* (:data:`PARTS`); each part returns the
files it makes (paths relative to the sample-data folder) plus answer records, which are
merged into the one ``runs/answers.json``. To add a data set, write a function
``(source: Path) -> Part`` and append it to :data:`PARTS`.

The simulated runs reproduce the *shape* of the DAG-MATH paper's findings (its Tables 1-4):
six simulated models walk generated task DAGs with the Phase-2 process
(``dagmath_viz/analysis/simulate.py``). Five share one focus and differ only in their wrong-sink
aversion, so their PASS@1 spreads while their R̂ stays put; the sixth is weak (a lower
focus, no aversion). See ``sample_data/README.md``.

``python sample_data/build.py --check`` rebuilds into a temporary folder and reports every
file that differs from, or is missing in, the built folders.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import random
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: use this repository's package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagmath_viz.analysis.simulate import (  # noqa: E402
    Policy,
    TaskDag,
    dump_json,
    parse_task_dag,
    sample_path,
    simulate_samples,
)
from dagmath_viz.bundled import MARKER_NAME  # noqa: E402
from dagmath_viz.schema import DagMathError  # noqa: E402

__all__ = [
    "BUILT_FOLDERS",
    "DATASETS",
    "DEFAULT_SOURCE",
    "ILLEGAL_CASES",
    "MARKER_NAME",
    "PARTS",
    "SAMPLES_PER_PROBLEM",
    "SIM_MODELS",
    "TASK_DAG_SUFFIX",
    "IllegalCase",
    "Part",
    "SimModel",
    "build",
    "build_gsm",
    "build_simulated_runs",
    "check",
    "generate_task_dag",
    "main",
    "seed_for",
    "task_dags",
]

#: The repository's sample-data folder (holds build.py, task_dags/, runs/ and README.md).
DEFAULT_SOURCE = Path(__file__).resolve().parent
SAMPLES_PER_PROBLEM = 12
#: Task DAGs are written as ``problem_<id>.taskdag``: JSON in the gold layout, under a
#: suffix that ``dagmath score`` and the app skip, so they are never read as a model's run.
TASK_DAG_SUFFIX = ".taskdag"


@dataclass(frozen=True, slots=True)
class SimModel:
    """A simulated model: a name and its focused policy's focus and wrong-sink aversion."""

    name: str
    focus: float
    aversion: float = 0.0

    @property
    def policy(self) -> Policy:
        return Policy("focused", self.focus, self.aversion)


def _model_name(focus: float, aversion: float) -> str:
    # The name ``dagmath simulate`` gives by default, so a file can be rebuilt from its name.
    return f"sim-focus-{focus:g}" + (f"-aversion-{aversion:g}" if aversion else "")


FOCUS = 2.5
WEAK_FOCUS = 2.4
#: The five aversions of the models with focus FOCUS.
AVERSIONS = (0.0, 0.3, 0.6, 0.9, 1.2)
#: Chance that a gold step cites the one before it.
CHAIN = 0.95
#: Share of (not big) problems with a given that only a detour uses.
SIDE_GIVEN_SHARE = 0.3
#: Trap guesses per problem, and the wrong answers drawn from each.
TRAPS = 2
TRAP_SINKS = 6
#: Where the wrong answers become possible: every wrong sink also cites the gold step this far
#: along the derivation. A wrong answer then comes only after most of the derivation *and* a
#: detour, so Incorrect walks are the longest, sparsest and most branchy (paper Table 1).
WRONG_AFTER = 0.6
#: Chance that a gold step cites a pivot, at the easiest and (added) at the hardest difficulty:
#: harder derivations lean more on their pivots, so max out-degree rises with difficulty
#: (paper Figure 3).
PIVOT_CITE = 0.35
PIVOT_CITE_HARD = 0.5
#: Task DAG sizes (not big problems): the smallest size at the easiest (1) and the hardest (6)
#: difficulty, linear in between, and how much larger a DAG may be drawn. Harder problems have
#: longer gold derivations, so a walk meets more chances to leave it: PASS@1 and R̂ fall with
#: difficulty, as in the paper's Figure 3.
SIZE_EASIEST = 34
SIZE_HARDEST = 36
SIZE_SPREAD = 4
#: Five models with one focus and rising wrong-sink aversion, and one weak model.
SIM_MODELS = (
    *(SimModel(_model_name(FOCUS, b), FOCUS, b) for b in AVERSIONS),
    SimModel(_model_name(WEAK_FOCUS, 0.0), WEAK_FOCUS, 0.0),
)

#: Datasets: name, problem ids, difficulties (cycled), domain, problem ids with a big DAG
#: (the paper's tail; each dataset's hardest problems).
DATASETS = (
    (
        "arith-word",
        range(101, 131),
        (1, 1.5, 2, 2.5, 3, 3.5, 4),
        "Arithmetic",
        (107, 114, 121, 128),
    ),
    ("olympiad-lite", range(201, 231), (3.5, 4, 4.5, 5, 5.5, 6), "Olympiad", (210, 218, 224, 230)),
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
        SIM_MODELS[0].name,
        0,
        "forward_reference",
        "illegal on purpose: step 1 cites the last step, a later step",
    ),
    IllegalCase(
        SIM_MODELS[2].name,
        1,
        "unknown_parent",
        "illegal on purpose: the last step also cites step 999, which does not exist",
    ),
    IllegalCase(
        SIM_MODELS[4].name,
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
        steps[-1]["direct_dependent_steps"] = [*(steps[-1]["direct_dependent_steps"] or []), 999]
    elif fault == "duplicate_id":
        steps[-1]["step_id"] = steps[-2]["step_id"]
    else:
        raise DagMathError(f"unknown fault {fault!r}")
    metadata = {**record["metadata"], "note": note}
    return {**record, "sample_id": sample_id, "steps": steps, "metadata": metadata}


# --------------------------------------------------------------------------- task DAGs


def _answer(value: int) -> str:
    return f"The final answer is $\\boxed{{{value}}}$."


def generate_task_dag(
    dataset: str, problem_id: int, difficulty: float, domain: str, big: bool = False
) -> dict:
    """One generated task DAG in the gold layout (a dict; the file holds a list of it).

    Shape (the paper's Appendix B and Table 1, reproduced on purpose):

    - givens the solution uses, and one or two givens only detours use;
    - the gold derivation: each step cites one to three earlier facts, and one or two
      *pivot* steps are cited by many later steps (high out-degree), more often on harder
      problems (max out-degree rises with difficulty, Figure 3);
    - the correct sink cites every gold step nothing else cites;
    - detours, each leading to a wrong sink: two *traps* (a guess off a pivot with several
      wrong answers drawn from it), restatements (a step that cites one gold step and
      states exactly its numbers), commentary (no numbers), and a wrong branch (a chain of
      guesses); every wrong sink cites a detour step, so a walk that only visits the gold
      derivation never has a wrong sink to choose (its chance is then the same whatever
      the wrong-sink aversion), and the gold step WRONG_AFTER of the way along, so a wrong
      answer comes only after most of the derivation (a walk stops at its first sink: a
      wrong answer open from the start makes Incorrect walks the shortest).

    34-40 nodes, the same detours whatever the size, so harder problems, larger, have a
    longer gold derivation (more chances to leave it); ``big`` gives 100-120 nodes (the
    paper's tail).
    """
    rng = random.Random(f"task-dag/{dataset}/{problem_id}")
    hard = (difficulty - 1) / 5  # 0 (easiest) .. 1 (hardest)
    low = SIZE_EASIEST + round((SIZE_HARDEST - SIZE_EASIEST) * hard)
    size = rng.randint(100, 120) if big else rng.randint(low, low + SIZE_SPREAD)
    n_givens = rng.randint(3, 5)
    n_side = 2 if big else int(rng.random() < SIDE_GIVEN_SHARE)
    n_traps = TRAPS
    trap_sinks = TRAP_SINKS
    n_restate = 3 if big else 2
    n_remark = 1 if big else 0
    n_branch = 6 if big else 2  # the detours are fixed: a larger DAG has a longer derivation
    detours = n_side + n_traps * (1 + trap_sinks) + n_restate + n_remark + n_branch + 1
    n_gold = size - n_givens - detours - 1
    steps: list[dict] = []
    values: dict[int, int] = {}

    def add(text: str, edge: str, parents: Sequence[int], value: int | None = None) -> int:
        sid = len(steps) + 1
        deps = sorted(set(parents))
        steps.append(
            {"step_id": sid, "edge": edge, "direct_dependent_steps": deps or None, "node": text}
        )
        if value is not None:
            values[sid] = value
        return sid

    givens = [
        add(f"Given: $g_{{{j}}} = {v}$.", "stated in the problem", [], v)
        for j, v in ((j, rng.randint(2, 60)) for j in range(1, n_givens + 1))
    ]
    side_givens = [
        add(f"Also given: $h_{{{j}}} = {v}$.", "stated in the problem", [], v)
        for j, v in ((j, rng.randint(2, 60)) for j in range(1, n_side + 1))
    ]
    # The gold derivation. Each step first cites facts nothing cites yet (so that every gold
    # step is an ancestor of the answer), then recent facts, and often a pivot.
    open_facts = list(givens)
    gold: list[int] = []
    pivots: list[int] = []
    pivot_at = {max(1, n_gold // 4)} | ({n_gold // 2} if big or n_gold > 14 else set())
    for i in range(1, n_gold + 1):
        k = 1 if rng.random() < 0.35 else (2 if rng.random() < 0.75 else 3)
        parents = [open_facts.pop(0) for _ in range(min(len(open_facts), rng.randint(1, 2)))]
        if gold and rng.random() < CHAIN:  # mostly a chain: one or two gold steps admissible
            parents.append(gold[-1])
        pool = givens + gold
        while len(parents) < k and len(set(parents)) < len(pool):
            parents.append(rng.choice(pool[-6:] if rng.random() < 0.7 else pool))
        if pivots and rng.random() < PIVOT_CITE + PIVOT_CITE_HARD * hard:
            parents.append(rng.choice(pivots))
        value = sum(values[p] for p in set(parents)) % 997 + 1
        sid = add(f"$a_{{{i}}} = {value}$", "combine the cited facts", parents, value)
        cited = set(parents)
        open_facts = [f for f in open_facts if f not in cited] + [sid]
        gold.append(sid)
        if i in pivot_at:
            pivots.append(sid)
    reference = values[gold[-1]]
    add(_answer(reference), "the last fact answers the question", [gold[-1], *open_facts])

    wrong_values: set[int] = set()
    late = gold[int(WRONG_AFTER * len(gold))]

    def wrong_sink(cites: Sequence[int]) -> None:
        # a wrong answer needs a detour and most of the derivation: it comes after wandering
        wrong = reference
        while wrong == reference or wrong in wrong_values:
            wrong = rng.randint(1, 999)
        wrong_values.add(wrong)
        add(_answer(wrong), "conclude from the guess", [*cites, late])

    b_index = 0

    def guess(parents: Sequence[int]) -> int:
        nonlocal b_index
        b_index += 1
        value = rng.randint(2, 999)
        return add(f"$b_{{{b_index}}} = {value}$ (a guess)", "try another way", parents)

    # Traps: each a wrong guess off a pivot, with several wrong answers drawn from it (and from
    # the late gold step). A walk that takes the guess is then likely to stop at one of them
    # once it is far enough along; aversion lowers that.
    for _ in range(n_traps):
        trap = guess([rng.choice(pivots)])
        for _ in range(trap_sinks):
            wrong_sink([trap])
    # A wrong branch fed by restatements, a remark and the side givens: the dead ends a
    # correct walk can carry (it leaves the branch before the branch's answer). A
    # restatement cites one gold step and states exactly its numbers.
    feeders = [
        add(f"So $a_{{{gold.index(x) + 1}}}$ is ${values[x]}$ again.", "restating", [x])
        for x in (rng.choice(gold[2 * len(gold) // 3 :]) for _ in range(n_restate))
    ]
    feeders += [
        add("Check that the cited facts agree.", "a remark", [rng.choice(gold)])
        for _ in range(n_remark)
    ]
    feeders += side_givens
    prev = [rng.choice(gold)]
    for _ in range(n_branch):
        prev = [guess(prev + ([feeders.pop()] if feeders else []))]
    for f in feeders:  # any feeder left joins the branch's last guess
        last = steps[prev[0] - 1]
        last["direct_dependent_steps"] = sorted({*last["direct_dependent_steps"], f})
    wrong_sink(prev)
    assert len(steps) == size, (len(steps), size)
    return {
        "problem_id": problem_id,
        "domain": domain,
        "difficulty": difficulty,
        "problem_text": (
            f"Simulated problem {problem_id} ({dataset}): from the given values, find the "
            f"last quantity of the derivation. (Generated; no model or benchmark wrote it.)"
        ),
        "sample_id": 0,
        "final_answer": str(reference),
        "steps": steps,
    }


def task_dags() -> list[tuple[str, dict]]:
    """(dataset, gold-layout document) for every generated task DAG, in build order."""
    out = []
    for dataset, ids, difficulties, domain, big in DATASETS:
        for i, pid in enumerate(ids):
            diff = difficulties[i % len(difficulties)]
            out.append((dataset, generate_task_dag(dataset, pid, diff, domain, pid in big)))
    return out


def _id_key(problem_id: int | str) -> tuple[int, int | str]:
    return (0, problem_id) if isinstance(problem_id, int) else (1, str(problem_id))


def build_simulated_runs(source: Path) -> Part:
    """The task DAGs and the simulated models' runs over them (see the README)."""
    docs = task_dags()
    files: dict[str, str] = {}
    dags: list[tuple[str, TaskDag]] = []
    for dataset, doc in docs:
        rel = f"task_dags/{dataset}/problem_{doc['problem_id']}{TASK_DAG_SUFFIX}"
        files[rel] = json.dumps([doc], indent=2, ensure_ascii=False) + "\n"  # for reading
        dags.append((dataset, parse_task_dag([doc], source=rel)))
    by_dataset: dict[str, list[TaskDag]] = {}
    for dataset, dag in dags:
        by_dataset.setdefault(dataset, []).append(dag)
    illegal = {
        (case.model, dataset, ds_dags[case.problem_index].problem_id): case
        for case in ILLEGAL_CASES
        for dataset, ds_dags in by_dataset.items()
    }
    for model in SIM_MODELS:
        for dataset, dag in dags:
            seed = seed_for(model.name, dataset, dag.problem_id)
            records = simulate_samples(dag, model.policy, SAMPLES_PER_PROBLEM, seed, model.name)
            case = illegal.get((model.name, dataset, dag.problem_id))
            if case is not None:
                records.append(_corrupt(records[0], case.fault, case.note, SAMPLES_PER_PROBLEM))
            rel = sample_path("runs", model.name, dataset, dag.problem_id)
            files[rel.as_posix()] = dump_json(records)
    files[f"runs/{MARKER_NAME}"] = (
        "This folder is the bundled *simulated* sample data of dagmath-viz: random walks over\n"
        "generated task DAGs (sample_data/build.py). No language model wrote any of it.\n"
        "The app and `dagmath report` label data read from here as simulated.\n"
    )
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
    # no difficulty: a proof's depth is not the DAG-MATH difficulty scale
    answers = tuple(
        {"problem_id": p["problem_id"], "dataset": GSM_DATASET, "answer": str(p["answer"])}
        for p in problems
    )
    return Part(files=files, answers=answers)


def _jsonl(records: Sequence[dict[str, Any]]) -> str:
    import json

    return "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in records)


#: The build, in order. Append a ``(source: Path) -> Part`` function to add a data set.
PARTS: tuple[Callable[[Path], Part], ...] = (build_simulated_runs, build_gsm)
#: The folders under the sample-data folder that the build owns entirely.
BUILT_FOLDERS = ("runs", "gsm", "task_dags")


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
        prog="python sample_data/build.py", description=__doc__.split("\n\n")[0]
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
