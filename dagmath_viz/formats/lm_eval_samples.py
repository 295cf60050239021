"""lm-evaluation-harness ``--log_samples`` files: ``samples_<task>_<date>.jsonl``.

lm-eval writes, under ``--output_path``, a folder named after the model holding
``results_<date>.json`` (scores and the run's config, with ``model_name``) and one
``samples_<task>_<date>.jsonl`` per task: a line per doc with ``doc_id`` (the doc's
0-based position in the task's split, not an id of its own), ``doc`` (the dataset row),
``target``, ``resps`` (the raw replies: a list per request, one reply per repeat),
``filtered_resps`` and ``filter``.

One trajectory per doc and reply: the problem id is the doc's own id field (the first of
:data:`ID_FIELDS` it has; else ``doc_id``; ``--map problem_id=FIELD`` names another, as
the doc's fields are the record's), the sample id the reply's place among the doc's raw
replies (0, 1, ... over the repeats), the reference ``target``, the model the results
file's ``model_name`` (the results file of the same date beside it; without one, the
folder's name, which lm-eval names after the model), the dataset the task. Steps are
parsed from the raw reply with :func:`dagmath_viz.formats.replies.solution_steps`, as
``dagmath generate`` reads a reply.

A task with several filters writes each doc once per filter, with the same raw replies
(a filter only extracts an answer from them). The trajectories are in the raw replies,
so a doc is read from its first line only and its lines under other filters are skipped:
counting one trajectory per (doc, filter) would multiply every rate's denominator by the
number of filters. The results file is this format's companion, never read as data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dagmath_viz import jsonio
from dagmath_viz.formats.common import MAX_COMPANION_BYTES, companion_refusal, head_bytes
from dagmath_viz.formats.records import ROWS
from dagmath_viz.formats.replies import solution_steps
from dagmath_viz.schema import InputError

__all__ = [
    "ID_FIELDS",
    "NO_REPLY",
    "PROBLEM_FIELDS",
    "claims",
    "claims_results",
    "documents",
    "form",
]

#: A doc's own id, by the names datasets give it (MATH-500's ``unique_id`` among them).
ID_FIELDS = ("problem_id", "id", "unique_id", "question_id", "idx")
#: A doc's problem text, by the names datasets give it; else the prompt sent.
PROBLEM_FIELDS = ("problem", "question", "input", "prompt")
#: Bytes of the first line looked at to tell a samples file (``doc_id`` comes first).
SNIFF_BYTES = 1 << 20
_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d\d-\d\dT[\d.\-]+)\.jsonl$", re.I)
_RESULTS = re.compile(r"^results_(?P<date>\d{4}-\d\d-\d\dT[\d.\-]+)\.json$", re.I)
_KEYS = re.compile(rb'^\{\s*"doc_id"\s*:')
#: A doc whose ``resps`` hold no generated text (a generate_until task's are strings).
NO_REPLY = "no generated text in 'resps'"


def form(path: Path) -> str:
    return ROWS


def claims(path: Path) -> bool:
    """A ``samples_<task>_<date>.jsonl`` file whose first line starts with ``doc_id``."""
    if not _NAME.match(path.name):
        return False
    head = head_bytes(path, SNIFF_BYTES)
    return head is not None and _KEYS.match(head) is not None


def claims_results(path: Path) -> bool:
    """``results_<date>.json`` beside a samples file of the same date (its companion)."""
    match = _RESULTS.match(path.name)
    if match is None:
        return False
    try:
        return any(path.parent.glob(f"samples_*_{glob_escape(match['date'])}.jsonl"))
    except OSError:
        return False


def glob_escape(text: str) -> str:
    """``text`` with glob's special characters taken literally."""
    return re.sub(r"([*?\[])", r"[\1]", text)


