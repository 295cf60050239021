"""``dagmath generate``: sample DAG-MATH trajectories from a model, resumably.

Layout written under ``OUT_DIR``::

    <model>/<dataset>/problem_<id>_all_samples.json   the samples, the authors' shape
    <model>/<dataset>/answers.jsonl                    references and difficulties
    failures.csv                                       samples that still failed, and why
    .dagmath/journal-<model>-<dataset>.ndjson          every finished sample, at once
    .dagmath/runs/<time>-generate.json                 the run manifest

A problem's file is (re)written whole each time one of its samples finishes, so it holds
exactly the journalled samples, sorted, each once. A rerun sends requests only for
samples missing from the journal and rewrites no file whose bytes would not change.
Memory holds the journal's keys, and the samples of problems still unfinished only: a
finished problem's samples live in its file.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from dagmath_viz import __version__, jsonio
from dagmath_viz.formats import answer_keys, official
from dagmath_viz.formats.replies import check_solution
from dagmath_viz.generation.client import (
    Breaker,
    ChatClient,
    public_url,
    run_to_completion,
)
from dagmath_viz.generation.problems import Problem, safe_name
from dagmath_viz.generation.progress import RunSettings, RunTotals, run_units
from dagmath_viz.generation.prompts import SOLUTION_SCHEMA, prompt_hash, user_prompt
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
from dagmath_viz.schema import InputError
from dagmath_viz.text import printable

__all__ = ["GenerateConfig", "RunSummary", "check_solution", "run_generate"]


@dataclass(frozen=True, kw_only=True)
class GenerateConfig(RunSettings):
    """A generate run: the server settings and the prompt, samples per problem."""

    dataset: str
    system_prompt: str
    system_prompt_source: str = "default"
    samples: int = 1


@dataclass
class RunSummary(RunTotals):
    """What a ``generate`` run did, for the closing line and the manifest."""

    DONE = "samples done"

    structured_output: bool = True


def _sample_record(
    problem: Problem, sample_id: int, model: str, steps: list, reasoning: str
) -> dict[str, Any]:
    """One sample in the DAG-MATH authors' shape (``problem_<id>_all_samples.json`` item)."""
    last = steps[-1] if steps else None
    final = last.get("text") if isinstance(last, dict) else None
    return {
        "problem_id": problem.problem_id,
        "sample_id": sample_id,
        "problem_text": problem.text,
        "steps": steps,
        "final_answer": final if isinstance(final, str) and final.strip() else None,
        "metadata": {"reasoning_content": reasoning, "model": model},
    }


def _dump(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, indent=2).encode() + b"\n"


