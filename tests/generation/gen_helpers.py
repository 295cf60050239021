"""A scripted DAG-MATH model for the fake chat-completions server, and run helpers."""

from __future__ import annotations

import json
import re
import threading
from collections import defaultdict
from pathlib import Path

from gen_fake_server import Action, drop, error, reply

from dagmath_viz.cli import main

_PROBLEM = re.compile(r"Problem: Problem P(\d+):")


def problem_text(i: int) -> str:
    return f"Problem P{i}: what is $7 \\times {i}$?"


def solution(i: int, answer: str, odd: bool = False) -> dict:
    """A three-step solution; ``odd`` makes step 2 depend on a later step (illegal)."""
    return {
        "steps": [
            {
                "step_id": 1,
                "thinking": "Given.",
                "direct_dependent_steps": None,
                "text": f"We need $7 \\times {i}$.",
            },
            {
                "step_id": 2,
                "thinking": "Step 1, multiplied out.",
                "direct_dependent_steps": [3] if odd else [1],
                "text": f"$7 \\times {i} = {7 * i}$.",
            },
            {
                "step_id": 3,
                "thinking": "Step 2 is the answer.",
                "direct_dependent_steps": [2],
                "text": f"The final answer is $\\boxed{{{answer}}}$.",
            },
        ]
    }


def write_problems(path: Path, n: int) -> Path:
    rows = [
        {"problem_id": i, "problem": problem_text(i), "answer": str(7 * i), "difficulty": i / n}
        for i in range(1, n + 1)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


class ScriptedModel:
    """Answers problem P<i> correctly unless ``i`` is in ``wrong``; the k-th request for a
    problem gets ``faults[i][k]`` instead while there is one.

    Fault names: "429:<secs>", "500", "503", "slow:<secs>", "truncated", "fenced",
    "prose", "invalid", "drop", "odd" (an illegal but parseable solution), "always-invalid".
    """

    def __init__(
        self,
        wrong: set[int] = frozenset(),
        faults: dict[int, list[str]] | None = None,
        refuse_response_format: bool = False,
        delay: float = 0.0,
    ) -> None:
        self.wrong = set(wrong)
        self.faults = faults or {}
        self.refuse = refuse_response_format
        self.delay = delay
        self.count: dict[int, int] = defaultdict(int)
        self.lock = threading.Lock()
        self.refusals = 0

    def __call__(self, body: dict) -> Action:
        if self.refuse and "response_format" in body:
            with self.lock:
                self.refusals += 1
            return error(400, "response_format is not supported by this server")
        user = body["messages"][-1]["content"]
        i = int(_PROBLEM.match(user).group(1))
        with self.lock:
            k = self.count[i]
            self.count[i] += 1
        plan = self.faults.get(i, [])
        fault = plan[k] if k < len(plan) else None
        if plan and plan[-1] in ("always-invalid", "too-long"):
            fault = plan[-1]
        answer = str(7 * i + 1 if i in self.wrong else 7 * i)
        good = json.dumps(solution(i, answer, odd=fault == "odd"))
        if fault is None or fault == "odd":
            return reply(good, delay=self.delay)
        if fault.startswith("429"):
            return error(429, "slow down", {"Retry-After": fault.split(":")[1]})
        if fault in ("500", "503"):
            return error(int(fault), "server error")
        if fault.startswith("slow"):
            return reply(good, delay=float(fault.split(":")[1]))
        if fault == "truncated":
            return reply(good[: len(good) // 2], finish_reason="length")
        if fault == "fenced":
            return reply(f"Here is the solution.\n```json\n{good}\n```\nDone.")
        if fault == "prose":
            return reply(f"Sure. The JSON is {good} and that is all.")
        if fault in ("invalid", "always-invalid"):
            return reply("I would rather write prose: the answer is 7.")
        if fault == "drop":
            return drop()
        if fault == "garbage":
            return Action("raw", content="<html>502 Bad Gateway</html>")
        if fault == "too-long":
            return error(400, "This model's maximum context length is 4096 tokens")
        raise AssertionError(f"unknown fault {fault}")


def run_cli(*argv: str) -> int:
    return main([str(a) for a in argv])


def read_samples(folder: Path) -> dict[str, list[dict]]:
    """Every problem file's samples, by file name."""
    return {
        p.name: json.loads(p.read_text()) for p in sorted(folder.glob("problem_*_all_samples.json"))
    }


# --------------------------------------------------------------------------- dagmath depends

_ASKED = re.compile(r"Steps to label \((\d+) to (\d+)\)")


def asked_span(body: dict) -> tuple[int, int]:
    """The steps a `depends` request asks about (its first user message says)."""
    first, last = _ASKED.search(body["messages"][1]["content"]).groups()
    return int(first), int(last)


class Labeller:
    """A scripted `depends` model: step k's parent is step k-1 (step 1 has none), so every
    chain comes back closed. The n-th request for a batch (by its first step) gets
    ``faults[first][n]`` while there is one: "later" (step ``first`` cites ``last + 1``),
    "broken" (no JSON), "slow:<secs>", "always-later".
    """

    def __init__(self, faults: dict[int, list[str]] | None = None, delay: float = 0.0) -> None:
        self.faults = faults or {}
        self.delay = delay
        self.count: dict[int, int] = defaultdict(int)
        self.lock = threading.Lock()

    @staticmethod
    def answer(first: int, last: int, later: bool = False) -> str:
        entries = [
            {"step_id": k, "direct_dependent_steps": [k - 1] if k > 1 else None}
            for k in range(first, last + 1)
        ]
        if later:
            entries[0]["direct_dependent_steps"] = [last + 1]
        return json.dumps({"parents": entries})

    def __call__(self, body: dict) -> Action:
        first, last = asked_span(body)
        with self.lock:
            n = self.count[first]
            self.count[first] += 1
        plan = self.faults.get(first, [])
        fault = plan[n] if n < len(plan) else None
        if plan and plan[-1] == "always-later":
            fault = "later"
        if fault is None:
            return reply(self.answer(first, last), delay=self.delay)
        if fault == "later":
            return reply(self.answer(first, last, later=True))
        if fault == "broken":
            return reply('{"parents": [{"step_id": ')
        if fault.startswith("slow"):
            return reply(self.answer(first, last), delay=float(fault.split(":")[1]))
        raise AssertionError(f"unknown fault {fault}")
