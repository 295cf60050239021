"""A field map: read records whose fields are named otherwise (``--map``).

``problem_id=unique_id,problem_text=problem,answer=answer`` says that our ``problem_id``
is the file's ``unique_id`` column, and so on. The map is applied when a record is
parsed, in every format that holds JSON records (JSON, JSON Lines, Hugging Face files).

A mapped column that no record of a file has is a warning for that file
(:meth:`FieldMap.file_warning`); a load of many files says it once per column
(:meth:`FieldMap.summarised`): in how many of the files read it is missing, and which.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from dagmath_viz.schema import InputError, LoadIssue

__all__ = ["NAMED_FILES", "RECORD_FIELDS", "FieldMap"]

#: The fields of a trajectory record that a map can fill (README "Bring your own data").
RECORD_FIELDS = (
    "problem_id", "sample_id", "model", "dataset", "problem_text", "answer", "difficulty",
    "domain", "steps",
)  # fmt: skip
_ALIASES = {"problem": "problem_text", "id": "problem_id", "gold_answer": "answer"}
#: Files a summary names before "and N more".
NAMED_FILES = 3


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

    def file_warning(self, file: str, pair: tuple[str, str]) -> LoadIssue:
        """The warning for a file none of whose records has the field ``pair`` maps
        (one of :meth:`unmatched`): said once for the file.

        >>> print(FieldMap.parse("answer=ans").file_warning("a.json", ("answer", "ans")))
        a.json: --map answer=ans: no record has the field 'ans'; answer read as if unmapped
        """
        return LoadIssue(file, "", _file_message(pair), "warning")

    def summarised(self, issues: Sequence[LoadIssue], files_read: Sequence[str]) -> list[LoadIssue]:
        """``issues`` with the :meth:`file_warning` of each file made one warning per pair,
        where the first of them was: in how many of ``files_read`` (the files whose records
        were read through the map) no record has the field, and the first
        :data:`NAMED_FILES` of those files, named from the folder the files read share. A
        field in no file at all (a misspelt column) says so; a load of one file keeps its
        file's warning. Every other issue is left as it is.

        >>> m = FieldMap.parse("answer=ans")
        >>> read = ["d/a.json", "d/b.json", "d/c.json", "d/e.json", "d/f.json"]
        >>> warned = [m.file_warning(f, ("answer", "ans")) for f in read[:4]]
        >>> for issue in m.summarised(warned, read):
        ...     print(issue)
        d: --map answer=ans: no record has the field 'ans' in 4 of the 5 files read
        (a.json, b.json, c.json and 1 more); answer read as if unmapped in those
        >>> for issue in m.summarised([*warned, m.file_warning("d/f.json", m.pairs[0])], read):
        ...     print(issue)
        d: --map answer=ans: no record has the field 'ans' in any of the 5 files read
        (a misspelt column?); answer read as if unmapped
        """
        lacking = self.lacking(issues)
        if not lacking:
            return list(issues)
        read = list(dict.fromkeys([*files_read, *(f for fs in lacking.values() for f in fs)]))
        messages = self._messages()
        out: list[LoadIssue] = []
        for issue in issues:
            pair = _pair_warned(issue, messages)
            if pair is None:
                out.append(issue)
            elif pair in lacking:  # the first file's warning: the pair's one warning
                out.append(_summary(pair, lacking.pop(pair), read))
        return out

    def lacking(self, issues: Iterable[LoadIssue]) -> dict[tuple[str, str], list[str]]:
        """Each pair a :meth:`file_warning` of ``issues`` names, with its files in order."""
        messages = self._messages()
        lacking: dict[tuple[str, str], dict[str, None]] = {}
        for issue in issues:
            pair = _pair_warned(issue, messages)
            if pair is not None:
                lacking.setdefault(pair, {})[issue.file] = None
        return {pair: list(files) for pair, files in lacking.items()}

    def warnings_in(self, issues: Iterable[LoadIssue]) -> list[LoadIssue]:
        """The warnings of ``issues`` about this map's fields: a file's
        (:meth:`file_warning`) or a load's (:meth:`summarised`); the app shows them under
        the map typed beside the uploader.

        >>> m = FieldMap.parse("answer=ans")
        >>> [str(i) for i in m.warnings_in([m.file_warning("a.json", m.pairs[0])])]
        ["a.json: --map answer=ans: no record has the field 'ans'; answer read as if unmapped"]
        """
        heads = tuple(f"--map {ours}={theirs}: " for ours, theirs in self.pairs)
        return [
            i
            for i in issues
            if i.severity == "warning" and i.location == "" and i.message.startswith(heads)
        ]

    def _messages(self) -> dict[str, tuple[str, str]]:
        return {_file_message(pair): pair for pair in self.pairs}


def _file_message(pair: tuple[str, str]) -> str:
    ours, theirs = pair
    return f"--map {ours}={theirs}: no record has the field {theirs!r}; {ours} read as if unmapped"


def _pair_warned(issue: LoadIssue, messages: dict[str, tuple[str, str]]) -> tuple[str, str] | None:
    """The pair whose :meth:`FieldMap.file_warning` ``issue`` is, or None."""
    if issue.severity != "warning" or issue.location != "":
        return None
    return messages.get(issue.message)


def _summary(pair: tuple[str, str], lacking: list[str], read: list[str]) -> LoadIssue:
    """The one warning of ``pair`` for its ``lacking`` files among those ``read``."""
    ours, theirs = pair
    if len(read) == 1:
        return LoadIssue(lacking[0], "", _file_message(pair), "warning")
    try:
        folder = os.path.commonpath(read)
    except ValueError:  # absolute and relative paths, or other drives: no folder shared
        folder = ""
    head = f"--map {ours}={theirs}: no record has the field {theirs!r}"
    if len(lacking) == len(read):  # in no file at all: a misspelt column, most likely
        message = (
            f"{head} in any of the {len(read)} files read (a misspelt column?); "
            f"{ours} read as if unmapped"
        )
        return LoadIssue(folder or lacking[0], "", message, "warning")
    names = [os.path.relpath(f, folder) if folder else f for f in lacking[:NAMED_FILES]]
    more = len(lacking) - len(names)
    listed = ", ".join(names) + (f" and {more} more" if more else "")
    message = (
        f"{head} in {len(lacking)} of the {len(read)} files read ({listed}); "
        f"{ours} read as if unmapped in those"
    )
    file = lacking[0] if len(lacking) == 1 or not folder else folder
    return LoadIssue(file, "", message, "warning")
