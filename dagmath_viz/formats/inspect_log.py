"""inspect_ai evaluation logs: ``.eval`` (a zip of JSON members) and the ``.json`` log.

Read by the documented log layout, without inspect_ai: a ``.json`` log is one object with
``eval`` (the eval spec: task, model, config) and ``samples``; an ``.eval`` log is a zip
holding ``header.json`` (the same spec; ``_journal/start.json`` while the run is still
going) and one ``samples/<id>_epoch_<n>.json`` member per sample and epoch. inspect_ai
(0.3.2xx) compresses the members with zstd (zip method 93), which Python's ``zipfile``
cannot open before 3.14: such a member is inflated with pyarrow's zstd codec (pyarrow is
a dependency already), within :data:`MAX_MEMBER_BYTES` and :data:`MAX_INFLATED_BYTES`.

Each sample of each epoch is one record (``row N``, N counting the samples in the log
from 1): the sample's ``id`` is the problem id, its ``epoch`` less one the sample id (so
epochs count from 0 as ``generate``'s samples do), the eval spec's ``model`` the model
and its ``task`` the dataset, the sample's ``input`` the problem, its ``target`` the
reference answer (the first, when a list gives several) and the last assistant message
the reply, read by :func:`dagmath_viz.formats.replies.solution_steps` exactly as
``dagmath generate`` reads a reply. A reply without DAG-MATH steps is kept as free text
(``solution``, the field ``dagmath depends`` reads a chain from): the file then says once
that its replies are free-form, and ``dagmath depends`` reads the log as it stands. A
reasoning model's thinking, which inspect_ai logs as a ``reasoning`` part of the message
apart from its ``text``, is that free text's chain of thought: the solution is
``<think>THINKING</think>`` then the text, as an R1-style model writes it, so ``depends``
splits the thinking and finds the answer after it (redacted reasoning, which holds no
text, is left out).
"""

from __future__ import annotations

import re
import struct
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from dagmath_viz import jsonio
from dagmath_viz.formats.common import head_bytes
from dagmath_viz.formats.records import ROWS
from dagmath_viz.formats.replies import solution_steps
from dagmath_viz.schema import InputError
from dagmath_viz.text import short_repr

__all__ = [
    "MAX_INFLATED_BYTES",
    "MAX_MEMBERS",
    "MAX_MEMBER_BYTES",
    "SUFFIX",
    "claims",
    "documents",
    "form",
]

SUFFIX = ".eval"
#: Members an ``.eval`` zip may hold (one per sample and epoch, a few more).
MAX_MEMBERS = 200_000
#: The most one member may inflate to, and all of them together.
MAX_MEMBER_BYTES = 256 * 2**20
MAX_INFLATED_BYTES = 4 * 2**30
#: Bytes of a ``.json`` file looked at to tell an inspect log (its spec comes first).
SNIFF_BYTES = 64 * 2**10
_ZSTD = 93
_HEADERS = ("header.json", "_journal/start.json")
_SAMPLE = re.compile(r"^samples/.+_epoch_[0-9]+\.json$")
_SPEC = re.compile(rb'"eval"\s*:\s*\{\s*"(?:eval_id|run_id|created|task)"')
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")  # a zip member's local file header


def form(path: Path) -> str:
    return ROWS


def claims(path: Path) -> bool:
    """An ``.eval`` file, or a ``.json`` object whose head is an inspect eval spec."""
    name = path.name.lower()
    if name.endswith(SUFFIX):
        return True
    if not name.endswith(".json"):
        return False
    head = head_bytes(path, SNIFF_BYTES)
    return head is not None and head.startswith(b"{") and _SPEC.search(head) is not None


def documents(path: Path, data: bytes) -> Iterable[jsonio.Document]:
    """One record per sample and epoch (``row N``); a sample that cannot be read is a
    document holding its error, named by the sample.

    Raises:
        InputError: not a readable log (not a zip, no eval spec, not JSON).
    """
    if path.name.lower().endswith(SUFFIX):
        records = _eval_zip(data)
    else:
        spec, samples = _json_log(data)
        records = [_record(sample, spec) for sample in samples]
    return [jsonio.Document(f"row {i}", record) for i, record in enumerate(records, start=1)]


