"""Free-form chains of thought to label: read them, split them into steps.

A chain comes from one of two places:

- **Thought Anchors**: ``<model>/<correct|incorrect>_base_solution/problem_<id>/base_solution.json``
  (its ``solution`` text and its ``answer``) with ``problem.json`` beside it (``problem``,
  ``gt_answer``, ``level``, ``type``). A folder is searched for such files. The keys are
  those of the project's Thought Anchors reader (model from the folder, data set
  ``thought-anchors``, sample 0 for the correct solution and 1 for the incorrect one), so a
  labelled chain lines up with the source's own ``chunks_labeled.json``.
- **Records** (``.jsonl`` or ``.json``, or any file of records the format registry reads,
  such as an inspect_ai log or an lm-eval samples file, whose free-form replies are their
  records' ``solution``): a problem and a free-form solution per record, the fields named
  by :data:`CHAIN_FIELDS` or a field map.

The split is Thought Anchors' own (``split_solution_into_chunks`` in
interp-reasoning/thought-anchors, ``utils.py``): only the text between ``<think>`` and
``</think>`` when they are there; a chunk ends after ``.``, ``?`` or ``!`` followed by a
space or a newline, and at a blank line; chunks shorter than 10 characters are joined to
the next one (the last to the one before). It has no rule of its own for math: a display
block is kept whole because it has no blank line and its dots are not followed by spaces.
One difference, ours: their function drops the text after the last boundary, while their
published chunk files keep it; we keep it, which gives their published chunks exactly.

The final step carries the answer: when the last chunk's ``\\boxed{}`` is missing or is not
the source's own answer (Thought Anchors' ``answer``, a record's ``predicted_answer``, else
the last ``\\boxed{}`` anywhere in the text, e.g. after ``</think>``), a step
``The final answer is $\\boxed{...}$.`` is added; the model labels its parents like any
other step's.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dagmath_viz import jsonio
from dagmath_viz.answers.check import extract_boxed
from dagmath_viz.formats.registry import documents_of, record_form
from dagmath_viz.generation.problems import file_stem
from dagmath_viz.schema import InputError

__all__ = [
    "CHAIN_FIELDS",
    "Chain",
    "read_chains",
    "split_into_chunks",
]

#: Our fields a record may hold, each with the names read when no field map names it.
CHAIN_FIELDS: dict[str, tuple[str, ...]] = {
    "problem_id": ("problem_id", "id"),
    "problem_text": ("problem_text", "problem", "question"),
    "solution": ("solution", "text", "cot", "reasoning"),
    "chunks": ("chunks",),
    "answer": ("answer", "gold_answer", "reference_answer"),
    "predicted_answer": ("predicted_answer",),
    "model": ("model",),
    "sample_id": ("sample_id",),
    "dataset": ("dataset",),
    "difficulty": ("difficulty",),
}
#: Shorter chunks than this are joined to a neighbour (Thought Anchors' rule).
MIN_CHUNK_CHARS = 10
_SENTENCE_END = re.compile(r"[.?!](?=[ \n])|\n\n|\r\n\r\n")
_TA_SOLUTION = re.compile(r"^(correct|incorrect)_base_solution$")
_TA_PROBLEM = re.compile(r"^problem_(.+)$")
_LEVEL = re.compile(r"^\s*level\s+(\d+(?:\.\d+)?)\s*$", re.IGNORECASE)
#: The data-set name of Thought Anchors chains (the project's reader uses the same).
THOUGHT_ANCHORS_DATASET = "thought-anchors"


@dataclass(frozen=True)
class Chain:
    """One chain of thought, split, with what the output record needs."""

    model: str
    dataset: str
    problem_id: str
    sample_id: int
    problem_text: str
    steps: tuple[str, ...]
    source: str
    reference_answer: str | None = None
    source_answer: str | None = None
    difficulty: float | None = None
    domain: str | None = None
    #: how the steps were made: "thought-anchors" (split here) or "given" (chunks read)
    split: str = "thought-anchors"
    #: the step id of the answer step added (see the module doc), or None
    answer_step: int | None = None

    @property
    def key(self) -> str:
        """Identifies the chain in the journal and the output (model, data set, problem, sample)."""
        return json.dumps([self.model, self.dataset, self.problem_id, self.sample_id])

    @property
    def digest(self) -> str:
        """Of the problem and the steps: a journalled label is reused only for this text."""
        data = json.dumps([self.problem_text, list(self.steps)], ensure_ascii=False)
        return hashlib.sha256(data.encode()).hexdigest()[:16]


def split_into_chunks(text: str) -> list[str]:
    r"""Thought Anchors' sentence-and-paragraph split (see the module doc).

    >>> split_into_chunks("<think>So x = 2. Hmm. Then y is 3.\n\nDone, y = 3.</think> ok")
    ['So x = 2. Hmm.', 'Then y is 3.', 'Done, y = 3.']
    """
    if "<think>" in text:
        text = text.split("<think>")[1].strip()
    if "</think>" in text:
        text = text.split("</think>")[0].strip()
    chunks: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        # the boundary's first character ends the chunk (a blank line's first newline)
        end = match.start() + 1
        piece = text[start:end].strip()
        if piece:
            chunks.append(piece)
            start = end
    tail = text[start:].strip()
    if tail:
        chunks.append(tail)
    return _merge_short(chunks)


def _merge_short(chunks: list[str]) -> list[str]:
    i = 0
    while i < len(chunks):
        if len(chunks[i]) >= MIN_CHUNK_CHARS or len(chunks) == 1:
            i += 1
        elif i == len(chunks) - 1:
            chunks[i - 1] = chunks[i - 1] + " " + chunks.pop(i)
        else:
            chunks[i] = chunks.pop(i) + " " + chunks[i]  # joined to the next one
    return chunks


# --------------------------------------------------------------------------- reading


def read_chains(
    path: str | Path,
    field_map: dict[str, str] | None = None,
    *,
    model: str | None = None,
    dataset: str | None = None,
    use_chunks: bool = False,
) -> list[Chain]:
    """Every chain in ``path``: a ``base_solution.json``, a folder of them, or records.

    ``model`` and ``dataset`` name what a record does not; ``use_chunks`` takes a record's
    ``chunks`` list as its steps instead of splitting its solution.

    Raises:
        InputError: nothing to read, or a record is malformed (the message names the file
            and the record), or two chains have the same key.
    """
    path = Path(path)
    if path.is_dir():
        found = sorted(path.rglob("base_solution.json"))
        if not found:
            raise InputError(f"{path}: no Thought Anchors base_solution.json in this folder")
        chains = [_thought_anchors(p) for p in found]
    elif path.name == "base_solution.json":
        chains = [_thought_anchors(path)]
    elif path.suffix.lower() in (".jsonl", ".json") or record_form(path) is not None:
        columns = {
            f: (field_map[f],) if field_map and f in field_map else names
            for f, names in CHAIN_FIELDS.items()
        }
        stem = file_stem(path)
        chains = _records(path, columns, model or stem, dataset or stem, use_chunks)
    elif not path.exists():
        raise InputError(f"{path}: {jsonio.NO_SUCH_FILE}")
    else:
        raise InputError(
            f"{path}: expected a .jsonl or .json file of records, a Thought Anchors "
            "base_solution.json, or a folder of them"
        )
    seen: dict[str, str] = {}
    for chain in chains:
        if chain.key in seen:
            raise InputError(
                f"{chain.source}: problem {chain.problem_id!r} sample {chain.sample_id} "
                f"repeats the one at {seen[chain.key]}"
            )
        seen[chain.key] = chain.source
    if not chains:
        raise InputError(f"{path}: no chains found")
    return chains


def _thought_anchors(path: Path) -> Chain:
    folder = path.parent
    solution = _object(path)
    problem_file = folder / "problem.json"
    problem = _object(problem_file)
    text = solution.get("solution")
    if not isinstance(text, str) or not text.strip():
        raise InputError(f"{path}: no 'solution' text")
    statement = problem.get("problem")
    if not isinstance(statement, str) or not statement.strip():
        raise InputError(f"{problem_file}: no 'problem' text")
    steps = split_into_chunks(text)
    if not steps:
        raise InputError(f"{path}: the solution holds no text between <think> and </think>")
    level = problem.get("level")
    match = _LEVEL.match(level) if isinstance(level, str) else None
    pid = _TA_PROBLEM.match(folder.name)
    in_layout = pid is not None and _TA_SOLUTION.match(folder.parent.name)
    return _with_answer_step(
        Chain(
            model=(folder.parent.parent.name if in_layout else "") or "model",
            dataset=THOUGHT_ANCHORS_DATASET,
            problem_id=pid.group(1) if pid else folder.name,
            sample_id=1 if in_layout and folder.parent.name.startswith("incorrect") else 0,
            problem_text=statement,
            steps=tuple(steps),
            source=str(path),
            reference_answer=_text(problem.get("gt_answer")),
            source_answer=_text(solution.get("answer")) or extract_boxed(text),
            difficulty=float(match.group(1)) if match else None,
            domain=_text(problem.get("type")),
        )
    )


def _object(path: Path) -> dict[str, Any]:
    value = jsonio.read_json(path)  # names the file when it is missing or not JSON
    if not isinstance(value, dict):
        raise InputError(f"{path}: expected a JSON object, found {type(value).__name__}")
    return value


def _records(
    path: Path,
    columns: dict[str, tuple[str, ...]],
    model: str,
    dataset: str,
    use_chunks: bool,
) -> list[Chain]:
    data = jsonio.read_bytes(path)
    chains = []
    position = 0
    for location, doc in documents_of(path, data):
        if isinstance(doc, InputError):
            raise InputError(f"{path}: {doc}")
        rows = doc if isinstance(doc, list) else [doc]
        for i, row in enumerate(rows):
            where = location if not isinstance(doc, list) else f"record {i + 1}"
            chains.append(
                _record(path, where or f"record {i + 1}", row, columns, position, model, dataset,
                        use_chunks)
            )  # fmt: skip
            position += 1
    return chains


def _get(row: dict, names: tuple[str, ...]) -> Any:
    return next((row[n] for n in names if n in row), None)


def _record(
    path: Path,
    where: str,
    row: Any,
    columns: dict[str, tuple[str, ...]],
    position: int,
    model: str,
    dataset: str,
    use_chunks: bool,
) -> Chain:
    def fail(message: str) -> InputError:
        return InputError(f"{path}: {where}: {message}")

    def named(field: str) -> str:
        return " or ".join(repr(c) for c in columns[field])

    if not isinstance(row, dict):
        raise fail(f"expected an object, found {type(row).__name__}")
    statement = _get(row, columns["problem_text"])
    if not isinstance(statement, str) or not statement.strip():
        raise fail(f"no problem text (field {named('problem_text')})")
    text = _get(row, columns["solution"])
    if use_chunks:
        steps = _given_chunks(_get(row, columns["chunks"]), named("chunks"), fail)
    else:
        if not isinstance(text, str) or not text.strip():
            raise fail(
                f"no chain of thought to split (field {named('solution')}; --field names it)"
            )
        steps = split_into_chunks(text)
        if not steps:
            raise fail("the chain of thought holds no text between <think> and </think>")
    pid = _get(row, columns["problem_id"])
    if pid is None or pid == "" or not isinstance(pid, int | str) or isinstance(pid, bool):
        pid = position  # as the loader numbers a record without an id
    sid = _get(row, columns["sample_id"])
    if type(sid) is not int:
        sid = 0
    predicted = _text(_get(row, columns["predicted_answer"]))
    if predicted is None and isinstance(text, str):
        predicted = extract_boxed(text)
    return _with_answer_step(
        Chain(
            model=_text(_get(row, columns["model"])) or model,
            dataset=_text(_get(row, columns["dataset"])) or dataset,
            problem_id=str(pid).strip(),
            sample_id=sid,
            problem_text=statement,
            steps=tuple(steps),
            source=f"{path}:{where}",
            reference_answer=_text(_get(row, columns["answer"])),
            source_answer=predicted,
            difficulty=_number(_get(row, columns["difficulty"])),
            split="given" if use_chunks else "thought-anchors",
        )
    )


def _given_chunks(value: Any, field: str, fail) -> list[str]:
    """A record's own chunks: strings, or objects with ``chunk`` or ``text``."""
    if not isinstance(value, list) or not value:
        raise fail(f"no list of chunks (field {field})")
    steps = []
    for i, item in enumerate(value, start=1):
        text = _get(item, ("chunk", "text")) if isinstance(item, dict) else item
        if not isinstance(text, str) or not text.strip():
            raise fail(f"chunk {i} is not text")
        steps.append(text.strip())
    return steps


def _with_answer_step(chain: Chain) -> Chain:
    """The chain, with an answer step added when its last step does not state the source's
    answer in a ``\\boxed{}`` (see the module doc)."""
    answer = chain.source_answer
    if answer is None or extract_boxed(chain.steps[-1]) == answer:
        return chain
    steps = (*chain.steps, f"The final answer is $\\boxed{{{answer}}}$.")
    return dataclasses.replace(chain, steps=steps, answer_step=len(steps))


def _text(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    text = str(value).strip()
    return text or None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
