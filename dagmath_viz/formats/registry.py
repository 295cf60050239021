"""The format registry: every file this package reads, and how.

A :class:`Format` owns its files end to end: how one is recognised (name, suffix, or a
look at the content), how it is read (a :class:`~dagmath_viz.formats.common.FileLoad`),
how its bytes become JSON documents so that one record can be read back alone
(:mod:`dagmath_viz.formats.sources`), and what its file name says (the context). A new
format is one module and one line of :data:`FORMATS`; uploads, the app's uploader,
discovery, the fast scorer and the ``source`` back-pointer all ask this module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from dagmath_viz.formats import (
    answer_keys,
    gold,
    hf_json,
    inspect_log,
    json_records,
    jsonl_gz,
    lm_eval_samples,
    ndjson,
    official,
    parquet,
    thought_anchors,
)
from dagmath_viz.formats.common import FileContext, FileLoad
from dagmath_viz.formats.fieldmap import FieldMap
from dagmath_viz.formats.records import LINES, Documents, plain_context, read_records
from dagmath_viz.jsonio import Document
from dagmath_viz.schema import LoadIssue

__all__ = [
    "DATA_SUFFIXES",
    "FORMATS",
    "DOCUMENT_PLACES",
    "ITEM_PLACE",
    "TRAJECTORY_FILES",
    "TRAJECTORY_SUFFIXES",
    "Format",
    "companion_data_file",
    "file_context",
    "documents_of",
    "format_of",
    "load_file",
    "map_warnings_summarised",
    "record_form",
]


@dataclass(frozen=True, slots=True)
class Format:
    """One kind of file: which files it claims and how one of them is read.

    ``kind`` is ``trajectories``, ``answers`` (an answer key, read by
    :func:`dagmath_viz.formats.answer_keys.load_answer_key`), ``companion`` (read as
    part of another file of the format, never on its own) or ``labels`` (a label file
    beside the data: never read as data). A format of JSON records gives
    ``documents`` (how its bytes become JSON documents), ``form`` (see
    :meth:`record_form`) and ``context``; any other gives ``read``. ``suffixes`` are the
    endings of its files (uploads keep only files that end so). A companion format whose
    data file's reader names a companion it refuses (a link, a FIFO: see
    :func:`~dagmath_viz.formats.common.companion_refusal`) gives ``data_file``: that data
    file's path, from the companion's path alone (nothing is opened); the folder walk then
    leaves naming such a companion to the reader, so it is named once.
    """

    name: str
    kind: str
    claims: Callable[[Path], bool]
    suffixes: tuple[str, ...]
    read: Callable[[Path], FileLoad] | None = None
    documents: Documents | None = None
    form: Callable[[Path], str] | None = None
    context: Callable[[Path], FileContext] = plain_context
    data_file: Callable[[Path], Path] | None = None

    def record_form(self, path: Path) -> str | None:
        """How ``path`` holds JSON records: :data:`~dagmath_viz.formats.records.DOCUMENT`
        (one JSON document, which the fast scorer may read), ``LINES`` (plain JSON Lines,
        which may be scored JSONL read a slice at a time), ``ROWS`` (another container,
        read through :attr:`documents`), or None (not a file of JSON records)."""
        return None if self.form is None else self.form(path)

    def load(self, path: Path, fields: FieldMap | None = None) -> FileLoad:
        """Every trajectory (and pre-scored record) in ``path``, with the issues met."""
        if self.read is not None:
            return self.read(path)
        if self.documents is None:
            raise TypeError(f"format {self.name} reads no file on its own")
        lines = self.record_form(path) == LINES
        return read_records(path, self.documents, self.context(path), lines=lines, fields=fields)


def _records(name: str, module: ModuleType, suffixes: tuple[str, ...]) -> Format:
    """A format of JSON records, from its module's ``claims``, ``documents`` and ``form``."""
    return Format(
        name,
        "trajectories",
        module.claims,
        suffixes,
        documents=module.documents,
        form=module.form,
        context=getattr(module, "context", plain_context),
    )


_JSON = (".json", ".jsonl")

#: Label files (dagmath_viz/store/labels.py) kept beside the data: the sidecar's name inside
#: a data folder, and the ending of one beside a data file. They are never read as data.
LABEL_SIDECAR = "dagmath-labels.jsonl"
LABEL_SUFFIX = ".labels.jsonl"


def _label_file(path: Path) -> bool:
    return path.name == LABEL_SIDECAR or path.name.endswith(LABEL_SUFFIX)