def _json_log(data: bytes) -> tuple[dict, list]:
    log = jsonio.parse(data)
    if not isinstance(log, dict) or not isinstance(log.get("eval"), dict):
        raise InputError("not an inspect_ai log: no 'eval' spec at the top level")
    samples = log.get("samples")
    if samples is None:
        return log["eval"], []  # a header-only log (--no-log-samples): nothing to read
    if not isinstance(samples, list):
        raise InputError(f"inspect_ai log: 'samples' is {type(samples).__name__}, expected a list")
    return log["eval"], samples


def _eval_zip(data: bytes) -> list:
    """The records of an ``.eval`` zip's samples, in the zip's order (errors in place)."""
    import io

    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise InputError(f"not a readable .eval log (zip: {exc})") from None
    if len(members) > MAX_MEMBERS:
        raise InputError(f".eval log of {len(members)} members; at most {MAX_MEMBERS} are read")
    budget = [MAX_INFLATED_BYTES]
    by_name = {m.filename: m for m in members}
    header = next((by_name[n] for n in _HEADERS if n in by_name), None)
    if header is None:
        raise InputError("not an inspect_ai .eval log: no header.json or _journal/start.json")
    try:
        spec = _member_json(archive, data, header, budget)
    except InputError as exc:
        raise InputError(f"member {header.filename}: {exc}") from None
    if isinstance(spec, dict) and isinstance(spec.get("eval"), dict):
        spec = spec["eval"]
    if not isinstance(spec, dict):
        raise InputError(f"{header.filename}: no eval spec")
    samples: list = []
    for member in members:
        if not _SAMPLE.match(member.filename):
            continue
        try:
            # made a record at once: a sample's events (often most of its bytes) go now
            samples.append(_record(_member_json(archive, data, member, budget), spec))
        except InputError as exc:
            if budget[0] < 0:
                raise
            samples.append(InputError(f"member {short_repr(member.filename, 200)}: {exc}"))
    return samples


def _member_json(
    archive: zipfile.ZipFile, data: bytes, member: zipfile.ZipInfo, budget: list
) -> Any:
    """One member's JSON, inflated within the caps."""
    if member.file_size > MAX_MEMBER_BYTES:
        raise InputError(f"inflates to {member.file_size} bytes; at most {MAX_MEMBER_BYTES}")
    budget[0] -= member.file_size
    if budget[0] < 0:
        raise InputError(f"the members inflate to over {MAX_INFLATED_BYTES} bytes")
    raw = (
        _zstd_member(data, member)
        if member.compress_type == _ZSTD
        else _plain_member(archive, member)
    )
    if zlib.crc32(raw) != member.CRC:
        raise InputError("damaged (CRC mismatch)")
    return jsonio.parse(raw)


