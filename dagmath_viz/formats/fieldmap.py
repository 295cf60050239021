"""A field map: read records whose fields are named otherwise (``--map``).

``problem_id=unique_id,problem_text=problem,answer=answer`` says that our ``problem_id``
is the file's ``unique_id`` column, and so on. The map is applied when a record is
parsed, in every format that holds JSON records (JSON, JSON Lines, Hugging Face files).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from dagmath_viz.schema import InputError

__all__ = ["RECORD_FIELDS", "FieldMap"]

#: The fields of a trajectory record that a map can fill (README "Bring your own data").
RECORD_FIELDS = (
    "problem_id", "sample_id", "model", "dataset", "problem_text", "answer", "difficulty",
    "domain", "steps",
)  # fmt: skip
_ALIASES = {"problem": "problem_text", "id": "problem_id", "gold_answer": "answer"}


@dataclass(frozen=True, slots=True)
class FieldMap:
    """Pairs (our field, the file's field), applied to every record read."""

    pairs: tuple[tuple[str, str], ...]

    @classmethod
    def parse(cls, text: str) -> FieldMap:
        """``FIELD=COLUMN,...`` as a map.

        >>> FieldMap.parse("problem_id=unique_id, problem=question").pairs
        (('problem_id', 'unique_id'), ('problem_text', 'question'))

        Raises:
            InputError: ``--map ...: <why>``: an entry is not ``FIELD=COLUMN``, names a
                field records do not have, or repeats one.
        """
        out: dict[str, str] = {}
        for entry in (e.strip() for e in text.split(",")):
            if not entry:
                continue
            ours, sep, theirs = (part.strip() for part in entry.partition("="))
            if not sep or not ours or not theirs:
                raise InputError(f"--map {text!r}: {entry!r} is not FIELD=COLUMN")
            ours = _ALIASES.get(ours, ours)
            if ours not in RECORD_FIELDS:
                known = ", ".join(RECORD_FIELDS)
                raise InputError(f"--map {text!r}: {ours!r} is not one of {known}")
            if ours in out:
                raise InputError(f"--map {text!r}: {ours!r} is mapped twice")
            out[ours] = theirs
        if not out:
            raise InputError(f"--map {text!r}: no FIELD=COLUMN entry")
        return cls(tuple(out.items()))

    @property
    def text(self) -> str:
        """The map as ``--map`` spells it (``problem_id=unique_id,...``)."""
        return ",".join(f"{ours}={theirs}" for ours, theirs in self.pairs)

    def apply(self, record: Any) -> Any:
        """``record`` with each of our fields set from the file's field, when it has it.

        >>> FieldMap.parse("problem_id=unique_id").apply({"unique_id": "a/1.json"})
        {'unique_id': 'a/1.json', 'problem_id': 'a/1.json'}
        """
        if not isinstance(record, dict):
            return record
        found = {ours: record[theirs] for ours, theirs in self.pairs if theirs in record}
        return {**record, **found} if found else record

    def apply_all(self, document: Any) -> Any:
        """A JSON document (one record, or a list of them) with the map applied."""
        if isinstance(document, list):
            return [self.apply(r) for r in document]
        return self.apply(document)

    def unmatched(self, documents: Iterable[Any]) -> list[tuple[str, str]]:
        """The pairs whose field no record of ``documents`` (records, or lists of them)
        has: a misspelt column, which would otherwise change nothing without a word.

        >>> FieldMap.parse("problem_id=uid,answer=ans").unmatched([[{"uid": 1}], {"x": 2}])
        [('answer', 'ans')]
        """
        seen: set[str] = set()
        for doc in documents:
            for record in doc if isinstance(doc, list) else [doc]:
                if isinstance(record, dict):
                    seen.update(record)
        return [(ours, theirs) for ours, theirs in self.pairs if theirs not in seen]
