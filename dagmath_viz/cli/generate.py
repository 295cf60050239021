"""The ``dagmath generate``, ``dagmath gold`` and ``dagmath depends`` subcommands.

``register(subparsers)`` adds them to the ``dagmath`` parser; their handlers return the
exit code (0, or :data:`EXIT_FAILURES` when some samples or problems failed) and raise
:class:`~dagmath_viz.schema.DagMathError` for anything the user must fix, which the
``dagmath`` entry point prints as one line.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from pathlib import Path
from typing import Any, TextIO, cast

from dagmath_viz.cli import common
from dagmath_viz.cli.common import EXIT_PARTIAL, add_command, positive, positive_float
from dagmath_viz.schema import DagMathError, InputError

__all__ = ["EXIT_FAILURES", "register"]

#: Exit status when the run finished but some samples (or gold problems) failed.
EXIT_FAILURES = EXIT_PARTIAL  # 4: results written, some failed (README exit codes)
#: Environment variable that scales every retry wait (tests set it small).
BACKOFF_ENV = "DAGMATH_RETRY_BASE_SECONDS"


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "problems",
        metavar="PROBLEMS",
        help="problems: .jsonl, .json, .csv, .ndjson, .jsonl.gz or .parquet (Hugging Face's "
        "to_json and to_parquet output too)",
    )
    _server_options(parser)
    parser.add_argument(
        "--map",
        type=_field_map,
        default=None,
        metavar="FIELD=COLUMN,...",
        help="read our fields from the file's columns, e.g. problem_id=unique_id,"
        "problem_text=problem,answer=answer for MATH-500, or problem_text=question,"
        "answer=answer for GSM8K (an answer's text after '####' is the answer; without a "
        "problem_id the id is the 0-based row index) (default: the file's own problem_id "
        "or id, problem or problem_text, answer, difficulty, solution)",
    )
    parser.add_argument(
        "--limit", type=positive, default=None, metavar="N",
        help="only the first N problems of the file (default: all)",
    )  # fmt: skip
    parser.add_argument(
        "--dataset", metavar="NAME", help="data-set name (default: the problems file's stem)"
    )
    _request_options(parser)


def _server_options(parser: argparse.ArgumentParser) -> None:
    """Where to send requests and where to write: every model-calling command's."""
    parser.add_argument(
        "--base-url",
        required=True,
        metavar="URL",
        help="the OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1",
    )
    parser.add_argument("--model", required=True, metavar="NAME", help="model name to request")
    parser.add_argument("-o", "--output", required=True, metavar="OUT_DIR", help="output folder")


def _request_options(parser: argparse.ArgumentParser) -> None:
    """Concurrency, sampling, retries, timeouts: every model-calling command's."""
    parser.add_argument(
        "--concurrency", type=positive, default=8, metavar="K", help="requests in flight"
    )
    sampling = parser.add_argument_group("sampling (each sent only when given)")
    sampling.add_argument(
        "--temperature", type=_non_negative, default=None, metavar="T",
        help="sampling temperature; 0 is greedy (default: the server's own)",
    )  # fmt: skip
    sampling.add_argument(
        "--top-p", type=_probability, default=None, metavar="P",
        help="nucleus sampling: draw from the likeliest tokens whose probabilities add up "
        "to P (default: the server's own, usually 1)",
    )  # fmt: skip
    sampling.add_argument(
        "--max-tokens", type=positive, default=None, metavar="M",
        help="longest reply, in tokens; a reply cut off there is asked for again "
        "(default: the server's own limit)",
    )  # fmt: skip
    sampling.add_argument(
        "--seed", type=int, default=None, metavar="N",
        help="sampling seed, for servers that honour it (vLLM, SGLang, OpenAI) "
        "(default: none sent)",
    )  # fmt: skip
    sampling.add_argument(
        "--stop", action="append", default=None, metavar="TEXT",
        help="end the reply where the model writes TEXT; repeat for several "
        "(default: none)",
    )  # fmt: skip
    sampling.add_argument(
        "--extra-body", type=_extra_body, default=None, metavar="JSON",
        help="a JSON object merged into every request as it is, e.g. "
        "'{\"chat_template_kwargs\": {\"enable_thinking\": false}}' for vLLM "
        "(default: none)",
    )  # fmt: skip
    parser.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="environment variable holding the API key (default: OPENAI_API_KEY; a local "
        "server needs none)",
    )
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=600.0,
        metavar="SECONDS",
        help="per request, from sending it to its last byte (default 600)",
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=6,
        metavar="N",
        help="resends after 429, 5xx, timeouts and dropped connections (default 6)",
    )
    parser.add_argument(
        "--attempts",
        type=positive,
        default=3,
        metavar="N",
        help="replies asked for when one has no usable JSON or is cut off (default 3)",
    )
    parser.add_argument(
        "--stop-after",
        type=positive,
        default=8,
        metavar="N",
        help="stop the run after N connection failures in a row, or N identical "
        "client-error (4xx) answers in a row (default 8)",
    )
    parser.add_argument(
        "--no-preflight",
        action="store_true",
        help="start without first checking the server and the model (GET /models, or "
        "one request of one token)",
    )
    parser.add_argument(
        "--no-structured",
        action="store_true",
        help="do not send response_format (plain JSON text is asked for instead)",
    )


