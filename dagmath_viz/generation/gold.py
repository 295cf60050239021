"""``dagmath gold``: the three-stage gold DAG construction (DAG-MATH paper §4, Appendix D).

For each problem, with its reference solution and answer:

1. **Nodes.** The model rewrites the reference solution as a list of assertions, one
   primitive step each, ending in ``The final answer is $\\boxed{...}$``. Rejected (and
   resampled) when the boxed answer is not the reference (math-verify), or when an
   arithmetic claim is false (SymPy, where it parses).
2. **Parents.** For each node, the minimal set of earlier nodes it follows from.
   Rejected when a parent is not an earlier node, a node lacks a list, or the final node
   depends on nothing. Nodes that do not lead to the final node are pruned, so the DAG is
   closed relative to its sink.
3. **Edges.** For each node, a justification from its parents that adds no new facts
   (``--edge-model`` may be another model). Rejected when one is missing or brings a
   number found in neither the node nor its parents.

Each stage result is journalled as it is accepted, so a rerun resumes at the stage where
a problem stopped. Output: ``OUT_DIR/<dataset>/problem_<id>.json`` in the published gold
layout, ``OUT_DIR/failures.csv`` for problems given up, and a manifest listing every
stage's attempts and each rejection's reason.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TextIO

from dagmath_viz import __version__
from dagmath_viz.generation.client import (
    Breaker,
    CallFailed,
    ChatClient,
    public_url,
    run_to_completion,
)
from dagmath_viz.generation.gold_checks import (
    ArithmeticChecker,
    Graph,
    check_edges,
    check_nodes_shape,
    check_parents,
)
from dagmath_viz.generation.problems import Problem, safe_name
from dagmath_viz.generation.progress import RunSettings, RunTotals, run_units
from dagmath_viz.generation.prompts import (
    EDGES_PROMPT,
    EDGES_SCHEMA,
    NODES_PROMPT,
    NODES_SCHEMA,
    PARENTS_PROMPT,
    PARENTS_SCHEMA,
)
from dagmath_viz.generation.store import (
    STATE_DIR,
    FolderLock,
    Journal,
    remove_stale_temps,
    write_atomic,
    write_failures,
    write_if_changed,
)
from dagmath_viz.progress import Progress
from dagmath_viz.text import printable

__all__ = ["GoldConfig", "GoldSummary", "run_gold"]

STAGES = ("nodes", "parents", "edges")


@dataclass(frozen=True, kw_only=True)
class GoldConfig(RunSettings):
    """A gold run: the server settings, the edge model and the stages' limits."""

    dataset: str
    edge_model: str | None = None
    stage_attempts: int = 4
    #: seconds the SymPy check of one node list may take
    arithmetic_deadline: float = 5.0


@dataclass
class GoldSummary(RunTotals):
    """What a ``gold`` run did, for the closing line and the manifest."""

    DONE = "problems have a gold DAG"


class _StageRejected(Exception):
    def __init__(self, stage: str, reason: str, attempts: int) -> None:
        super().__init__(reason)
        self.stage, self.reason, self.attempts = stage, reason, attempts


def _numbered(nodes: list[str] | tuple[str, ...]) -> str:
    return "\n".join(f"{i}. {text}" for i, text in enumerate(nodes, start=1))


def gold_record(problem: Problem, graph: Graph, edges: list[str]) -> list[dict[str, Any]]:
    """The published gold layout: a list holding one object, steps as node/edge."""
    record: dict[str, Any] = {
        "problem_id": problem.problem_id,
        "problem_text": problem.text,
        "sample_id": 0,
        "final_answer": problem.answer,
    }
    if problem.difficulty is not None:
        record["difficulty"] = problem.difficulty
    record["steps"] = [
        {
            "step_id": i,
            "edge": edges[i - 1],
            "direct_dependent_steps": list(graph.parents[i - 1]) if graph.parents[i - 1] else None,
            "node": graph.nodes[i - 1],
        }
        for i in range(1, len(graph.nodes) + 1)
    ]
    return [record]


