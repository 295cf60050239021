"""The ``dagmath gsm`` command: generate, solve, export, report.

The ``dagmath`` command calls :func:`register` (:func:`add_gsm_parser`) on its sub-parsers,
like every command module (see :mod:`dagmath_viz.cli`); :func:`main` runs ``dagmath gsm``
with the given arguments. Handlers raise; ``dagmath``'s one error handler turns bad input
into a one-line message on stderr and an exit code, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from dagmath_viz.cli import common
from dagmath_viz.cli.common import (
    EXIT_OK,
    EXIT_PARTIAL,
    NothingLoadedError,
    add_command,
    natural,
    positive,
    say,
)
from dagmath_viz.logic.efficiency import STRATEGIES, efficiency_table, format_table
from dagmath_viz.logic.export import DATASET, export_trajectories
from dagmath_viz.logic.generator import IRRELEVANT, OVERLAPS, GeneratorConfig, generate_problems
from dagmath_viz.logic.records import problem_to_record, read_jsonl, solve_record, write_jsonl
from dagmath_viz.schema import DagMathError

__all__ = ["add_gsm_parser", "main", "register"]


def _generate(args: argparse.Namespace) -> int:
    cfg = GeneratorConfig(depth=args.depth, n_trees=args.trees)
    if args.paired:
        from dagmath_viz.logic.generator import generate_paired

        problems = [
            p
            for i in range(args.problems)
            for p in generate_paired(args.seed, args.first_id + i, args.irrelevant, cfg).values()
        ]
        n = write_jsonl(args.output, (problem_to_record(p) for p in problems))
        say(f"wrote {n} problems to {args.output}")  # -q quiets it, as every summary
        return 0
    problems = generate_problems(
        args.problems, args.seed, args.irrelevant, args.overlap, args.control, cfg, args.first_id
    )
    n = write_jsonl(args.output, (problem_to_record(p) for p in problems))
    say(f"wrote {n} problems to {args.output}")
    return 0


def _solve(args: argparse.Namespace) -> int:
    problems = read_jsonl(args.problems)
    strategies = STRATEGIES if args.strategy == "all" else (args.strategy,)
    records = []
    for i, rec in enumerate(problems, 1):
        for s in strategies:
            try:
                records.append(solve_record(rec, s))
            except DagMathError as exc:
                raise type(exc)(f"{args.problems}: record {i}: {exc}") from None
    n = write_jsonl(args.output, records)
    say(f"wrote {n} proofs to {args.output}")
    return 0


def _text_records(path: str, run) -> list[dict]:
    """Run ``run`` on each JSON object line of a file; a bad line becomes an error record.

    The file is read by :mod:`dagmath_viz.jsonio`, as every command reads JSONL (a BOM is
    skipped, nesting is limited). Errors name the file and the line, so every input line
    has one output line.
    """
    from dagmath_viz import jsonio

    out = []
    for doc in jsonio.read_jsonl(path):  # one line past the line cap: the file's error
        if isinstance(doc.value, Exception):
            out.append({"id": None, "error": f"{path}: {doc.value}"})  # line, column
            continue
        if not isinstance(doc.value, dict):
            out.append({"id": None, "error": f"{path}: {doc.location}: expected a JSON object"})
            continue
        rec = run(doc.value)
        if "error" in rec:
            rec["error"] = f"{path}: {doc.location}: {rec['error']}"
        out.append(rec)
    return out


#: How many unreadable records are named on stderr (all of them with ``--verbose``).
MAX_ERRORS_SHOWN = 20


def _unreadable(out: list[dict], source: str, output: str, what: str) -> int:
    """Name the records that could not be read (stderr) and say how the command ends:
    0 when every record was read, 4 (README, exit codes) when some were not but the others
    were written; when none was, :class:`NothingLoadedError` (exit 3)."""
    errors = [str(r["error"]) for r in out if "error" in r]
    shown = len(errors) if common.VERBOSITY > 0 else MAX_ERRORS_SHOWN
    for error in errors[:shown]:
        say(f"dagmath: error: {error}")
    if len(errors) > shown:
        say(f"dagmath: ... {len(errors) - shown} more (all in {output}, or -v)")
    if len(errors) == len(out):
        found = f"none of its {len(out)} records could be read" if out else "it holds no record"
        raise NothingLoadedError(f"nothing to {what}: {source}: {found}")
    return EXIT_PARTIAL if errors else EXIT_OK


def _solve_text(args: argparse.Namespace) -> int:
    from dagmath_viz.logic.modelproofs import solve_text_record

    out = _text_records(args.problems, solve_text_record)
    n = write_jsonl(args.output, out)
    bad = sum("error" in r for r in out)
    say(f"wrote {n} answers to {args.output} ({bad} unreadable)")
    return _unreadable(out, args.problems, args.output, "solve")


def _score_proofs(args: argparse.Namespace) -> int:
    from dagmath_viz.logic.modelproofs import score_proof_record

    out = _text_records(args.proofs, score_proof_record)
    n = write_jsonl(args.output, out)
    bad = sum("error" in r for r in out)
    say(f"wrote {n} scored proofs to {args.output} ({bad} unreadable)")
    if args.export and bad < len(out):
        from dagmath_viz.logic.export import export_model_proofs

        files = export_model_proofs(out, args.export, args.dataset)
        say(f"wrote {len(files)} files under {args.export}")
    return _unreadable(out, args.proofs, args.output, "score")


def _export(args: argparse.Namespace) -> int:
    records = read_jsonl(args.proofs)
    files = export_trajectories(records, args.output, args.dataset)
    say(f"wrote {len(files)} files under {args.output}")
    return 0


def _report(args: argparse.Namespace) -> int:
    records = [r for path in args.proofs for r in read_jsonl(path)]
    table = efficiency_table(records)
    if args.format == "json":
        rows = json.loads(table.to_json(orient="records"))
        print(json.dumps(rows, indent=2, sort_keys=True))
    else:
        print(format_table(table))
    return 0


def _add_generate(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "generate", help="generate word problems with their logic programs")
    p.add_argument("--problems", type=positive, default=10, help="number of problems")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    p.add_argument(
        "--irrelevant",
        choices=IRRELEVANT,
        default="none",
        help="irrelevant axioms: none, one axiom, one tree, several trees",
    )
    p.add_argument(
        "--overlap",
        choices=OVERLAPS,
        default="none",
        help="lexical overlap of the irrelevant axioms with the goal",
    )
    p.add_argument(
        "--control", action="store_true", help="control problems: as many axioms, all relevant"
    )
    p.add_argument(
        "--paired",
        action="store_true",
        help="each problem in all four overlap conditions, same distractors, renamed only",
    )
    p.add_argument("--depth", type=positive, default=3, help="depth of the goal's proof")
    p.add_argument("--trees", type=positive, default=3, help="trees for --irrelevant trees")
    p.add_argument("--first-id", type=natural, default=0, help="id of the first problem")
    p.add_argument("-o", "--output", required=True, help="PROBLEMS.jsonl to write")
    p.set_defaults(func=_generate)


def _add_solve(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "solve", help="run a simulated reasoner on each problem")
    p.add_argument("problems", help="PROBLEMS.jsonl from 'gsm generate' (or text, with --text)")
    p.add_argument(
        "--text",
        action="store_true",
        help='read {"id", "text"} lines: solve each problem from its text alone',
    )
    p.add_argument(
        "--strategy",
        choices=(*STRATEGIES, "all"),
        default="shortest",
        help="search strategy (all: every strategy)",
    )
    p.add_argument("-o", "--output", required=True, help="PROOFS.jsonl to write")
    p.set_defaults(func=_solve_or_text)


def _solve_or_text(args: argparse.Namespace) -> int:
    return _solve_text(args) if args.text else _solve(args)


def _add_score_proofs(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "score-proofs", help="score proofs a model wrote in natural language")
    p.add_argument("proofs", help='PROOFS.jsonl: {"id", "text", "proof"} lines')
    p.add_argument("-o", "--output", required=True, help="SCORED.jsonl to write")
    p.add_argument("--export", help="also write DAG-MATH trajectories under this folder")
    p.add_argument("--dataset", default="gsm-model-proofs", help="data-set name for --export")
    p.set_defaults(func=_score_proofs)


def _add_export(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "export", help="write proofs as DAG-MATH trajectories")
    p.add_argument("proofs", help="PROOFS.jsonl from 'gsm solve'")
    p.add_argument("-o", "--output", required=True, help="output folder")
    p.add_argument("--dataset", default=DATASET, help="data-set name")
    p.set_defaults(func=_export)


def _add_report(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "report", help="accuracy and efficiency by strategy, structure, overlap")
    p.add_argument("proofs", nargs="+", help="PROOFS.jsonl files")
    p.add_argument(
        "--format", choices=("table", "json"), default="table", help="table, or JSON records"
    )
    p.set_defaults(func=_report)


def add_gsm_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add the ``gsm`` command and its sub-commands to a ``dagmath`` parser.

    Each sub-command sets ``func`` (``args -> exit code``) via ``set_defaults``.
    """
    gsm = subparsers.add_parser(
        "gsm",
        help="logic-program word problems: generate, solve, export, report",
        description="Logic-program word problems: generate, solve, export, report.",
    )
    sub = gsm.add_subparsers(
        dest="gsm_command", metavar="{generate,solve,score-proofs,export,report}"
    )
    sub.required = True
    for add in (_add_generate, _add_solve, _add_score_proofs, _add_export, _add_report):
        add(sub)
    return gsm


#: What :mod:`dagmath_viz.cli` calls, as on every command module.
register = add_gsm_parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dagmath gsm ARGV`` (``main(["generate", "--problems", "2", ...])``); returns the
    exit code, with ``dagmath``'s error handling."""
    from dagmath_viz.cli import main as dagmath_main  # on call: the CLI imports this module

    return dagmath_main(["gsm", *(argv if argv is not None else sys.argv[1:])])


if __name__ == "__main__":
    raise SystemExit(main())