#: Request fields --extra-body may not set: ours, or those of a dedicated option.
_RESERVED = {
    "model": "--model",
    "messages": "the prompt",
    "stream": "a whole reply per request",
    "n": "--samples",
    "response_format": "--no-structured",
    "temperature": "--temperature",
    "top_p": "--top-p",
    "max_tokens": "--max-tokens",
    "seed": "--seed",
    "stop": "--stop",
}


def _extra_body(text: str) -> dict:
    from dagmath_viz import jsonio

    try:
        value = jsonio.parse(text.encode())
    except InputError as exc:
        raise argparse.ArgumentTypeError(f"not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(
            f"expected a JSON object such as '{{\"top_k\": 20}}', found {type(value).__name__}"
        )
    for key in value:
        if key in _RESERVED:
            raise argparse.ArgumentTypeError(
                f"{key!r} is set by {_RESERVED[key]}, not through --extra-body"
            )
    return value


def _field_map(text: str) -> dict[str, str]:
    from dagmath_viz.generation.problems import parse_field_map

    try:
        return parse_field_map(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _non_negative(text: str) -> float:
    value = _number(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def _probability(text: str) -> float:
    value = _number(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be above 0 and at most 1, got {text}")
    return value


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def register(subparsers) -> None:
    """Add ``generate``, ``gold`` and ``depends`` to the ``dagmath`` subcommands."""
    gen = add_command(
        subparsers,
        "generate",
        help="sample DAG-MATH trajectories from a model behind an OpenAI-compatible API",
        description="Ask a model for DAG-MATH formatted solutions and write them where "
        "`dagmath score OUT_DIR` reads them. Rerunning the same command resumes.",
    )
    _common(gen)
    gen.add_argument("--samples", type=positive, default=1, metavar="N", help="per problem")
    gen.add_argument(
        "--system-prompt",
        metavar="FILE",
        help="use this system prompt instead of the built-in one (default: the built-in "
        "one, about 900 tokens)",
    )
    gen.set_defaults(func=cmd_generate)

    gold = add_command(
        subparsers,
        "gold",
        help="build gold DAGs from reference solutions (nodes, parents, edges)",
        description="The three-stage gold construction: nodes from the reference solution, "
        "then each node's parents, then each edge's justification. PROBLEMS need "
        "'solution' and 'answer'.",
    )
    _common(gold)
    gold.add_argument(
        "--edge-model", metavar="NAME", help="model for stage 3, the edges (default: --model)"
    )
    gold.add_argument(
        "--stage-attempts",
        type=positive,
        default=4,
        metavar="N",
        help="samples per stage before a problem is given up (default 4)",
    )
    gold.set_defaults(func=cmd_gold)
    _register_depends(subparsers)


def _register_depends(subparsers) -> None:
    dep = add_command(
        subparsers,
        "depends",
        help="make free-form chains of thought into DAG-MATH trajectories (a model labels "
        "each step's parents)",
        description="Split each chain of thought into steps as Thought Anchors does (or take "
        "its given chunks), ask a model which earlier steps each step uses, in batches, and "
        "write DAG-MATH trajectories to OUT_DIR/NAME.jsonl, where `dagmath score` and the "
        "app read them. Rerunning the same command resumes.",
    )
    dep.add_argument(
        "input",
        metavar="INPUT",
        help="records with a problem and a free-form solution each (.jsonl, .json, or any "
        "file of records dagmath score reads: .ndjson, .jsonl.gz, .parquet, an inspect_ai "
        ".eval/.json log, an lm-eval samples file), a Thought Anchors base_solution.json "
        "(problem.json beside it), or a folder of those",
    )
    _server_options(dep)
    dep.add_argument(
        "--map",
        type=_chain_map,
        default=None,
        metavar="FIELD=COLUMN,...",
        help="read our fields from the records' columns; fields: "
        "problem_id, problem_text, solution (the chain of thought), chunks, answer (the "
        "reference), predicted_answer (the model's own), model, sample_id, dataset, "
        "difficulty (default: problem_id or id; problem_text, problem or question; "
        "solution, text, cot or reasoning; the others by their own names)",
    )
    dep.add_argument(
        "--field",
        metavar="NAME",
        help="the records' field holding the chain of thought, the same as --map "
        "solution=NAME (default: solution, text, cot or reasoning)",
    )
    dep.add_argument(
        "--chunks-field",
        metavar="NAME",
        help="take each record's steps from this list of chunks (strings, or objects with "
        "'chunk' or 'text') instead of splitting its solution (default: split the solution)",
    )
    dep.add_argument(
        "--source-model",
        metavar="NAME",
        help="the model that wrote the chains, for records that do not say (default: the "
        "input file's stem; Thought Anchors: its model folder)",
    )
    dep.add_argument(
        "--dataset",
        metavar="NAME",
        help="data-set name for records that do not say (default: the input file's stem; "
        "Thought Anchors: thought-anchors)",
    )
    dep.add_argument(
        "--name",
        metavar="NAME",
        help="write OUT_DIR/NAME.jsonl (default: the first chain's data set)",
    )
    dep.add_argument(
        "--limit", type=positive, default=None, metavar="N",
        help="only the first N chains (default: all)",
    )  # fmt: skip
    dep.add_argument(
        "--batch-steps",
        type=positive,
        default=40,
        metavar="N",
        help="steps whose parents one request asks for; each request also shows every "
        "earlier step, shortened",
    )
    dep.add_argument(
        "--short-chars",
        type=positive,
        default=120,
        metavar="N",
        help="characters of each earlier step a request shows",
    )
    dep.add_argument(
        "--label-attempts",
        type=positive,
        default=3,
        metavar="N",
        help="replies asked for a batch whose parents are not earlier steps (each retry "
        "shows the model what was wrong) before the batch fails",
    )
    _request_options(dep)
    dep.set_defaults(func=cmd_depends)


def _chain_map(text: str) -> dict[str, str]:
    from dagmath_viz.generation.chains import CHAIN_FIELDS
    from dagmath_viz.generation.problems import parse_field_map

    try:
        return parse_field_map(text, CHAIN_FIELDS)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _api_key(args: argparse.Namespace) -> str | None:
    if args.api_key_env:
        value = os.environ.get(args.api_key_env)
        if not value:
            raise DagMathError(f"--api-key-env: the variable {args.api_key_env} is not set")
        return value
    return os.environ.get("OPENAI_API_KEY") or None


def _policy(args: argparse.Namespace):
    from dagmath_viz.generation.client import RetryPolicy

    base = 1.0
    if os.environ.get(BACKOFF_ENV):
        try:
            base = float(os.environ[BACKOFF_ENV])
        except ValueError:
            raise DagMathError(f"{BACKOFF_ENV} must be a number of seconds") from None
    return RetryPolicy(
        transport_retries=max(args.retries, 0),
        content_attempts=args.attempts,
        base_delay=base,
        max_delay=max(60.0 * base, base),
        timeout=args.timeout,
    )


def _file_stem(path: str) -> str:
    from dagmath_viz.generation.problems import file_stem

    return file_stem(path)


def _problems(args: argparse.Namespace) -> list:
    from dagmath_viz.generation.problems import read_problems

    problems = read_problems(args.problems, args.map)
    return problems[: args.limit] if args.limit else problems


def _sampling(args: argparse.Namespace):
    from dagmath_viz.generation.client import Sampling

    return Sampling(
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        top_p=args.top_p,
        seed=args.seed,
        stop=tuple(args.stop or ()),
        extra_body=args.extra_body,
    )


class _Discard(io.TextIOBase):
    """Where progress and notes go with --quiet."""

    def write(self, text: str) -> int:
        return len(text)


def _stream() -> TextIO:
    """stderr, or nothing with --quiet (errors still print: they are raised)."""
    return cast(TextIO, _Discard()) if common.VERBOSITY < 0 else sys.stderr


def _out_dir(args: argparse.Namespace) -> Path:
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a folder")
    return out


def cmd_generate(args: argparse.Namespace) -> int:
    from dagmath_viz.generation.generate import GenerateConfig, run_generate
    from dagmath_viz.generation.prompts import DEFAULT_SYSTEM_PROMPT
    from dagmath_viz.generation.store import FAILURES_FILE

    problems = _problems(args)  # every fault is found before any request
    if args.system_prompt:
        try:
            system_prompt = Path(args.system_prompt).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(
                f"{args.system_prompt}: cannot read the system prompt ({exc})"
            ) from None
        source = f"file {Path(args.system_prompt).name}"
    else:
        system_prompt, source = DEFAULT_SYSTEM_PROMPT, "default"
    config = GenerateConfig(
        **_server_settings(args),
        dataset=args.dataset or _file_stem(args.problems),
        system_prompt=system_prompt,
        system_prompt_source=source,
        samples=args.samples,
    )
    summary = run_generate(problems, config, _stream())
    common.say(f"dagmath: generate: {summary.line()}")
    if summary.failures:
        print(
            f"dagmath: error: {len(summary.failures)} samples failed; reasons in "
            f"{config.out_dir / FAILURES_FILE} (rerun the same command to retry them)",
            file=sys.stderr,
        )
        return EXIT_FAILURES
    return 0


def _server_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The options every command that talks to a model server shares, as the fields of
    :class:`dagmath_viz.generation.progress.RunSettings`."""
    return {
        "base_url": args.base_url,
        "model": args.model,
        "out_dir": _out_dir(args),
        "concurrency": args.concurrency,
        "sampling": _sampling(args),
        "api_key": _api_key(args),
        "structured": not args.no_structured,
        "policy": _policy(args),
        "preflight": not args.no_preflight,
        "stop_after": args.stop_after,
        "verbose": common.VERBOSITY > 0,
    }


def cmd_gold(args: argparse.Namespace) -> int:
    from dagmath_viz.generation.gold import GoldConfig, run_gold
    from dagmath_viz.generation.store import FAILURES_FILE

    problems = _problems(args)
    missing = [p.key for p in problems if not p.solution or not p.answer]
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise InputError(
            f"{args.problems}: gold construction needs 'solution' and 'answer' for every "
            f"problem; missing for {shown}"
        )
    config = GoldConfig(
        **_server_settings(args),
        edge_model=args.edge_model or args.model,
        dataset=args.dataset or _file_stem(args.problems),
        stage_attempts=args.stage_attempts,
    )
    summary = run_gold(problems, config, _stream())
    common.say(f"dagmath: gold: {summary.line()}")
    if summary.failures:
        print(
            f"dagmath: error: {len(summary.failures)} problems got no gold DAG; reasons in "
            f"{config.out_dir / FAILURES_FILE}",
            file=sys.stderr,
        )
        return EXIT_FAILURES
    return 0


def cmd_depends(args: argparse.Namespace) -> int:
    from dagmath_viz.generation.chains import read_chains
    from dagmath_viz.generation.depends import DependsConfig, run_depends
    from dagmath_viz.generation.store import FAILURES_FILE

    field_map = dict(args.map or {})
    for field, column in (("solution", args.field), ("chunks", args.chunks_field)):
        if column:
            if field in field_map and field_map[field] != column:
                raise common.UsageError(f"--map {field}= and the option naming it differ")
            field_map[field] = column
    chains = read_chains(
        args.input,
        field_map or None,
        model=args.source_model,
        dataset=args.dataset,
        use_chunks=bool(args.chunks_field),
    )  # every fault is found before any request
    chains = chains[: args.limit] if args.limit else chains
    config = DependsConfig(
        **_server_settings(args),
        name=args.name or chains[0].dataset,
        batch_steps=args.batch_steps,
        short_chars=args.short_chars,
        label_attempts=args.label_attempts,
    )
    summary = run_depends(chains, config, _stream())
    common.say(f"dagmath: depends: {summary.line()}")
    if summary.failures:
        print(
            f"dagmath: error: {summary.failed_chains} chains were not labelled; reasons in "
            f"{config.out_dir / FAILURES_FILE} (rerun the same command to retry them)",
            file=sys.stderr,
        )
        return EXIT_FAILURES
    return 0
