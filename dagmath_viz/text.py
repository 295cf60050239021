"""Model text made safe for display: markdown with math kept, everything else inert.

Model text is untrusted: it may hold HTML, script, links or a stray ``$``. Streamlit's
markdown never renders raw HTML (``unsafe_allow_html`` stays off), but markdown syntax
itself (links, images, headings) and an unbalanced ``$`` (which turns the rest of the
paragraph into math) would still change the page, so both are neutralised here.

Markdown emphasis (``**bold**``, ``*italic*``, ``__bold__``, ``_italic_``, as DeepSeek R1
writes ``**Final Answer**``) is matched outside the math only: :func:`math_markdown` keeps it
as emphasis (the text inside still escaped), :func:`rich_segments` hands it to views that
build their own markup, and :func:`strip_emphasis` and :func:`math_plain` drop the markers
where text is shown plain (box labels, tooltips, tables). An emphasis marker is inert
either way: it can neither link nor run.

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
    "answer_markdown",
    "count_formulas",
    "counted",
    "escape_markdown",
    "math_markdown",
    "math_plain",
    "math_segments",
    "normalise_statement",
    "plain",
    "HIDDEN_CHARACTERS",
    "reveal_bidi",
    "rich_segments",
    "short_repr",
    "strip_emphasis",
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
# The four delimiters models write: $$...$$ and \\[...\\] (display), $...$ and \\(...\\)
# (inline; R1-style models write the backslash forms). \\$ is a literal dollar; an inline
# dollar formula stays on one line and does not start or end with a space ("costs $5 and $6").
# Bodies are bounded, so an unclosed delimiter costs a bounded scan, not the rest of the text.
_MATH = re.compile(
    r"(?<!\\)\$\$(.{1,2000}?)(?<!\\)\$\$"
    r"|(?<!\\)\\\[(.{1,2000}?)\\\]"
    r"|(?<!\\)\\\((.{1,2000}?)\\\)"
    r"|(?<!\\)\$(?!\s)([^$\n]{1,2000}?)(?<![\s\\])\$",
    re.S,
)
#: Longest formula typeset; a longer one is shown as text (KaTeX time grows with it).
MAX_FORMULA = 2000


def escape_markdown(text: str) -> str:
    """Backslash-escape every markdown control character (the text shows as typed).

    Bidirectional controls are shown as tags (:func:`reveal_bidi`).
    """
    return _MD_SPECIAL.sub(r"\\\1", reveal_bidi(text))


def _formula(m: re.Match[str]) -> tuple[bool, str] | None:
    """(display, body) of a matched formula, or None when it must be shown as text: one
    that could link (``\\href``, ``\\url``), holds markup or a dollar, or is too long."""
    display = m.group(1) is not None or m.group(2) is not None
    body = next(g for g in m.groups() if g is not None)
    if "\\href" in body or "\\url" in body or "<" in body or "$" in body:
        return None
    if not body.strip() or len(body) > MAX_FORMULA:
        return None
    return display, " ".join(body.split())


def math_segments(text: str) -> list[tuple[int, str]]:
    """``text`` cut into plain pieces and formulas: ``(0, text)``, ``(1, inline TeX)``,
    ``(2, display TeX)``, in order; every delimiter style of :data:`_MATH` is recognised.
    A formula that must not be typeset (see :func:`_formula`) stays in a plain piece, as
    typed. Bidirectional controls are shown as tags first.

    >>> math_segments(r"so \\(x^2\\) and $5")
    [(0, 'so '), (1, 'x^2'), (0, ' and $5')]
    """
    text = reveal_bidi(text)  # before the math is found: no control survives in a formula
    out: list[tuple[int, str]] = []
    last = 0

    def put(kind: int, piece: str) -> None:
        if not piece:
            return
        if kind == 0 and out and out[-1][0] == 0:
            out[-1] = (0, out[-1][1] + piece)
        else:
            out.append((kind, piece))

    for m in _MATH.finditer(text):
        _bare_boxes(text[last : m.start()], put)
        found = _formula(m)
        if found is None:
            put(0, m.group(0))
        else:
            put(2 if found[0] else 1, found[1])
        last = m.end()
    _bare_boxes(text[last:], put)
    return out


_BARE_BOX = re.compile(r"(?<!\\)\\boxed\{")


def _bare_boxes(text: str, put: Any) -> None:
    """Put ``text``, a bare ``\\boxed{...}`` (R1 writes its answer so, outside any
    delimiter) as an inline formula when its braces balance and it may be typeset."""
    last = 0
    for m in _BARE_BOX.finditer(text):
        if m.start() < last:
            continue
        depth, end = 1, m.end()
        while end < len(text) and depth and end - m.start() <= MAX_FORMULA:
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
        body = text[m.start() : end]
        if depth or "$" in body or "<" in body or "\\href" in body or "\\url" in body:
            continue
        put(0, text[last : m.start()])
        put(1, body)
        last = end
    put(0, text[last:])


# -- markdown emphasis ------------------------------------------------------------------------

# An emphasis span, CommonMark's flanking rules made strict: an opening run of one to three
# ``*`` (or ``_``) not after a word character, ``*`` or backslash and not before a space;
# the same run closing it on the same line, not after a space, backslash, ``*`` or ``_`` and
# not before a word character or ``*``. So ``2*3*4``, ``x * y * z``, ``2**3`` and
# ``snake_case_name`` stay as they are. The body is bounded (a bounded scan per opener).
_EMPHASIS = re.compile(
    r"(?<![\w*\\])(\*{1,3}|_{1,3})(?![\s*_])([^\n]{1,300}?)(?<![\s\\*_])\1(?![\w*])"
)
# Marks put in place of the markers while the math is found (private-use characters: a
# model's own are replaced first); each stands for one opening or closing.
_MARKS = {
    "\ue010": (3, "strong"), "\ue011": (3, "em"), "\ue012": (4, "em"), "\ue013": (4, "strong"),
}  # fmt: skip
_OPENS = {1: "\ue011", 2: "\ue010", 3: "\ue010\ue011"}
_CLOSES = {1: "\ue012", 2: "\ue013", 3: "\ue012\ue013"}
_FILL = "\ue01f"  # a marker's other characters while the spans are found
_MARK_OR_FILL = re.compile("[\ue010-\ue013\ue01f]")
_MASK = "\ue01e"  # a character of math while the spans are found


def _math_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` holds math, as typed: every delimited formula (typeset or not) and
    every bare ``\\boxed{...}`` whose braces balance."""
    spans = [m.span() for m in _MATH.finditer(text)]
    for m in _BARE_BOX.finditer(text):
        depth, end = 1, m.end()
        while end < len(text) and depth and end - m.start() <= MAX_FORMULA:
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            end += 1
        spans.append((m.start(), end))
    return spans


