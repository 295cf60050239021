"""``dagmath simulate``: sample trajectories from a task DAG, or compute exact PRR and PASS@1.

Examples::

    dagmath simulate task.json --policy focused --focus 2 --samples 16 --seed 7 -o runs/
    dagmath simulate task.json --policy uniform --exact
    dagmath simulate task.json --policy uniform --exact --samples 20000   # + Monte-Carlo on stderr

With ``--exact`` stdout holds exactly one JSON object ``{"prr": ..., "pass_at_1": ...}``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from dagmath_viz.analysis.simulate import (
    DEFAULT_MAX_STATES,
    Policy,
    exact_rates,
    load_task_dag,
    monte_carlo_rates,
    simulate_samples,
    write_samples,
)
from dagmath_viz.cli.common import UsageError, add_command, positive, say

__all__ = ["register", "run_simulate"]

PROG = "dagmath simulate"


def _seed(text: str) -> int | str:
    """An integer seed when the text is one, else the text itself (a stable string seed)."""
    try:
        return int(text)
    except ValueError:
        return text


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task_dag", metavar="TASK_DAG.json", help="a task DAG in the gold layout")
    parser.add_argument("--policy", choices=("uniform", "focused"), required=True)
    parser.add_argument(
        "--focus",
        type=float,
        default=None,
        metavar="X",
        help="focused policy: weight exp(X) for the correct sink and its ancestors, 1 for the "
        "rest (default: 1)",
    )
    parser.add_argument(
        "--wrong-sink-aversion",
        type=float,
        default=None,
        metavar="B",
        help="focused policy: multiply a wrong sink's weight by exp(-B), so the walk tends "
        "to search on past wrong answers (default 0)",
    )
    parser.add_argument("--samples", type=positive, metavar="N", help="number of trajectories")
    parser.add_argument(
        "--seed", type=_seed, default=0, metavar="S", help="random seed, an integer or any text"
    )
    parser.add_argument("--model", metavar="NAME", help="model folder name (default: sim-...)")
    parser.add_argument(
        "--dataset", metavar="NAME", help="dataset folder name (default: the task DAG's folder)"
    )
    parser.add_argument("-o", "--output", metavar="OUT_DIR", help="root folder for the samples")
    parser.add_argument(
        "--exact",
        action="store_true",
        help='print {"prr": ..., "pass_at_1": ...} computed exactly; with --samples N the '
        "Monte-Carlo estimate goes to stderr",
    )
    parser.add_argument(
        "--max-states",
        type=positive,
        default=DEFAULT_MAX_STATES,
        metavar="K",
        help="refuse --exact beyond K visited-set states",
    )


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``simulate`` to the ``dagmath`` parser; returns the subparser."""
    parser = add_command(
        subparsers,
        "simulate",
        help="sample trajectories from a task DAG (Phase 2), or compute exact PRR and PASS@1",
        description=__doc__,
    )
    _configure(parser)
    parser.set_defaults(func=run_simulate)
    return parser


def _policy(args: argparse.Namespace) -> Policy:
    if args.policy == "uniform":
        if args.focus is not None or args.wrong_sink_aversion is not None:
            raise UsageError("--focus and --wrong-sink-aversion apply to --policy focused only")
        return Policy("uniform")
    focus = 1.0 if args.focus is None else args.focus
    return Policy("focused", focus, args.wrong_sink_aversion or 0.0)


def _check_mode(args: argparse.Namespace) -> None:
    if args.exact:
        if args.output:
            raise UsageError("--exact prints its result; drop -o/--output")
        return
    if args.samples is None or args.output is None:
        raise UsageError("give --samples N and -o OUT_DIR (or --exact)")


def _default_model(policy: Policy) -> str:
    if policy.kind == "uniform":
        return "sim-uniform"
    averse = f"-aversion-{policy.aversion:g}" if policy.aversion else ""
    return f"sim-focus-{policy.focus:g}{averse}"


def run_simulate(args: argparse.Namespace) -> int:
    """The ``simulate`` command; returns the exit code.

    Expected failures (DagMathError, OSError) propagate to :func:`dagmath_viz.cli.main`,
    which turns every command's errors into one line on stderr and an exit code.
    """
    _check_mode(args)
    policy = _policy(args)
    dag = load_task_dag(args.task_dag)
    if args.exact:
        return _print_exact(dag, policy, args)
    model = args.model or _default_model(policy)
    dataset = args.dataset or Path(args.task_dag).resolve().parent.name or "default"
    records = simulate_samples(dag, policy, args.samples, args.seed, model)
    path = write_samples(records, args.output, model, dataset, dag.problem_id)
    say(f"{PROG}: wrote {args.samples} samples to {path}")
    return 0


def _print_exact(dag, policy: Policy, args: argparse.Namespace) -> int:
    exact = exact_rates(dag, policy, max_states=args.max_states)
    sys.stdout.write(json.dumps({"prr": exact.prr, "pass_at_1": exact.pass_at_1}) + "\n")
    if args.samples:
        mc = monte_carlo_rates(dag, policy, args.samples, args.seed)
        say(
            f"{PROG}: monte carlo ({mc.n} samples, seed {args.seed!r}): "
            f"prr {mc.prr:.6f} ± {mc.prr_se:.6f}, pass_at_1 {mc.pass_at_1:.6f} "
            f"± {mc.pass_at_1_se:.6f} (exact {exact.prr:.6f}, {exact.pass_at_1:.6f})"
        )
    return 0
