"""``dagmath labels``: add, count and compare labels on steps (JSONL label files).

``add``/``remove`` append one line to a label file (created with its header if missing;
never rewritten). ``count`` tallies labels over one or more files, grouped by label and
``--by`` (model, dataset, ... or, with ``--data``, any scored column such as class).
``agree`` compares two people's files: percent agreement and Cohen's kappa over the items
both labelled (each item's category is its set of labels). A malformed or foreign line is
named (file and line) on stderr and skipped; the command then exits 4.
"""

from __future__ import annotations

import argparse
import sys

from dagmath_viz.cli.common import (
    EXIT_OK,
    EXIT_PARTIAL,
    UsageError,
    add_command,
    printable,
    say,
)

__all__ = ["register", "run_add", "run_agree", "run_count"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``labels`` (with ``add``, ``remove``, ``count``, ``agree``) to the parser."""
    top = add_command(
        subparsers, "labels", help="add, count and compare labels on steps", description=__doc__
    )
    sub = top.add_subparsers(dest="labels_command", required=True, metavar="ACTION")
    for name, removing in (("add", False), ("remove", True)):
        p = add_command(sub, name, help=f"{name} one label (appends a line to FILE)")
        p.add_argument("file", metavar="FILE", help="the label file (JSONL)")
        for key in ("model", "dataset", "problem", "sample"):
            p.add_argument(f"--{key}", required=True, metavar=key.upper())
        p.add_argument("--step", metavar="ID", help="the step (leave out: the whole trajectory)")
        p.add_argument("--label", required=True, metavar="NAME", help="a label of your set")
        if not removing:
            p.add_argument("--note", default="", metavar="TEXT", help="an optional note")
        p.set_defaults(func=run_add, removing=removing)
    count = add_command(sub, "count", help="how often each label is used")
    count.add_argument("files", nargs="+", metavar="FILE", help="label files (JSONL)")
    count.add_argument("--by", default="", help="grouping columns besides the label")
    count.add_argument("--data", nargs="*", metavar="PATH", help="scored data to group by")
    count.add_argument(
        "--format", choices=("table", "csv", "json"), default="table", help="output format"
    )
    count.set_defaults(func=run_count)
    agree = add_command(sub, "agree", help="agreement of two label files")
    agree.add_argument("a", metavar="A", help="one person's label file")
    agree.add_argument("b", metavar="B", help="another's")
    agree.set_defaults(func=run_agree)


def _read(path: str):
    from dagmath_viz.store.labels import read_labels

    found = read_labels(path)
    for issue in found.issues:
        say(f"dagmath: {issue.severity}: {issue}")
    return found


def _lost(files) -> bool:
    return any(i.severity == "error" for f in files for i in f.issues)


def run_add(args: argparse.Namespace) -> int:
    """``labels add`` and ``labels remove``."""
    from dagmath_viz.schema import InputError
    from dagmath_viz.store.labels import add_label, make_label, remove_label

    try:
        sample = int(args.sample)
    except ValueError:
        raise UsageError(f"--sample must be an integer, got {args.sample!r}") from None
    step = None if args.step is None else int(args.step) if args.step.isdigit() else args.step
    try:
        label = make_label(
            args.model, args.dataset, args.problem, sample, args.label,
            step_id=step, note=getattr(args, "note", ""),
        )  # fmt: skip
    except InputError as exc:
        raise UsageError(str(exc)) from None
    (remove_label if args.removing else add_label)(args.file, label)
    say(f"{'removed' if args.removing else 'added'} {label.label!r} in {args.file}", level=1)
    return EXIT_OK


def run_count(args: argparse.Namespace) -> int:
    """``labels count``."""
    from dagmath_viz.schema import InputError
    from dagmath_viz.store.labels import label_counts

    files = [_read(p) for p in args.files]
    by = [c.strip() for c in args.by.split(",") if c.strip()]
    scored = None
    if args.data:
        from dagmath_viz.run.corpus import load_corpus

        scored = load_corpus(args.data).scored
    try:
        table = label_counts(files, by=by, scored=scored)
    except InputError as exc:
        raise UsageError(f"{exc} (label keys: model, dataset, problem_id, sample_id; "
                         "give --data for scored columns)") from None  # fmt: skip
    if args.format == "csv":
        sys.stdout.write(printable(table.to_csv(index=False)))
    elif args.format == "json":
        sys.stdout.write(printable(table.to_json(orient="records", indent=2)) + "\n")
    elif table.empty:
        print("no labels")
    else:
        print(printable(table.to_string(index=False)))
    return EXIT_PARTIAL if _lost(files) else EXIT_OK


def run_agree(args: argparse.Namespace) -> int:
    """``labels agree``."""
    from dagmath_viz.store.labels import agreement

    a, b = _read(args.a), _read(args.b)
    result = agreement(a, b)
    pct = "–" if result.percent is None else f"{100 * result.percent:.1f}%"
    kappa = "–" if result.kappa is None else f"{result.kappa:.3f}"
    print(f"items labelled in both: {result.both:,} (only in A: {result.only_a:,}, "
          f"only in B: {result.only_b:,})")  # fmt: skip
    print(f"same labels: {result.agreed:,} of {result.both:,} = {pct}")
    print(f"Cohen's kappa (label sets as categories): {kappa}")
    return EXIT_PARTIAL if _lost([a, b]) else EXIT_OK