#: Every known format, most specific first; a new format is one line here.
FORMATS: tuple[Format, ...] = (
    Format("label file", "labels", _label_file, ()),  # never data: the walk skips it
    Format("answer key", "answers", answer_keys.claims, (".json", ".jsonl", ".csv")),
    Format(
        "thought-anchors",
        "trajectories",
        thought_anchors.claims,
        (".json",),
        read=thought_anchors.read,
    ),
    Format(
        "thought-anchors companion",
        "companion",
        thought_anchors.claims_companion,
        (".json",),
        data_file=thought_anchors.companion_data_file,
    ),
    _records("official", official, _JSON),  # <model>/<dataset>/problem_<id>_all_samples.json
    _records("gold", gold, _JSON),  # <dataset>/problem_<id>.json
    _records("inspect_ai log", inspect_log, (inspect_log.SUFFIX, ".json")),  # .eval zip, .json
    _records("lm-eval samples", lm_eval_samples, (".jsonl",)),  # samples_<task>_<date>.jsonl
    Format("lm-eval results", "companion", lm_eval_samples.claims_results, (".json",)),
    _records("JSON Lines in .json", hf_json, (".json",)),  # Dataset.to_json()
    _records("NDJSON", ndjson, (ndjson.SUFFIX,)),
    _records("JSON Lines, gzipped", jsonl_gz, (jsonl_gz.SUFFIX,)),
    _records("Parquet", parquet, (parquet.SUFFIX,)),
    _records("JSON records", json_records, json_records.SUFFIXES),  # a list, an object, JSONL
)
#: Every ending of a file some format reads (uploads and the app's uploader keep these).
DATA_SUFFIXES: tuple[str, ...] = tuple(dict.fromkeys(s for f in FORMATS for s in f.suffixes))
#: Every ending of a file of trajectories (what a data file given by name must end in).
TRAJECTORY_SUFFIXES: tuple[str, ...] = tuple(
    dict.fromkeys(s for f in FORMATS if f.kind == "trajectories" for s in f.suffixes)
)
#: The endings above as a message says them (".json, .jsonl ... or .parquet").
TRAJECTORY_FILES = f"{', '.join(TRAJECTORY_SUFFIXES[:-1])} or {TRAJECTORY_SUFFIXES[-1]}"
#: The words of a record's place in a file, as ``source`` writes them (``line 7, item 2``):
#: a document's (a line of JSON Lines, a row of a columnar file), then an item's in a list.
DOCUMENT_PLACES = ("line", "row")
ITEM_PLACE = "item"
_FALLBACK = FORMATS[-1]
#: What a data source is searched for, in words (an empty source says it): every format
#: of trajectories by name, and the rules of the folder walk (formats/discovery.py).
_LOOKS_LIKE = {
    "official": f"<model>/<dataset>/{official.file_name('<id>')}",
    "gold": "<dataset>/problem_<id>.json",
    "thought-anchors": "<model>/<kind>/problem_<id>/chunks_labeled.json",
    "inspect_ai log": f"<log>{inspect_log.SUFFIX} or an inspect .json log",
    "lm-eval samples": "<model>/samples_<task>_<date>.jsonl",
}
LOOKED_FOR = (
    f"{TRAJECTORY_FILES} files in any of these formats: "
    + ", ".join(
        f"{f.name} ({_LOOKS_LIKE[f.name]})" if f.name in _LOOKS_LIKE else f.name
        for f in FORMATS
        if f.kind == "trajectories"
    )
    + "; names starting with a dot are skipped, and links leading out of a folder are not"
    " followed"
)


def format_of(path: Path) -> Format | None:
    """The format that claims ``path``, or None (not a file this package reads)."""
    return next((f for f in FORMATS if f.claims(path)), None)


def companion_data_file(path: Path) -> Path | None:
    """The data file whose reader reads ``path`` as a companion and names it if it refuses
    it (:attr:`Format.data_file`), or None. Only the name is looked at, never the file (it
    may be a FIFO or a link leading anywhere)."""
    return next(
        (f.data_file(path) for f in FORMATS if f.data_file is not None and f.claims(path)),
        None,
    )


def load_file(path: Path, fields: FieldMap | None = None) -> FileLoad:
    """Every trajectory (and pre-scored record) in one file, with the issues met.

    The file is read as its format says; a file no format claims (or a companion named
    on its own) is read as JSON records.
    """
    path = Path(path)
    found = format_of(path)
    if found is None or (found.read is None and found.documents is None):
        found = _FALLBACK
    return found.load(path, fields)


def map_warnings_summarised(
    fields: FieldMap | None, files: Sequence[Path], issues: Sequence[LoadIssue]
) -> list[LoadIssue]:
    """The ``issues`` of a load of ``files`` read through ``fields``, its warnings said once
    per mapped field (:meth:`FieldMap.summarised`: in how many of the files read through
    the map no record has the field, and which). Those files are the ones of a format of
    JSON records that could be read: a file that cannot is one issue at ``file``
    (:func:`~dagmath_viz.formats.records.read_records`). Without a map, ``issues`` as given.
    """
    if fields is None or not fields.lacking(issues):
        return list(issues)
    unreadable = {i.file for i in issues if i.location == "file"}
    read = [str(f) for f in files if str(f) not in unreadable and record_form(f) is not None]
    return fields.summarised(issues, read)


def documents_of(path: Path, data: bytes) -> Iterable[Document]:
    """The JSON documents of ``path``'s bytes, as its format reads them (a file no format
    of records claims is read as JSON records, as :func:`load_file` does)."""
    found = format_of(path)
    read = found.documents if found is not None and found.documents is not None else None
    return (read or _FALLBACK.documents or _no_documents)(path, data)


def _no_documents(path: Path, data: bytes) -> Iterable[Document]:
    return ()


def record_form(path: Path) -> str | None:
    """How ``path`` holds JSON records (:meth:`Format.record_form`); None for any other."""
    found = format_of(path)
    return None if found is None else found.record_form(path)


def file_context(path: Path) -> FileContext:
    """What ``path``'s place tells about its records (model, dataset, problem id)."""
    found = format_of(path)
    return (found.context if found is not None else plain_context)(path)
