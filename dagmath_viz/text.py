"""Model text made safe for display: markdown with math kept, everything else inert.

Model text is untrusted: it may hold HTML, script, links or a stray ``$``. Streamlit's
markdown never renders raw HTML (``unsafe_allow_html`` stays off), but markdown syntax
itself (links, images, headings) and an unbalanced ``$`` (which turns the rest of the
paragraph into math) would still change the page, so both are neutralised here.

Bidirectional controls (right-to-left overrides, isolates and marks) and characters that
show as nothing (zero-width spaces and joiners, the word joiner, the byte-order mark, a soft
hyphen) are shown as visible tags such as ``[U+202E]``: an override reorders what follows
it, so a wrong answer ``\u202e24`` would otherwise *display* as "42", and ``4\u200b`` or
``good-model\u200b`` would display as ``4`` or ``good-model`` beside the real one.
"""

from __future__ import annotations

import re
import reprlib
from typing import Any

__all__ = [
    "count_formulas",
    "counted",
    "escape_markdown",
    "math_markdown",
    "normalise_statement",
    "plain",
    "HIDDEN_CHARACTERS",
    "reveal_bidi",
    "short_repr",
]

# Every character that changes display order: LRM/RLM, the ALM, embeddings and overrides
# (LRE RLE PDF LRO RLO) and isolates (LRI RLI FSI PDI); and every one that shows as nothing:
# the soft hyphen, the combining grapheme joiner, Hangul fillers, Khmer inherent vowels, the
# Mongolian vowel separator, zero-width space, non-joiner and joiner, the word joiner and
# invisible operators, the byte-order mark (zero-width no-break space).
_BIDI = HIDDEN_CHARACTERS = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u2069\u3164\ufeff\uffa0]"
)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` with thousands separators and ``noun``, or ``plural`` (default ``noun`` + s)
    unless ``n`` is 1: "1 file", "3,126 files", "1 trajectory"."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def reveal_bidi(text: str) -> str:
    """Each bidirectional control and invisible character replaced by a ``[U+XXXX]`` tag.

    >>> reveal_bidi("\u202e24")
    '[U+202E]24'
    >>> reveal_bidi("4\u200b")
    '4[U+200B]'
    """
    return _BIDI.sub(lambda m: f"[U+{ord(m.group()):04X}]", text)


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&=:^\"'$])")
# $$...$$ or $...$ with no newline-pair inside; \$ is a literal dollar.
_MATH = re.compile(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$|(?<!\\)\$(?!\s)([^$\n]+?)(?<![\s\\])\$", re.S)


def escape_markdown(text: str) -> str:
    """Backslash-escape every markdown control character (the text shows as typed).

    Bidirectional controls are shown as tags (:func:`reveal_bidi`).
    """
    return _MD_SPECIAL.sub(r"\\\1", reveal_bidi(text))


def math_markdown(text: str, max_chars: int = 5000) -> str:
    """Markdown showing ``text`` literally, except well-formed ``$...$`` math is rendered.

    A ``$`` that does not close a formula is escaped, so it cannot swallow the paragraph.
    Math segments only contain TeX, which KaTeX renders as math, never as HTML.

    >>> math_markdown("costs $5 and <b>x</b> is $x^2$")
    'costs \\\\$5 and \\\\<b\\\\>x\\\\</b\\\\> is $x^2$'
    """
    text = text if len(text) <= max_chars else text[:max_chars] + " …"
    text = reveal_bidi(text)  # before the math is found: no control survives in a formula
    out, last = [], 0
    for m in _MATH.finditer(text):
        out.append(escape_markdown(text[last : m.start()]))
        body = m.group(1) if m.group(1) is not None else m.group(2)
        if "\\href" in body or "\\url" in body or "<" in body:
            out.append(escape_markdown(m.group(0)))
        else:
            delim = "$$" if m.group(1) is not None else "$"
            out.append(f"{delim}{body}{delim}")
        last = m.end()
    out.append(escape_markdown(text[last:]))
    return "".join(out).replace("\n", "  \n")


def plain(text: str, max_chars: int = 600) -> str:
    """One line of plain text, shortened with an ellipsis; bidi controls shown as tags."""
    flat = " ".join(reveal_bidi(text).split())
    return flat if len(flat) <= max_chars else flat[: max_chars - 1] + "…"


_TEX_NOISE = re.compile(r"\\(left|right|displaystyle|,|;|!|quad|qquad)|[$\s{}]|\\")


def normalise_statement(text: str) -> str:
    """Content of a statement with whitespace, math delimiters and TeX spacing removed.

    Two steps with equal normalised statements say the same thing (a *restatement*).

    >>> normalise_statement(r"Let $x = \\left(1+2\\right)$.") == normalise_statement("let x=(1+2)")
    True
    """
    return _TEX_NOISE.sub("", text).lower().rstrip(".")


_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = 60
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 6


def short_repr(value: Any, limit: int = 100) -> str:
    """``repr(value)`` for a message about untrusted data: bounded in depth and length.

    A plain ``repr`` of a value read from a file can be megabytes long or nested deeper
    than the interpreter recurses (JSON allows 1,000 levels); this never raises.

    >>> short_repr([[[[[[1]]]]]]), short_repr("x" * 500, limit=12)
    ('[[[[...]]]]', "'xxxxxxxxxx…")
    """
    try:
        text = _REPR.repr(value)
    except Exception:  # noqa: BLE001 - e.g. an int too long to print; any value gets a name
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def count_formulas(text: str) -> int:
    """How many ``$...$`` / ``$$...$$`` formulas :func:`math_markdown` would typeset.

    >>> count_formulas("costs $5 and $x^2$ or $$y$$")
    2
    """
    return sum(1 for _ in _MATH.finditer(text))


def natural_key(text: str) -> tuple:
    """Sort key putting "problem 2" before "problem 10".

    A run of digits is compared by its length without leading zeros, then by its digits:
    the order of the numbers they write, with no ``int()`` (which refuses a model-supplied
    id of more than 4,300 digits).

    >>> sorted(["p10", "p2", "p" + "9" * 5000, "p02"], key=natural_key)[:3]
    ['p2', 'p02', 'p10']
    """
    parts = _DIGIT_RUNS.split(text)  # text, digits, text, digits, ..., text
    return tuple((len(t.lstrip("0")), t.lstrip("0")) if i % 2 else t for i, t in enumerate(parts))


_DIGIT_RUNS = re.compile(r"([0-9]+)")


def step_name(step_id: Any) -> str:
    """How messages name a step: ``step 4``, ``step '4'`` (a string id), bounded in length."""
    return f"step {short_repr(step_id)}"


# C0 and C1 control characters (tab and newline excepted), DEL, and the bidirectional
# controls that can make "24" display as "42": shown as visible escapes, never sent raw.
# C0 and C1 control characters (tab and newline excepted), DEL, the bidirectional
# controls that can make "24" display as "42", and the characters that show as nothing
# (zero-width space and joiners, word joiner, BOM, soft hyphen: "good-model\u200b" would
# print as "good-model"): shown as visible escapes, never sent raw.
_BIDI_AND_C1 = (
    r"\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e"
    r"\u2060-\u2064\u2066-\u2069\u3164\ufeff\uffa0"
)


_CONTROL = re.compile(rf"[\x00-\x08\x0b-\x1f{_BIDI_AND_C1}]")


_CONTROL_IN_LINE = re.compile(rf"[\x00-\x1f{_BIDI_AND_C1}]")


def printable(text: object, *, one_line: bool = False) -> str:
    """``text`` with control characters shown as ``\\x1b``-style escapes.

    Model names, file names and messages come from untrusted files: an escape sequence in
    them must not move the cursor, recolour the terminal or reorder what is shown.
    ``one_line`` also escapes tabs and newlines.
    """
    pattern = _CONTROL_IN_LINE if one_line else _CONTROL
    return pattern.sub(_escape, str(text))


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def json_printable(data: bytes) -> bytes:
    """JSON text with C1, DEL and bidi controls written as ``\\uXXXX`` (same JSON value)."""
    text = data.decode("utf-8")
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")
