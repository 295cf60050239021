"""``dagmath depends``: free-form chains of thought made into DAG-MATH trajectories.

Each chain (read and split by :mod:`~dagmath_viz.generation.chains`) is labelled in
batches of ``batch_steps`` steps: one request per batch asks the model for the parents of
each of its steps, showing the problem, every earlier step shortened to ``short_chars``
characters and the batch's steps in full, so a chain of 300+ steps fits a context window
and its batches can be asked for at once. A reply is accepted when it gives, for exactly
the steps asked about, lists of integers that are earlier step ids; otherwise the model is
asked again, shown its reply and what was wrong with it, up to ``label_attempts`` times,
after which the batch (and so its chain) fails with that reason.

Layout written under ``OUT_DIR``::

    <name>.jsonl                               one DAG-MATH trajectory record per chain
    failures.csv                               batches that still failed, and why
    .dagmath/depends-journal-<name>.ndjson     every accepted batch, at once
    .dagmath/runs/<time>-depends.json          the run manifest

A batch's labels are journalled the moment they are accepted; a chain's record is
appended to ``<name>.jsonl`` when its last batch is. Every run starts and ends by
rewriting ``<name>.jsonl`` from the journal (chains in input order, each once), so a
rerun after a kill sends requests only for the batches missing and leaves no duplicate.
A journalled batch is reused only for the same chain text, steps, model and prompt.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TextIO

from dagmath_viz import __version__, jsonio
from dagmath_viz.generation.chains import Chain
from dagmath_viz.generation.client import (
    Breaker,
    CallFailed,
    ChatClient,
    public_url,
    run_to_completion,
)
from dagmath_viz.generation.problems import safe_name
from dagmath_viz.generation.progress import RunSettings, RunTotals, run_units
from dagmath_viz.generation.prompts import (
    DEPENDS_PROMPT,
    DEPENDS_PROMPT_NAME,
    DEPENDS_SCHEMA,
    depends_prompt_digest,
    depends_user_prompt,
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
from dagmath_viz.progress import Progress, format_duration
from dagmath_viz.text import printable

__all__ = ["DependsConfig", "DependsSummary", "check_batch", "run_depends", "trajectory_record"]


@dataclass(frozen=True, kw_only=True)
class DependsConfig(RunSettings):
    """A ``depends`` run: the server settings, and how chains are batched and retried."""

    #: the output file's name (``<name>.jsonl``) and its journal's
    name: str
    batch_steps: int = 40
    short_chars: int = 120
    label_attempts: int = 3


@dataclass
class DependsSummary(RunTotals):
    """What a ``depends`` run did. ``total``, ``already_done`` and ``written`` count chains;
    ``failures`` holds one row per failed batch."""

    DONE = "chains labelled"

    failed_chains: int = 0
    batches: int = 0
    structured_output: bool = True

    def line(self) -> str:
        return (
            f"{self.total - self.failed_chains} of {self.total} {self.DONE} "
            f"({self.already_done} from an earlier run, {self.written} now), "
            f"{self.failed_chains} failed ({len(self.failures)} of {self.batches} batches), "
            f"{self.requests} requests, {self.prompt_tokens} prompt + "
            f"{self.completion_tokens} completion tokens, "
            f"{format_duration(self.wall_seconds)} wall time"
        )


class _Rejected(Exception):
    """A batch whose every reply was refused; ``reason`` is the last refusal."""

    def __init__(self, reason: str, attempts: int) -> None:
        super().__init__(reason)
        self.reason, self.attempts = reason, attempts


def check_batch(value: Any, first: int, last: int) -> tuple[list[list[int]] | None, str | None]:
    """The parents of steps ``first..last`` from a reply, or ``(None, why not)``.

    Each step once, each parent an integer from 1 to the step's id minus one. A parent
    named twice counts once; parents come back sorted.

    >>> check_batch({"parents": [{"step_id": 2, "direct_dependent_steps": [1]},
    ...                          {"step_id": 3, "direct_dependent_steps": None}]}, 2, 3)
    ([[1], []], None)
    >>> check_batch({"parents": [{"step_id": 2, "direct_dependent_steps": [3]}]}, 2, 2)
    (None, 'step 2 cites step 3, which is not an earlier step')
    """
    entries = value.get("parents") if isinstance(value, dict) else None
    if not isinstance(entries, list):
        return None, "the JSON has no 'parents' list"
    found: dict[int, list[int]] = {}
    for entry in entries:
        sid = entry.get("step_id") if isinstance(entry, dict) else None
        if type(sid) is not int:
            return None, f"an entry has no integer step_id: {_short(entry)}"
        if not first <= sid <= last:
            return None, f"step {sid} was not asked about (only steps {first} to {last})"
        if sid in found:
            return None, f"step {sid} is listed twice"
        parents = entry.get("direct_dependent_steps")
        parents = [] if parents is None else parents
        if not isinstance(parents, list):
            return None, f"step {sid}: direct_dependent_steps is not a list"
        for parent in parents:
            if type(parent) is not int:
                return None, f"step {sid}: parent {_short(parent)} is not an integer step id"
            if not 1 <= parent < sid:
                return None, f"step {sid} cites step {parent}, which is not an earlier step"
        found[sid] = sorted(set(parents))
    missing = [k for k in range(first, last + 1) if k not in found]
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
        return None, f"no entry for step {shown}"
    return [found[k] for k in range(first, last + 1)], None


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def shortened(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters (an earlier step as a batch sees it)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(limit - 1, 1)].rstrip() + "…"


def spans(n_steps: int, batch_steps: int) -> list[tuple[int, int]]:
    """Step ranges of the batches, 1-based and inclusive.

    >>> spans(5, 2)
    [(1, 2), (3, 4), (5, 5)]
    """
    return [(a, min(a + batch_steps - 1, n_steps)) for a in range(1, n_steps + 1, batch_steps)]


def trajectory_record(chain: Chain, parents: list[list[int]], provenance: dict) -> dict[str, Any]:
    """The chain as a DAG-MATH record (the spelling ``dagmath score`` and the app read):
    each chunk a step's ``text``, its labelled parents ``direct_dependent_steps`` (null
    for none), an empty ``thinking``; the source's model in ``metadata.model``, the
    labeller and the prompt in ``metadata.depends``."""
    record: dict[str, Any] = {
        "problem_id": chain.problem_id,
        "sample_id": chain.sample_id,
        "dataset": chain.dataset,
        "problem_text": chain.problem_text,
    }
    if chain.reference_answer is not None:
        record["answer"] = chain.reference_answer
    if chain.difficulty is not None:
        record["difficulty"] = chain.difficulty
    if chain.domain is not None:
        record["domain"] = chain.domain
    record["steps"] = [
        {
            "step_id": i,
            "thinking": "",
            "direct_dependent_steps": parents[i - 1] or None,
            "text": text,
        }
        for i, text in enumerate(chain.steps, start=1)
    ]
    record["metadata"] = {
        "model": chain.model,
        "source": chain.source,
        "source_answer": chain.source_answer,
        "depends": {**provenance, "split": chain.split, "answer_step": chain.answer_step},
    }
    return record


class _DependsRun:
    def __init__(self, chains: list[Chain], config: DependsConfig, stream: TextIO) -> None:
        self.chains = chains
        self.config = config
        self.stream = stream
        self.output = config.out_dir / f"{safe_name(config.name)}.jsonl"
        self.prompt_digest = depends_prompt_digest()
        self.journal = Journal(
            config.out_dir / STATE_DIR / f"depends-journal-{safe_name(config.name)}.ndjson",
            ("chain", "digest", "span", "model", "prompt"),
        )
        self.spans = {c.key: spans(len(c.steps), config.batch_steps) for c in chains}
        self.summary = DependsSummary(total=len(chains))
        self.summary.batches = sum(len(s) for s in self.spans.values())
        self.notices: set[str] = set()
        self.stopped = False
        self.appended: set[str] = set()

    # ----------------------------------------------------------------- state

    def _key(self, chain: Chain, span: tuple[int, int]) -> tuple:
        return (chain.key, chain.digest, f"{span[0]}-{span[1]}", self.config.model,
                self.prompt_digest)  # fmt: skip

    def labels(self, chain: Chain, span: tuple[int, int]) -> list[list[int]] | None:
        """The journalled parents of the steps in ``span``; None when missing or not what
        :func:`check_batch` accepts (a journal edited by hand is asked for again)."""
        entry = self.journal.entries.get(self._key(chain, span))
        parents = entry.get("parents") if entry else None
        if not isinstance(parents, list) or len(parents) != span[1] - span[0] + 1:
            return None
        for sid, found in enumerate(parents, start=span[0]):
            if not isinstance(found, list) or not all(
                type(p) is int and 1 <= p < sid for p in found
            ):
                return None
        return parents

    def parents(self, chain: Chain) -> list[list[int]] | None:
        """Every step's parents, when every batch of the chain is journalled."""
        out: list[list[int]] = []
        for span in self.spans[chain.key]:
            labels = self.labels(chain, span)
            if labels is None:
                return None
            out.extend(labels)
        return out

    def provenance(self) -> dict[str, Any]:
        return {
            "model": self.config.model,
            "prompt": DEPENDS_PROMPT_NAME,
            "prompt_digest": self.prompt_digest,
            "batch_steps": self.config.batch_steps,
        }

    def record_line(self, chain: Chain) -> bytes | None:
        parents = self.parents(chain)
        if parents is None:
            return None
        return jsonio.dumps(trajectory_record(chain, parents, self.provenance()), newline=True)

    def rewrite_output(self) -> int:
        """``<name>.jsonl`` from the journal: finished chains in input order, each once."""
        lines = [line for line in map(self.record_line, self.chains) if line is not None]
        if lines or self.output.exists():
            write_if_changed(self.output, b"".join(lines))
        self.appended = {c.key for c in self.chains if self.parents(c) is not None}
        return len(lines)

    def notice(self, message: str) -> None:
        if message not in self.notices:
            self.notices.add(message)
            self.say(f"note: {message}")

    def say(self, message: str) -> None:
        lead = "\n" if self.stream.isatty() else ""  # below the progress bar's line
        self.stream.write(f"{lead}dagmath: {printable(message, one_line=True)}\n")
        self.stream.flush()

    # ----------------------------------------------------------------- one batch

    def messages(self, chain: Chain, span: tuple[int, int]) -> list[dict[str, str]]:
        first, last = span
        earlier = [(i, shortened(chain.steps[i - 1], self.config.short_chars))
                   for i in range(1, first)]  # fmt: skip
        asked = [(i, " ".join(chain.steps[i - 1].split())) for i in range(first, last + 1)]
        return [
            {"role": "system", "content": DEPENDS_PROMPT},
            {"role": "user", "content": depends_user_prompt(chain.problem_text, earlier, asked)},
        ]

    async def label(self, client: ChatClient, chain: Chain, span: tuple[int, int]) -> dict:
        """Ask until the reply passes :func:`check_batch`, showing the model its last
        refused reply and why; the journal record of the accepted one."""
        first, last = span
        asked = self.messages(chain, span)
        messages = asked
        rejections: list[str] = []
        for attempt in range(1, self.config.label_attempts + 1):
            reply = await client.json_call(
                messages, "DependsParents", DEPENDS_SCHEMA, _has_parents, "parents"
            )
            parents, reason = check_batch(reply.value, first, last)
            if reason is None:
                return {
                    "chain": chain.key, "digest": chain.digest, "span": f"{first}-{last}",
                    "model": self.config.model, "prompt": self.prompt_digest,
                    "parents": parents, "attempts": attempt, "rejections": rejections,
                }  # fmt: skip
            rejections.append(reason)
            messages = [
                *asked,
                {"role": "assistant", "content": reply.text},
                {
                    "role": "user",
                    "content": f"That reply was not accepted: {reason}. Reply again with the "
                    f"whole JSON object for steps {first} to {last}.",
                },
            ]
        raise _Rejected(rejections[-1], len(rejections))

    # ----------------------------------------------------------------- the run

    async def run(self) -> DependsSummary:
        cfg = self.config
        started = time.monotonic()
        remove_stale_temps(cfg.out_dir)
        cfg.out_dir.mkdir(parents=True, exist_ok=True)
        self.summary.already_done = self.rewrite_output()  # a kill's leftovers made whole
        pending = [
            (chain, span)
            for chain in self.chains
            for span in self.spans[chain.key]
            if self.labels(chain, span) is None
        ]
        progress = Progress(
            "depends", self.summary.batches, unit="batches",
            already=self.summary.batches - len(pending), stream=self.stream,
            interval=cfg.progress_interval,
        )  # fmt: skip
        client = ChatClient(
            base_url=cfg.base_url, model=cfg.model, api_key=cfg.api_key, policy=cfg.policy,
            structured=cfg.structured, sampling=cfg.sampling, notice=self.notice,
            breaker=Breaker(cfg.stop_after),
        )  # fmt: skip
        if pending and cfg.preflight:
            try:
                note = await client.preflight()
            except BaseException:
                await client.close()
                self.journal.close()
                raise
            if note:
                self.notice(note)

        async def call(unit: tuple[Chain, tuple[int, int]]) -> dict:
            return await self.label(client, *unit)

        def finish(unit: tuple[Chain, tuple[int, int]], entry: dict) -> None:
            chain = unit[0]
            self.journal.append(entry)
            line = self.record_line(chain)
            if line is not None and chain.key not in self.appended:
                jsonio.append_lines(self.output, line)
                self.appended.add(chain.key)
                self.summary.written += 1

        def failure(unit: tuple[Chain, tuple[int, int]], exc: Exception) -> dict[str, Any]:
            chain, (first, last) = unit
            reason = exc.reason  # type: ignore[attr-defined]
            if cfg.verbose:
                self.say(
                    f"problem {chain.problem_id} sample {chain.sample_id} steps {first}-{last} "
                    f"failed: {reason}"
                )
            return {
                "dataset": chain.dataset,
                "problem_id": chain.problem_id,
                "sample_id": chain.sample_id,
                "steps": f"{first}-{last}",
                "attempts": exc.attempts,  # type: ignore[attr-defined]
                "reason": reason,
            }

        try:
            await run_units(
                self, pending, call, finish, failure, concurrency=cfg.concurrency,
                progress=progress, failed=(CallFailed, _Rejected),
            )  # fmt: skip
        finally:
            await client.close()
            self.summary.add_usage(client)
            self.summary.structured_output = client.structured
            self.rewrite_output()  # input order
            self.journal.close()
            self.summary.wall_seconds = time.monotonic() - started
        failed = {(f["dataset"], f["problem_id"], f["sample_id"]) for f in self.summary.failures}
        self.summary.failed_chains = len(failed)
        self.write_failures()
        self.write_manifest()
        return self.summary

    def write_failures(self) -> None:
        columns = ["model", "dataset", "problem_id", "sample_id", "steps", "attempts", "reason"]
        write_failures(self.config.out_dir, self.summary.failures, columns, model=self.config.model)

    def write_manifest(self) -> None:
        cfg = self.config
        now = datetime.now(UTC)
        manifest = {
            "command": "depends",
            "dagmath_viz_version": __version__,
            "finished_at": now.isoformat(timespec="seconds"),
            "model": cfg.model,
            "base_url": public_url(cfg.base_url),
            "output": self.output.name,
            "prompt": DEPENDS_PROMPT_NAME,
            "prompt_digest": self.prompt_digest,
            "parameters": {
                "batch_steps": cfg.batch_steps,
                "short_chars": cfg.short_chars,
                "label_attempts": cfg.label_attempts,
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
            "structured_output_used": self.summary.structured_output,
            "chains": len(self.chains),
            "chains_from_earlier_runs": self.summary.already_done,
            "chains_written": self.summary.written,
            "chains_failed": self.summary.failed_chains,
            "batches": self.summary.batches,
            "batches_failed": len(self.summary.failures),
            "requests": self.summary.requests,
            "prompt_tokens": self.summary.prompt_tokens,
            "completion_tokens": self.summary.completion_tokens,
            "wall_seconds": round(self.summary.wall_seconds, 3),
        }
        stamp = now.strftime("%Y%m%dT%H%M%S%fZ")
        path = cfg.out_dir / STATE_DIR / "runs" / f"{stamp}-depends.json"
        write_atomic(path, json.dumps(manifest, ensure_ascii=False, indent=2).encode() + b"\n")


def _has_parents(value: Any) -> str | None:
    if not isinstance(value, dict) or not isinstance(value.get("parents"), list):
        return "the JSON has no 'parents' list"
    return None


def run_depends(chains: list[Chain], config: DependsConfig, stream: TextIO) -> DependsSummary:
    """Label every chain's parents and write the trajectories (see the module doc).

    Raises:
        FatalAPIError: the server cannot be reached, or refused the credentials, model or
            endpoint.
        InputError: another run holds the output folder, or the output is not a regular file.
    """
    with FolderLock(config.out_dir):
        return run_to_completion(lambda: _DependsRun(chains, config, stream).run())