def _marked(text: str) -> str:
    """``text`` with each emphasis marker outside the math replaced by its marks (and
    fill characters, dropped at the end): spans found on one line, then once more inside
    each span found (``**bold *and italic***`` nests properly, never crosses)."""
    text = _MARK_OR_FILL.sub("\ufffd", text)
    if "*" not in text and "_" not in text:
        return text
    masked = list(text)
    for start, end in _math_spans(text):
        masked[start:end] = _MASK * (end - start)
    chars = list(text)
    regions = [(0, len(text))]
    for _ in range(2):
        found = []
        searched = "".join(masked)
        for lo, hi in regions:
            for m in _EMPHASIS.finditer(searched, lo, hi):
                width = len(m.group(1))
                a, b = m.start(1), m.end(2)
                chars[a : a + width] = _OPENS[width] + _FILL * (width - len(_OPENS[width]))
                chars[b : b + width] = _CLOSES[width] + _FILL * (width - len(_CLOSES[width]))
                masked[a : a + width] = _FILL * width
                masked[b : b + width] = _FILL * width
                found.append((m.start(2), m.end(2)))
        regions = found
    return "".join(chars).replace(_FILL, "")


def strip_emphasis(text: str) -> str:
    """``text`` without its markdown emphasis markers; math, escaped ``\\*`` and every
    ``*`` or ``_`` that is not a marker (``2*3*4``, ``x_1``) left as typed.

    >>> strip_emphasis(r"**Final Answer**: $a*b*c$ and *so* 2*3*4, x_1_y")
    'Final Answer: $a*b*c$ and so 2*3*4, x_1_y'
    >>> strip_emphasis(r"**Answer: \\(x_1 = 2\\)**")
    'Answer: \\\\(x_1 = 2\\\\)'
    """
    return _MARK_OR_FILL.sub("", _marked(text))


def rich_segments(text: str) -> list[tuple[int, str]]:
    """:func:`math_segments` with markdown emphasis: besides ``(0, text)``, ``(1, inline
    TeX)`` and ``(2, display TeX)``, ``(3, "strong")`` or ``(3, "em")`` opens an emphasis
    and ``(4, "strong")`` or ``(4, "em")`` closes it. Openings and closings pair up and
    nest properly (an emphasis may hold formulas); plain pieces hold no marker.

    >>> rich_segments(r"**Answer: \\(x\\)** so")
    [(3, 'strong'), (0, 'Answer: '), (1, 'x'), (4, 'strong'), (0, ' so')]
    """
    out: list[tuple[int, str]] = []
    for kind, piece in math_segments(_marked(text)):
        if kind:
            out.append((kind, _MARK_OR_FILL.sub("", piece)))
            continue
        last = 0
        for i, ch in enumerate(piece):
            if ch in _MARKS:
                if i > last:
                    out.append((0, piece[last:i]))
                out.append(_MARKS[ch])
                last = i + 1
        if last < len(piece):
            out.append((0, piece[last:]))
    return out