class _GoldRun:
    def __init__(self, problems: list[Problem], config: GoldConfig, stream: TextIO) -> None:
        from dagmath_viz.answers.check import AnswerChecker

        self.problems = problems
        self.config = config
        self.stream = stream
        self.folder = config.out_dir / safe_name(config.dataset)
        self.journal = Journal(
            config.out_dir / STATE_DIR / f"gold-journal-{safe_name(config.dataset)}.ndjson",
            ("problem_id", "stage"),
        )
        self.summary = GoldSummary(total=len(problems))
        self.checker = AnswerChecker()
        self.arithmetic = ArithmeticChecker(config.arithmetic_deadline)
        self.attempts: dict[str, dict[str, dict[str, Any]]] = {}
        self.notices: set[str] = set()
        self.stopped = False
        for record in self.journal.records():
            stage = record.get("stage")
            if stage in STAGES:
                self._log(str(record.get("problem_id")), stage, record.get("log", {}))

    def _log(self, pid: str, stage: str, log: dict[str, Any]) -> None:
        self.attempts.setdefault(pid, {})[stage] = log

    def notice(self, message: str) -> None:
        if message not in self.notices:
            self.notices.add(message)
            self.say(f"note: {message}")

    def say(self, message: str) -> None:
        lead = "\n" if self.stream.isatty() else ""  # below the progress bar's line
        self.stream.write(f"{lead}dagmath: {printable(message, one_line=True)}\n")
        self.stream.flush()

    def stage_result(self, problem: Problem, stage: str) -> Any:
        record = self.journal.entries.get((problem.key, stage))
        return record.get("result") if record else None

    # ----------------------------------------------------------------- stages

    async def _sample(
        self,
        client: ChatClient,
        problem: Problem,
        stage: str,
        messages: list[dict[str, str]],
        schema: dict,
        validate,
    ) -> Any:
        """Ask until ``validate(value) -> (result, reason)`` accepts, journal the result."""
        rejections: list[str] = []
        key = {"nodes": "nodes", "parents": "parents", "edges": "edges"}[stage]
        for attempt in range(1, self.config.stage_attempts + 1):
            reply = await client.json_call(messages, f"Gold{stage.title()}", schema, _has(key), key)
            result, reason = await validate(reply.value)
            if reason is None:
                log = {"attempts": attempt, "rejections": rejections}
                self.journal.append(
                    {"problem_id": problem.key, "stage": stage, "result": result, "log": log}
                )
                self._log(problem.key, stage, log)
                return result
            rejections.append(reason)
        self._log(problem.key, stage, {"attempts": len(rejections), "rejections": rejections})
        raise _StageRejected(stage, rejections[-1], len(rejections))

    async def nodes(self, client: ChatClient, problem: Problem) -> list[str]:
        from dagmath_viz.answers.check import extract_boxed

        user = (
            f"Problem: {problem.text.strip()}\n\nReference solution: {problem.solution}\n\n"
            f"Reference answer: {problem.answer}"
        )

        async def validate(value: Any) -> tuple[Any, str | None]:
            fault = check_nodes_shape(value)
            if fault:
                return None, fault
            nodes = [n.strip() for n in value["nodes"]]
            predicted = extract_boxed(nodes[-1])
            if predicted is None:
                return None, "the last node has no \\boxed{} answer"
            verdict = await asyncio.to_thread(self.checker.check, problem.answer, predicted)
            if not verdict.equivalent:
                return None, f"the final answer {predicted!r} is not the reference"
            # SymPy: milliseconds a node, for ever on a hostile one: a worker, a deadline
            fault = await self.arithmetic.fault(nodes)
            return (None, fault) if fault else (nodes, None)

        messages = [
            {"role": "system", "content": NODES_PROMPT},
            {"role": "user", "content": user},
        ]
        return await self._sample(client, problem, "nodes", messages, NODES_SCHEMA, validate)

    async def parents(self, client: ChatClient, problem: Problem, nodes: list[str]) -> Graph:
        async def validate(value: Any) -> tuple[Any, str | None]:
            graph, reason = check_parents(nodes, value)
            if graph is None:
                return None, reason
            return {
                "nodes": list(graph.nodes),
                "parents": [list(p) if p else None for p in graph.parents],
                "pruned": list(graph.pruned),
            }, None

        user = f"Problem: {problem.text.strip()}\n\nAssertions:\n{_numbered(nodes)}"
        messages = [
            {"role": "system", "content": PARENTS_PROMPT},
            {"role": "user", "content": user},
        ]
        result = await self._sample(client, problem, "parents", messages, PARENTS_SCHEMA, validate)
        return _graph(result)

    async def edges(self, client: ChatClient, problem: Problem, graph: Graph) -> list[str]:
        async def validate(value: Any) -> tuple[Any, str | None]:
            return check_edges(problem.text, graph, value)

        lines = [
            f"{i}. {node} (parents: {', '.join(map(str, p)) if p else 'none, from the problem'})"
            for i, (node, p) in enumerate(zip(graph.nodes, graph.parents, strict=True), start=1)
        ]
        user = f"Problem: {problem.text.strip()}\n\nGraph:\n" + "\n".join(lines)
        messages = [
            {"role": "system", "content": EDGES_PROMPT},
            {"role": "user", "content": user},
        ]
        return await self._sample(client, problem, "edges", messages, EDGES_SCHEMA, validate)

    # ----------------------------------------------------------------- the run

    def write_problem(self, problem: Problem) -> bool:
        parents = self.stage_result(problem, "parents")
        edges = self.stage_result(problem, "edges")
        if parents is None or edges is None:
            return False
        data = gold_record(problem, _graph(parents), edges)
        target = self.folder / f"problem_{problem.file_key}.json"
        write_if_changed(target, json.dumps(data, ensure_ascii=False, indent=2).encode() + b"\n")
        return True

    async def run(self) -> GoldSummary:
        cfg = self.config
        started = time.monotonic()
        remove_stale_temps(self.folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        pending = []
        for problem in self.problems:
            if self.write_problem(problem):
                self.summary.already_done += 1
            else:
                pending.append(problem)
        progress = Progress(
            "gold", len(self.problems), unit="problems", already=self.summary.already_done,
            stream=self.stream, interval=cfg.progress_interval,
        )  # fmt: skip

        breaker = Breaker(cfg.stop_after)  # one count for the run: both clients share it

        def client(model: str) -> ChatClient:
            return ChatClient(
                base_url=cfg.base_url, model=model, api_key=cfg.api_key, policy=cfg.policy,
                structured=cfg.structured, sampling=cfg.sampling, notice=self.notice,
                breaker=breaker,
            )  # fmt: skip

        main_client = client(cfg.model)
        edge_client = client(cfg.edge_model or cfg.model)
        if pending and cfg.preflight:
            try:
                checked = [main_client]
                if edge_client.model != main_client.model:
                    checked.append(edge_client)
                for c in checked:
                    note = await c.preflight()
                    if note:
                        self.notice(note)
            except BaseException:
                for c in (main_client, edge_client):
                    await c.close()
                self.journal.close()
                self.checker.close()
                await self.arithmetic.close()
                raise

        async def call(problem: Problem) -> None:
            nodes = self.stage_result(problem, "nodes")
            if nodes is None:
                nodes = await self.nodes(main_client, problem)
            parents = self.stage_result(problem, "parents")
            graph = (
                _graph(parents)
                if parents is not None
                else await self.parents(main_client, problem, nodes)
            )
            if self.stage_result(problem, "edges") is None:
                await self.edges(edge_client, problem, graph)

        def finish(problem: Problem, _: None) -> None:
            self.write_problem(problem)
            self.summary.written += 1

        def failure(problem: Problem, exc: Exception) -> dict[str, Any]:
            stage = getattr(exc, "stage", None) or _current_stage(self, problem)
            reason = exc.reason  # type: ignore[attr-defined]
            if cfg.verbose:
                self.say(f"problem {problem.key} failed at stage {stage}: {reason}")
            return {
                "problem_id": problem.key,
                "stage": stage,
                "attempts": exc.attempts,  # type: ignore[attr-defined]
                "reason": reason,
            }

        try:
            await run_units(
                self, pending, call, finish, failure, concurrency=cfg.concurrency,
                progress=progress, failed=(CallFailed, _StageRejected),
            )  # fmt: skip
        finally:
            for c in (main_client, edge_client):
                await c.close()
                self.summary.add_usage(c)
            self.journal.close()
            self.checker.close()
            await self.arithmetic.close()
            self.summary.wall_seconds = time.monotonic() - started
        self.write_failures()
        self.write_manifest()
        return self.summary

    def write_failures(self) -> None:
        columns = ["dataset", "problem_id", "stage", "attempts", "reason"]
        write_failures(
            self.config.out_dir, self.summary.failures, columns, dataset=self.config.dataset
        )

    def write_manifest(self) -> None:
        cfg = self.config
        now = datetime.now(UTC)
        manifest = {
            "command": "gold",
            "dagmath_viz_version": __version__,
            "finished_at": now.isoformat(timespec="seconds"),
            "model": cfg.model,
            "edge_model": cfg.edge_model or cfg.model,
            "base_url": public_url(cfg.base_url),
            "dataset": cfg.dataset,
            "parameters": {
                "concurrency": cfg.concurrency,
                "temperature": cfg.sampling.temperature,
                "max_tokens": cfg.sampling.max_tokens,
                "top_p": cfg.sampling.top_p,
                "seed": cfg.sampling.seed,
                "stop": list(cfg.sampling.stop),
                "extra_body": cfg.sampling.extra_body,
                "stage_attempts": cfg.stage_attempts,
                "structured_output_requested": cfg.structured,
            },
            "problems": len(self.problems),
            "problems_from_earlier_runs": self.summary.already_done,
            "problems_written": self.summary.written,
            "failures": len(self.summary.failures),
            "requests": self.summary.requests,
            "prompt_tokens": self.summary.prompt_tokens,
            "completion_tokens": self.summary.completion_tokens,
            "wall_seconds": round(self.summary.wall_seconds, 3),
            # every stage's attempts and each rejection's reason, by problem
            "stages": {p.key: self.attempts.get(p.key, {}) for p in self.problems},
        }
        stamp = now.strftime("%Y%m%dT%H%M%S%fZ")
        path = cfg.out_dir / STATE_DIR / "runs" / f"{stamp}-gold.json"
        write_atomic(path, json.dumps(manifest, ensure_ascii=False, indent=2).encode() + b"\n")


def _has(key: str):
    def check(value: Any) -> str | None:
        if not isinstance(value, dict) or key not in value:
            return f"the JSON has no {key!r}"
        return None

    return check


def _graph(result: dict[str, Any]) -> Graph:
    return Graph(
        nodes=tuple(result["nodes"]),
        parents=tuple(tuple(p) if p else None for p in result["parents"]),
        pruned=tuple(result.get("pruned", ())),
    )


def _current_stage(run: _GoldRun, problem: Problem) -> str:
    for stage in STAGES:
        if run.stage_result(problem, stage) is None:
            return stage
    return STAGES[-1]


def run_gold(problems: list[Problem], config: GoldConfig, stream: TextIO) -> GoldSummary:
    """Build a gold DAG for every problem (see the module doc).

    Raises:
        FatalAPIError: the server cannot be reached, or refused the credentials, model or
            endpoint.
        InputError: another run holds the output folder.
    """
    with FolderLock(config.out_dir):
        return run_to_completion(lambda: _GoldRun(problems, config, stream).run())