def _plain_member(archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> bytes:
    try:
        with archive.open(member) as handle:
            raw = handle.read(MAX_MEMBER_BYTES + 1)
    except (
        zipfile.BadZipFile,
        zlib.error,
        OSError,
        EOFError,
        NotImplementedError,
        RuntimeError,
    ) as exc:
        raise InputError(f"cannot inflate ({exc})") from None
    if len(raw) > MAX_MEMBER_BYTES:
        raise InputError(f"inflates past {MAX_MEMBER_BYTES} bytes")
    return raw


def _zstd_member(data: bytes, member: zipfile.ZipInfo) -> bytes:
    """A zstd member (method 93): its compressed bytes found after its local header and
    inflated by pyarrow to exactly the size the zip declares (a lie fails, never grows)."""
    import pyarrow as pa

    start = member.header_offset
    head = data[start : start + _LOCAL_HEADER.size]
    if len(head) < _LOCAL_HEADER.size or head[:4] != b"PK\x03\x04":
        raise InputError("no local header (truncated zip)")
    fields = _LOCAL_HEADER.unpack(head)
    begin = start + _LOCAL_HEADER.size + fields[-2] + fields[-1]
    packed = data[begin : begin + member.compress_size]
    if len(packed) < member.compress_size:
        raise InputError("cut short (truncated zip)")
    if member.file_size == 0:
        return b""
    try:
        return pa.Codec("zstd").decompress(packed, decompressed_size=member.file_size, asbytes=True)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(f"not readable zstd data ({exc})") from None


# --------------------------------------------------------------------------- one sample


def _record(sample: Any, spec: dict) -> Any:
    """One sample of the log as a trajectory record in our spelling (or why it is none)."""
    if not isinstance(sample, dict):
        return InputError(f"sample is {type(sample).__name__}, expected an object")
    name = f"sample {short_repr(sample.get('id'), 80)} epoch {short_repr(sample.get('epoch'), 20)}"
    reply, thinking = _last_reply(sample)
    if reply is None and thinking is None:
        error = sample.get("error")
        if isinstance(error, dict):
            error = _text(error.get("message"))
        why = f" (the sample failed: {short_repr(error, 200)})" if error else ""
        return InputError(f"{name}: no assistant reply{why}")
    epoch = sample.get("epoch")
    record: dict[str, Any] = {
        "problem_id": _scalar(sample.get("id")),
        "sample_id": epoch - 1 if type(epoch) is int else epoch,
        "model": spec.get("model"),
        "dataset": spec.get("task"),
        "problem_text": _input_text(sample.get("input")),
        "answer": _target(sample.get("target")),
    }
    steps = None if reply is None else solution_steps(reply)
    if steps is not None:
        record["steps"] = steps
    elif thinking is not None:  # free-form, the model's thinking apart: R1's own spelling
        record["solution"] = f"<think>{thinking}</think>\n{reply or ''}".rstrip()
    else:
        record["solution"] = reply  # free-form: said once for the file; depends reads it
    return record


def _scalar(value: Any) -> Any:
    return value if isinstance(value, str | int | float) and not isinstance(value, bool) else None


def _text(content: Any) -> str | None:
    """A message's text: a string, or the ``text`` parts of a content list (reasoning and
    images left out)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        texts = [p for p in parts if isinstance(p, str)]
        return "\n".join(texts) if texts else None
    return None


def _messages(value: Any) -> Iterator[dict]:
    return (m for m in value if isinstance(m, dict)) if isinstance(value, list) else iter(())


def _reasoning(content: Any) -> str | None:
    """The ``reasoning`` parts of a content list that are not redacted, joined."""
    if not isinstance(content, list):
        return None
    parts = [
        p.get("reasoning")
        for p in content
        if isinstance(p, dict) and p.get("type") == "reasoning" and not p.get("redacted")
    ]
    texts = [p for p in parts if isinstance(p, str) and p.strip()]
    return "\n\n".join(texts) if texts else None


def _last_reply(sample: dict) -> tuple[str | None, str | None]:
    """(text, thinking) of the last assistant message of the sample's conversation (else
    of its output)."""
    replies = [m for m in _messages(sample.get("messages")) if m.get("role") == "assistant"]
    message: Any = replies[-1] if replies else None
    if message is None:
        output = sample.get("output")
        choices = output.get("choices") if isinstance(output, dict) else None
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message")
    if not isinstance(message, dict):
        return None, None
    content = message.get("content")
    return _text(content), _reasoning(content)


def _input_text(value: Any) -> str | None:
    """The problem: the input text, or its first user message."""
    if isinstance(value, str):
        return value
    users = [m for m in _messages(value) if m.get("role") == "user"]
    return _text(users[0].get("content")) if users else None


def _target(value: Any) -> Any:
    """The reference: the target, or the first of a list of targets."""
    if isinstance(value, list):
        return value[0] if value and isinstance(value[0], str) else None
    return value if isinstance(value, str) else None