def math_markdown(text: str, max_chars: int = 5000) -> str:
    """Markdown showing ``text`` literally, except well-formed math is rendered.

    All four delimiter styles are recognised (``$...$``, ``$$...$$``, ``\\(...\\)``,
    ``\\[...\\]``) and written as the dollar forms Streamlit's KaTeX typesets. A ``$`` that
    does not close a formula is escaped, so it cannot swallow the paragraph. Math segments
    only contain TeX, which KaTeX renders as math, never as HTML.

    >>> math_markdown("costs $5 and <b>x</b> is $x^2$")
    'costs \\\\$5 and \\\\<b\\\\>x\\\\</b\\\\> is $x^2$'
    >>> math_markdown("**Final Answer:** 2*3*4")
    '**Final Answer\\\\:** 2\\\\*3\\\\*4'
    """
    text = text if len(text) <= max_chars else text[:max_chars] + " …"
    out = []
    for kind, piece in rich_segments(text):
        if kind == 0:
            out.append(escape_markdown(piece).replace("\n", "  \n"))
        elif kind in (3, 4):
            out.append("**" if piece == "strong" else "*")
        else:
            delim = "$$" if kind == 2 else "$"
            out.append(f"{delim}{piece}{delim}")
    return "".join(out)


def answer_markdown(answer: Any, max_chars: int = 200) -> str:
    r"""An answer (``\boxed{}`` content: TeX without delimiters) as markdown, typeset when
    it is a formula that may be typeset, else shown as typed (markdown emphasis markers
    dropped: an answer taken from a final step may start "**Final Answer**"); ``—`` for none.

    >>> print(answer_markdown(r"-\dfrac{5}{12}"), answer_markdown("So it is 420."))
    $-\frac{5}{12}$ So it is 420\.
    >>> print(answer_markdown("**Final Answer** 4"))
    Final Answer 4
    """
    text = plain(strip_emphasis(str(answer)), max_chars) if answer not in (None, "") else ""
    if not text:
        return "—"
    if "\\" in text or "^" in text or "_" in text:
        segments = math_segments("\\(" + text + "\\)")
        if len(segments) == 1 and segments[0][0] == 1:
            # \dfrac would make the line as tall as a display formula
            return "$" + segments[0][1].replace("\\dfrac", "\\frac") + "$"
    return escape_markdown(text)


# TeX commands shown as one character in plain text (tooltips, graph labels).
_TEX_SYMBOLS = {
    "cdot": "·", "times": "×", "div": "÷", "pm": "±", "mp": "∓", "le": "≤", "leq": "≤",
    "ge": "≥", "geq": "≥", "neq": "≠", "ne": "≠", "approx": "≈", "equiv": "≡", "sim": "∼",
    "infty": "∞", "to": "→", "rightarrow": "→", "Rightarrow": "⇒", "implies": "⇒",
    "leftarrow": "←", "iff": "⇔", "in": "∈", "notin": "∉", "subset": "⊂", "subseteq": "⊆",
    "cup": "∪", "cap": "∩", "emptyset": "∅", "forall": "∀", "exists": "∃", "sum": "Σ",
    "prod": "Π", "int": "∫", "partial": "∂", "nabla": "∇", "circ": "∘", "angle": "∠",
    "degree": "°", "ldots": "…", "cdots": "⋯", "dots": "…", "lfloor": "⌊", "rfloor": "⌋",
    "lceil": "⌈", "rceil": "⌉", "mid": "|", "perp": "⊥", "parallel": "∥", "triangle": "△",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ",
    "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "varphi": "φ", "chi": "χ",
    "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ",
    "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Omega": "Ω", "quad": " ", "qquad": " ",
}  # fmt: skip
_SUPERSCRIPT = str.maketrans("0123456789+-n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻ⁿ")
_BRACED = r"\{([^{}]*)\}"
_TEX_RULES = (
    # x^2, x^{12} as superscripts; any other exponent in brackets (2^{4027} read 2⁴⁰²7)
    (
        re.compile(r"\^(?:\{([0-9+\-n]{1,3})\}|([0-9n]))"),
        lambda m: (m[1] or m[2]).translate(_SUPERSCRIPT),
    ),
    (re.compile(r"\^\{([^{}]*)\}"), lambda m: f"^({m[1]})"),
    (re.compile(r"\\[dt]?frac" + _BRACED + _BRACED), lambda m: f"{m[1]}/{m[2]}"),
    (re.compile(r"\\sqrt" + _BRACED), lambda m: f"√({m[1]})"),
    (
        re.compile(r"\\(?:boxed|text|textbf|mathrm|mathbf|operatorname|mbox)" + _BRACED),
        lambda m: m[1],
    ),
    (re.compile(r"\\([A-Za-z]+)"), lambda m: _TEX_SYMBOLS.get(m[1], m[1])),
)
#: How many of :data:`_TEX_RULES` (from the first) go round, innermost group first.
_NESTED_RULES = 5
_TEX_DROP = re.compile(r"\\(?:left|right|big+|Big+|displaystyle)\b|\\[,;!: ]")