def documents(path: Path, data: bytes) -> Iterable[jsonio.Document]:
    """One document per doc (``line N``): the list of its replies' records; a doc's lines
    under other filters are left out (see the module's docstring)."""
    name = _NAME.match(path.name)
    task = name["task"] if name else None
    model = _model(path, name["date"] if name else None)
    seen: set[Any] = set()
    out = []
    for where, line in jsonio.parse_lines(data):
        if isinstance(line, InputError) or not isinstance(line, dict):
            out.append(jsonio.Document(where, line))
            continue
        key = line.get("doc_id")
        if key in seen and isinstance(key, int):
            continue  # the same doc under another filter: the same raw replies
        seen.add(key)
        out.append(jsonio.Document(where, _records(line, model, task)))
    if out and all(isinstance(doc, InputError) and doc.args == (NO_REPLY,) for _, doc in out):
        # a loglikelihood (multiple-choice) task: one line for the file, not one per doc
        raise InputError(f"{NO_REPLY}: an lm-eval task that scores choices writes no reply")
    return out


def _model(path: Path, date: str | None) -> str:
    """The model's name from the results file of the same run, else the folder's name.

    The results file is opened only as a regular file of the samples file's folder under
    the companions' size cap (:func:`companion_refusal`): a link, which may lead out of the
    folder, is not read (the folder walk names one that does), nor is a FIFO or a device.
    """
    if date is not None:
        results = path.parent / f"results_{date}.json"
        try:
            found = (
                jsonio.read_json(results)
                if companion_refusal(results, MAX_COMPANION_BYTES) is None
                else None
            )
        except InputError:
            found = None
        if isinstance(found, dict):
            name = found.get("model_name")
            config = found.get("config")
            args = config.get("model_args") if isinstance(config, dict) else None
            pretrained = args.get("pretrained") if isinstance(args, dict) else None
            for value in (name, pretrained):
                if isinstance(value, str) and value.strip():
                    return value.strip()
    return path.parent.name or path.absolute().parent.name or "model"  # `samples_*.jsonl` in cwd


def _records(line: dict, model: str, task: str | None) -> Any:
    """A doc's records, one per raw reply; an InputError when it holds no text reply."""
    replies = _replies(line.get("resps"))
    if not replies:
        return InputError(NO_REPLY)
    given = line.get("doc")
    doc: dict[str, Any] = given if isinstance(given, dict) else {}
    own = next((doc[f] for f in ID_FIELDS if isinstance(doc.get(f), str | int)), None)
    base = {
        **doc,
        "doc_id": line.get("doc_id"),
        "problem_id": own if own is not None else line.get("doc_id"),
        "model": model,
        "dataset": task,
        "problem_text": next(
            (doc[f] for f in PROBLEM_FIELDS if isinstance(doc.get(f), str)), _prompt(line)
        ),
        "answer": line.get("target"),
    }
    for name in ("steps", "metadata"):  # a doc's own, which would pass for the reply's
        base.pop(name, None)
    records = []
    for k, reply in enumerate(replies):
        steps = solution_steps(reply)
        # free-form: the reply as ``solution``, where ``dagmath depends`` reads a chain
        extra = {"solution": reply} if steps is None else {"steps": steps}
        records.append({**base, "sample_id": k, **extra})
    return records


def _replies(resps: Any) -> list[str]:
    """Every raw reply, in order: ``resps`` is a list per request of one reply per repeat."""
    if not isinstance(resps, list):
        return []
    flat = [r for group in resps for r in (group if isinstance(group, list) else [group])]
    return [r for r in flat if isinstance(r, str)]


def _prompt(line: dict) -> str | None:
    """The prompt sent (``arguments``' first argument), when the doc names no problem."""
    args = line.get("arguments")
    first = next(iter(args.values()), None) if isinstance(args, dict) and args else None
    if isinstance(first, dict):
        first = first.get("arg_0")
    elif isinstance(args, list) and args:
        first = args[0][0] if isinstance(args[0], list) and args[0] else None
    return first if isinstance(first, str) else None
