"""A model's reply read as a DAG-MATH solution: the one reply parser.

``dagmath generate`` asks a model for ``{"steps": [...]}`` and reads the reply with
:func:`extract_json` and :func:`check_solution`; the readers of other tools' logs
(inspect_ai, lm-eval) read a logged reply with the same two, through
:func:`solution_steps`, so a reply counts as a solution in a log exactly when it would
have counted as one in a ``generate`` run. It lives here, below the generation layer,
because the format readers may not import from above them.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = [
    "MAX_REPLY_DEPTH",
    "check_solution",
    "extract_json",
    "json_depth",
    "solution_steps",
]

#: Deepest JSON accepted in a model's reply (a solution is 4 levels deep).
MAX_REPLY_DEPTH = 64
_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\r?\n(.*?)```", re.S)
#: How many '{' positions the prose scan tries before giving up (keeps it linear-ish).
_MAX_SCAN = 200


def json_depth(value: Any, limit: int) -> int:
    """How deeply ``value`` nests lists and objects, counted up to ``limit + 1`` (no
    recursion, so a hostile value cannot exhaust the stack; linear in its size).

    >>> json_depth({"a": [1, [2]]}, 10), json_depth([[[[]]]], 2)
    (3, 3)
    """
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, dict | list):
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return deepest


def extract_json(text: str, required_key: str | None = None) -> Any:
    """The JSON object in a reply: the whole text, a ```json fence, or one inside prose.

    With ``required_key``, an object lacking that key is passed over in favour of a later
    one (a reasoning model may write braces in its thoughts before the answer).
    Returns ``None`` when there is none.

    >>> extract_json('Sure! ```json\\n{"steps": []}\\n``` Hope it helps.')
    {'steps': []}
    >>> extract_json('I think {x} so: {"steps": [1]} done', "steps")
    {'steps': [1]}
    """

    def wanted(obj: Any) -> bool:
        if json_depth(obj, MAX_REPLY_DEPTH) > MAX_REPLY_DEPTH:
            return False
        if required_key is None:
            return isinstance(obj, dict | list)
        return isinstance(obj, dict) and required_key in obj

    stripped = text.strip()
    candidates = [stripped, *(m.group(1) for m in _FENCE.finditer(text))]
    for candidate in candidates:
        try:
            obj = json.loads(candidate)
        except (ValueError, RecursionError):  # RecursionError: nested past Python's stack
            continue
        if wanted(obj):
            return obj
    decoder = json.JSONDecoder()
    start = text.find("{")
    tries = 0
    while start != -1 and tries < _MAX_SCAN:
        tries += 1
        try:
            obj, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            start = text.find("{", start + 1)
            continue
        if wanted(obj):
            return obj
        start = text.find("{", end)
    return None


def check_solution(value: Any) -> str | None:
    """Why a parsed reply is not a solution, or ``None``.

    Only the envelope is checked: an object with a ``steps`` list. Odd steps (missing
    fields, bad parents, cycles) are kept on purpose: ``dagmath score`` classes them
    ``illegal``, whereas dropping them would bias the run's rates upwards.
    """
    if not isinstance(value, dict):
        return f"the JSON is {type(value).__name__}, expected an object with 'steps'"
    if not isinstance(value.get("steps"), list):
        return "the JSON object has no 'steps' list"
    return None


def solution_steps(text: Any) -> list | None:
    """The ``steps`` of a logged reply, read as ``generate`` reads a reply; ``None`` for
    a reply that holds no DAG-MATH solution (free-form text, or not text at all).

    >>> solution_steps('```json\\n{"steps": [{"step_id": 1}]}\\n```')
    [{'step_id': 1}]
    >>> solution_steps("Two and two make four, so the answer is 4.") is None
    True
    """
    if not isinstance(text, str):
        return None
    value = extract_json(text, "steps")
    if value is None or check_solution(value) is not None:
        return None
    return value["steps"]