class _Run:
    def __init__(self, problems: list[Problem], config: GenerateConfig, stream: TextIO) -> None:
        self.problems = problems
        self.config = config
        self.stream = stream
        self.folder = config.out_dir / safe_name(config.model) / safe_name(config.dataset)
        state = config.out_dir / STATE_DIR
        self.summary = RunSummary(total=len(problems) * config.samples)
        self.notices: set[str] = set()
        self.stopped = False
        # sample ids journalled, by problem id; the samples themselves are held only for
        # problems still being worked on (see _load_unfinished), never the whole journal
        self.done: dict[str, set[int]] = {}
        self.by_problem: dict[str, dict[int, dict[str, Any]]] = {}
        self.journal = Journal(
            state / f"journal-{safe_name(config.model)}-{safe_name(config.dataset)}.ndjson",
            ("problem_id", "sample_id"),
            keep_records=False,
            on_record=self._note_done,
        )

    def _note_done(self, record: dict[str, Any]) -> None:
        sample = record.get("sample")
        if not isinstance(sample, dict) or not isinstance(record.get("sample_id"), int):
            return
        other = (sample.get("metadata") or {}).get("model")
        if other is not None and other != self.config.model:
            # two names that make the same folder name (org/m and org_m): never mix
            raise InputError(
                f"{self.folder} already holds samples of the model {other!r}, whose folder "
                f"name is the same as {self.config.model!r}'s; use another output folder"
            )
        self.done.setdefault(str(record.get("problem_id")), set()).add(record["sample_id"])

    def _wanted(self, problem: Problem) -> list[int]:
        """Journalled sample ids of ``problem`` that this run asks for, sorted."""
        return sorted(k for k in self.done.get(problem.key, ()) if k <= self.config.samples)

    def _file_matches(self, problem: Problem, ids: list[int]) -> bool:
        try:  # a missing, unreadable or half-written file does not match: it is rewritten
            samples = jsonio.read_json(self._target(problem))
            return [s.get("sample_id") for s in samples] == ids
        except (InputError, TypeError, AttributeError):
            return False

    def _load_unfinished(self) -> None:
        """Bring every problem file in line with the journal, holding in memory only the
        samples of problems that are unfinished (or whose file a kill left behind)."""
        needed: set[str] = set()
        for problem in self.problems:
            ids = self._wanted(problem)
            if ids and (len(ids) < self.config.samples or not self._file_matches(problem, ids)):
                needed.add(problem.key)
        if not needed:
            return
        for record in self.journal.scan():
            pid = str(record.get("problem_id"))
            if pid in needed and isinstance(record.get("sample"), dict):
                self.by_problem.setdefault(pid, {})[record["sample_id"]] = record["sample"]
        for problem in self.problems:
            if problem.key in needed:
                self.write_problem(problem)

    def _target(self, problem: Problem) -> Path:
        return self.folder / official.file_name(problem.file_key)

    def notice(self, message: str) -> None:
        if message not in self.notices:
            self.notices.add(message)
            self.say(f"note: {message}")

    def say(self, message: str) -> None:
        lead = "\n" if self.stream.isatty() else ""  # below the progress bar's line
        self.stream.write(f"{lead}dagmath: {printable(message, one_line=True)}\n")
        self.stream.flush()

    def write_problem(self, problem: Problem) -> None:
        found = self.by_problem.get(problem.key, {})
        # only the samples this run asks for: a rerun with fewer --samples keeps the
        # journal but writes just those
        samples = [found[k] for k in sorted(found) if k <= self.config.samples]
        if samples:
            write_if_changed(self._target(problem), _dump(samples))
        if len(samples) >= self.config.samples:
            self.by_problem.pop(problem.key, None)  # finished: its file holds them now

    def write_answers(self) -> None:
        rows = [
            {
                "problem_id": p.problem_id,
                # the folder's name: what `dagmath score` calls the data set
                "dataset": self.folder.name,
                "answer": p.answer,
                "difficulty": p.difficulty,
            }
            for p in self.problems
            if p.answer is not None or p.difficulty is not None
        ]
        if rows:
            data = b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in rows)
            write_if_changed(self.folder / answer_keys.WRITTEN_NAME, data)

    async def run(self) -> RunSummary:
        cfg = self.config
        started = time.monotonic()
        remove_stale_temps(self.folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.write_answers()
        pending: list[tuple[Problem, int]] = []
        # a kill between journal and file leaves a file behind: bring it up to date
        self._load_unfinished()
        for problem in self.problems:
            done = self.done.get(problem.key, set())
            missing = [k for k in range(1, cfg.samples + 1) if k not in done]
            self.summary.already_done += cfg.samples - len(missing)
            pending.extend((problem, k) for k in missing)
        progress = Progress(
            "generate",
            self.summary.total,
            unit="samples",
            already=self.summary.already_done,
            stream=self.stream,
            interval=cfg.progress_interval,
        )
        client = ChatClient(
            base_url=cfg.base_url,
            model=cfg.model,
            api_key=cfg.api_key,
            policy=cfg.policy,
            structured=cfg.structured,
            sampling=cfg.sampling,
            notice=self.notice,
            breaker=Breaker(cfg.stop_after),
        )
        if pending and cfg.preflight:
            try:
                note = await client.preflight()
            except BaseException:
                await client.close()
                self.journal.close()
                raise
            if note:
                self.notice(note)

        async def call(unit: tuple[Problem, int]) -> Any:
            messages = [
                {"role": "system", "content": cfg.system_prompt},
                {"role": "user", "content": user_prompt(unit[0].text)},
            ]
            return await client.json_call(
                messages, "DAGSolution", SOLUTION_SCHEMA, check_solution, "steps"
            )

        def finish(unit: tuple[Problem, int], reply: Any) -> None:
            problem, sample_id = unit
            record = _sample_record(
                problem, sample_id, cfg.model, reply.value["steps"], reply.reasoning
            )
            entry = {"problem_id": problem.key, "sample_id": sample_id, "sample": record}
            self.journal.append(entry)
            self.done.setdefault(problem.key, set()).add(sample_id)
            self.by_problem.setdefault(problem.key, {})[sample_id] = record
            self.summary.written += 1
            self.write_problem(problem)

        def failure(unit: tuple[Problem, int], exc: Exception) -> dict[str, Any]:
            reason = exc.reason  # type: ignore[attr-defined]
            if cfg.verbose:
                self.say(f"problem {unit[0].key} sample {unit[1]} failed: {reason}")
            return {
                "problem_id": unit[0].key,
                "sample_id": unit[1],
                "attempts": exc.attempts,  # type: ignore[attr-defined]
                "reason": reason,
            }

        try:
            await run_units(
                self, pending, call, finish, failure,
                concurrency=cfg.concurrency, progress=progress,
            )  # fmt: skip
        finally:
            await client.close()
            self.journal.close()
            self.summary.add_usage(client)
            self.summary.structured_output = client.structured
            self.summary.wall_seconds = time.monotonic() - started
        self.write_failures()
        self.write_manifest()
        return self.summary

    def write_failures(self) -> None:
        columns = ["model", "dataset", "problem_id", "sample_id", "attempts", "reason"]
        write_failures(
            self.config.out_dir,
            self.summary.failures,
            columns,
            model=self.config.model,
            dataset=self.config.dataset,
        )

    def write_manifest(self) -> None:
        cfg = self.config
        now = datetime.now(UTC)
        manifest = {
            "command": "generate",
            "dagmath_viz_version": __version__,
            "finished_at": now.isoformat(timespec="seconds"),
            "model": cfg.model,
            "base_url": public_url(cfg.base_url),
            "dataset": cfg.dataset,
            "parameters": {
                "samples": cfg.samples,
                "concurrency": cfg.concurrency,
                "temperature": cfg.sampling.temperature,
                "max_tokens": cfg.sampling.max_tokens,
                "top_p": cfg.sampling.top_p,
                "seed": cfg.sampling.seed,
                "stop": list(cfg.sampling.stop),
                "extra_body": cfg.sampling.extra_body,
                "structured_output_requested": cfg.structured,
                "transport_retries": cfg.policy.transport_retries,
                "content_attempts": cfg.policy.content_attempts,
                "timeout_seconds": cfg.policy.timeout,
            },
            "system_prompt": cfg.system_prompt_source,
            "prompt_hash": prompt_hash(cfg.system_prompt, SOLUTION_SCHEMA),
            "structured_output_used": self.summary.structured_output,
            "problems": len(self.problems),
            "samples_total": self.summary.total,
            "samples_from_earlier_runs": self.summary.already_done,
            "samples_written": self.summary.written,
            "failures": len(self.summary.failures),
            "requests": self.summary.requests,
            "prompt_tokens": self.summary.prompt_tokens,
            "completion_tokens": self.summary.completion_tokens,
            "wall_seconds": round(self.summary.wall_seconds, 3),
        }
        stamp = now.strftime("%Y%m%dT%H%M%S%fZ")
        path = cfg.out_dir / STATE_DIR / "runs" / f"{stamp}-generate.json"
        write_atomic(path, _dump(manifest))


def run_generate(problems: list[Problem], config: GenerateConfig, stream: TextIO) -> RunSummary:
    """Generate ``config.samples`` samples per problem (see the module doc for the layout).

    Raises:
        FatalAPIError: the server cannot be reached, or refused the credentials, model or
            endpoint.
        InputError: another run holds the output folder.
    """
    with FolderLock(config.out_dir):
        return run_to_completion(lambda: _Run(problems, config, stream).run())