#: Escaped braces (``\{0,1\}``, a set) kept as braces: held as private-use characters while
#: the grouping braces are dropped, then put back.
_OPEN, _CLOSE = "\ue000", "\ue001"


def _tex_plain(body: str) -> str:
    body = body.replace("\\\\", " ")  # \\, a line break in an aligned block
    body = body.replace("\\{", _OPEN).replace("\\}", _CLOSE)
    body = _TEX_DROP.sub("", body)
    for _ in range(3):  # nested \frac{\sqrt{x}}{2^{10}}: inner first, a few levels
        for pattern, repl in _TEX_RULES[:_NESTED_RULES]:
            body = pattern.sub(repl, body)
    for pattern, repl in _TEX_RULES[_NESTED_RULES:]:
        body = pattern.sub(repl, body)
    return body.replace("{", "").replace("}", "").replace(_OPEN, "{").replace(_CLOSE, "}")


def math_plain(text: str, max_chars: int = 600) -> str:
    """One line of plain text with its formulas written as readable text, not TeX source:
    markdown emphasis markers dropped (:func:`strip_emphasis`), delimiters dropped, common
    commands as their symbols (``\\frac{a}{b}`` as ``a/b``,
    ``\\le`` as ``≤``, ``x^2`` as ``x²``). For places that cannot typeset (tooltips, SVG
    labels); the step list typesets properly.

    >>> math_plain(r"so \\(\\frac{1}{2} \\le x^2\\), costs $5")
    'so 1/2 ≤ x², costs $5'
    >>> math_plain(r"the set $\\{0,1\\}^{3}$ and \\(\\left\\{ x \\right\\}\\)")
    'the set {0,1}³ and { x }'
    >>> math_plain(r"we have: \\[ 2^{4027} \\times 2013!"), math_plain(r"2^{n} \\] so \\[ x \\le")
    ('we have: 2^(4027) × 2013!', '2ⁿ so x ≤')
    """
    text = strip_emphasis(text)
    pieces = [_dangling(p) if k == 0 else _tex_plain(p) for k, p in math_segments(text)]
    return plain("".join(pieces), max_chars)


#: TeX commands that mark a piece with no delimiter as the middle of a formula.
_TEX_COMMAND = re.compile(
    r"\\(?:[dt]?frac|sqrt|times|cdot|div|pm|le|leq|ge|geq|neq|binom)"
    r"(?![A-Za-z])"
)
_OPENER = re.compile(r"\\[\[(]")
_CLOSER = re.compile(r"\\[\])]")


def _dangling(piece: str) -> str:
    """A plain piece holding part of a formula read as text too: Thought Anchors' chunks
    are sentences, cut inside ``\\[ ... \\]`` as often as not, so a chunk may begin
    before a closer with no opener (the formula began in an earlier chunk) or end after an
    opener with no closer (it runs on into the next). Only what the lone delimiter marks as
    TeX is rewritten; a whole formula left as typed (:func:`_formula`) stays as it is."""
    head = ""
    opened, closed = _OPENER.search(piece), _CLOSER.search(piece)
    if not opened and not closed and "$" not in piece and _TEX_COMMAND.search(piece):
        return _tex_plain(piece)  # a chunk wholly inside a formula: "= 2014 \\times 2013!"
    if closed and not (opened and opened.start() < closed.start()):
        head, piece = _tex_plain(piece[: closed.start()]), piece[closed.end() :]
    opens, closes = list(_OPENER.finditer(piece)), list(_CLOSER.finditer(piece))
    if opens and not (closes and closes[-1].start() > opens[-1].start()):
        last = opens[-1]
        piece = piece[: last.start()] + _tex_plain(piece[last.end() :])
    return head + piece


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
    """How many formulas (any delimiter style) :func:`math_markdown` would typeset.

    >>> count_formulas(r"costs $5 and $x^2$ or $$y$$ or \\(z\\)")
    3
    """
    return sum(1 for kind, _ in math_segments(text) if kind)


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
