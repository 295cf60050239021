"""Exact comparison of common answer forms without SymPy.

math-verify parses both answers into SymPy and compares them; that costs ~6 ms a pair plus
a second or two to import SymPy. Most answers in math data sets are built from a few
pieces: integers, decimals, ``\\frac``/``\\dfrac``/``a/b``, ``\\sqrt``, ``\\pi``, one
variable (:data:`VARIABLES`), sums, products, small integer powers. This module reads
that subset exactly into a canonical value (a sum of ``c * sqrt(r) * pi^k * x^d`` with
rational ``c`` and square-free ``r``; such terms are linearly independent over the
rationals, so two values are equal exactly when their canonical forms are) and compares.
Around such values it reads MATH's other answer forms as math-verify does (issue 32):
tuples and intervals (ends ``\\infty`` too) and their unions, sets and lists (no order, no
repeats), ``pmatrix``/``bmatrix`` matrices, ``\\text{}`` words (no case), multiple choice,
``x < 3``, mixed numbers (``2\\frac{1}{4}`` is 9/4), and it drops what math-verify drops
(``^\\circ``, ``\\$``, a trailing ``\\text{ unit}``, ``x =`` before a value).

The reader is deliberately strict: anything outside the subset, or written in a way whose
reading could be ambiguous (``\\sqrt23``, ``2 3``, ``1,234``), is *not read* and the pair goes
to math-verify. A verdict is given only where it is certain to match math-verify's
(``tests/test_exactforms.py`` checks thousands of generated spellings against math-verify):
equal values are equivalent; values whose numbers differ by more than a relative 1e-5 are
different; anything closer is left to math-verify's rounding.

It runs in the caller's process, before math-verify's worker and outside its deadline, on
model text: so every reading is bounded. A text longer than :data:`MAX_CHARS`, nested deeper
than :data:`MAX_DEPTH`, or whose value grows past the coefficient, radicand or exponent
limits (the power tower ``{{2^8}^8}^8``, ``\\pi`` to the 4096th) is not read and goes to the
worker, which has the deadline; any arithmetic error on the way is a "not read" too, never
an exception to the caller.

The module reads top down, each function before the ones it calls: after the constants
(the value type, the limits of the subset, the tokens), comparing two answers
(:func:`exact_verdict`, then kind by kind), reading one (:func:`read_value`: the wrappers
dropped, the forms told apart, its tokens, its recursive-descent parser), the arithmetic on
canonical values, and last the exception for a text outside the subset.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

__all__ = ["exact_verdict", "read_value"]

# A value: {(r, k, d): c} meaning sum of c * sqrt(r) * pi**k * x**d, c != 0.
Key = tuple[int, int, int]
Value = dict[Key, Fraction]

_MAX_INT = 10**12  # beyond this, leave it to math-verify (float parsing, huge powers)
_MAX_INT_DIGITS = len(str(_MAX_INT))  # checked before int(): 5,000 digits would raise
_MAX_TERMS = 64
_MAX_POWER = 8
_MAX_RADICAND = 10**6
#: a longer answer is left to math-verify (the reading is linear, but stays small)
MAX_CHARS = 2000
#: brackets, braces and fractions nested deeper are left to math-verify (recursion depth)
MAX_DEPTH = 32
#: coefficients (numerator and denominator), products of radicands, and the powers of pi and
#: x stay below these: a value beyond them is left to math-verify (huge integers, float overflow)
_MAX_COEFFICIENT_BITS = 256
_MAX_PRODUCT_RADICAND = 10**12
_MAX_EXPONENT = 32

#: the letters read as the one variable of an expression: not ``e``, ``i`` (constants to
#: math-verify), ``f``, ``g``, ``h`` (``f(x)`` is an application), ``c``, ``m``, ``s``,
#: ``t`` (math-verify reads ``3t+8`` and ``8+3t`` as different: units), nor ``y``, ``z``
#: (kept for expressions in two variables, which are math-verify's)
VARIABLES = "abknpqruvwx"

_TOKEN = re.compile(
    r"\s*(?:"
    r"(?P<num>\d+(?:\.\d+)?)"
    r"|(?P<cmd>\\(?:dfrac|tfrac|frac|sqrt|pi|infty|cdot|times|left|right)(?![a-zA-Z]))"
    r"|(?P<sym>[-+*/^(){},\[\]]|\\[{}])"
    rf"|(?P<var>[{VARIABLES}])(?![a-zA-Z])"
    r")"
)


#: a whole answer that is one number with thousands separators, like ``-1,234,567.5``
_THOUSANDS = re.compile(r"-?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?")


#: an unboxed final step that states its answer in the usual words
#: (math-verify reads rational numbers out of "The answer is 3/7." but not expressions such as
#: 2\sqrt{3}, nor anything out of "The final answer is $...$": those are left to it)
_SENTENCE = re.compile(r"\s*The answer is\s+(?P<answer>[^$]*?)\s*\.?\s*")


# --------------------------------------------------------------------------- comparing two answers


def exact_verdict(reference: str, prediction: str) -> bool | None:
    """True/False when the exact reading decides the pair as math-verify would, else None.

    >>> exact_verdict(r"2\\sqrt{3}", r"\\sqrt{12}")
    True
    >>> exact_verdict(r"\\frac{3\\pi}{4}", r"3\\pi/4")
    True
    >>> exact_verdict("(2, 3)", "(3, 2)")
    False
    >>> exact_verdict("x^2-49", "(x-7)(x+7)")
    True
    >>> exact_verdict(r"45^\\circ", "45"), exact_verdict(r"\\text{(C)}", "C")
    (True, True)
    >>> exact_verdict("5 apples", "5") is None
    True
    """
    a = _read(reference)
    if a is None:
        return None
    b = _read(prediction)
    if b is None:
        return None
    try:
        return _compare(a, b)
    except (ArithmeticError, ValueError):  # bounded values make these unexpected: not read
        return None


def _compare(a: _Reading, b: _Reading) -> bool | None:
    """The verdict on two read answers (see :func:`exact_verdict`)."""
    if (a.eq and b.eq and a.eq != b.eq) or (a.var and b.var and a.var != b.var):
        return None  # "x=3" against "y=3", "2n+1" against "2x+1": math-verify's
    kinds = {a.kind, b.kind}
    if a.kind == b.kind and a.kind in _SAME_KIND:
        return _SAME_KIND[a.kind](a, b)
    if kinds == {"text", "word"}:  # \text{Monday} against a bare Monday
        text, word = (a, b) if a.kind == "text" else (b, a)
        if text.tag == word.tag:
            return True
        return False if sorted(text.tag) != sorted(word.tag) else None
    if kinds == {"choice", "letter"}:  # \text{(A)} against a bare A
        return a.tag == b.tag
    if kinds == {"value", "tuple"} and "()" in (a.tag, b.tag):
        return False  # a pair is no number
    if "value" in kinds and len(kinds) == 2:
        other, value = (a, b) if b.kind == "value" else (b, a)
        if value.var is None and _NOT_A_NUMBER.get(other.kind, lambda r: False)(other):
            return False  # a word, a letter, an interval or a set of two is no number
    if "matrix" in kinds and kinds <= {"matrix", "value", "tuple"}:
        other = b if a.kind == "matrix" else a
        if other.kind == "value" or other.tag == "()":
            return False  # a matrix is neither a number nor a tuple to math-verify
    return None


#: readings that are never one number to math-verify (a set of one is: {3} is 3)
_NOT_A_NUMBER = {
    "text": lambda r: True,
    "choice": lambda r: True,
    "union": lambda r: True,
    "tuple": lambda r: True,  # intervals; a pair is no number either
    "set": lambda r: len({frozenset(v.items()) for v in r.items}) > 1,
}


def _same_values(a: _Reading, b: _Reading) -> bool | None:
    return _items(a.items, a.exact, b.items, b.exact)


def _same_tuples(a: _Reading, b: _Reading) -> bool | None:
    if a.tag != b.tag:  # (1, 2] against [1, 2]: another interval
        intervals = len(a.items) == len(b.items) == 2 and not (_empty(a) or _empty(b))
        return False if intervals else None  # (3, 1) and [3, 1] are one pair to math-verify
    if len(a.items) != len(b.items):
        return False if a.tag == "()" else None
    if a.tag != "()" and (_empty(a) or _empty(b)):
        return None  # [5, 1) is the empty set: math-verify's
    return _items(a.items, a.exact, b.items, b.exact)


def _same_sets(a: _Reading, b: _Reading) -> bool | None:
    sa, sb = ({frozenset(v.items()) for v in r.items} for r in (a, b))
    if sa == sb:
        return True  # math-verify's sets drop repeats: {1, 2, 2} is {1, 2}
    return False if a.exact and b.exact and not _any_inf(a, b) else None


def _same_matrices(a: _Reading, b: _Reading) -> bool | None:
    if a.tag != b.tag:
        return False  # another shape: a column against a row, 2 rows against 3
    return _items(a.items, a.exact, b.items, b.exact)


def _same_unions(a: _Reading, b: _Reading) -> bool | None:
    if Counter(_union_parts(a)) == Counter(_union_parts(b)):
        return True  # the same intervals in another order
    return None  # (1,3)\cup(2,4) is (1,4): math-verify's


def _same_words(a: _Reading, b: _Reading) -> bool | None:
    return a.tag == b.tag  # math-verify compares \text{} words without case or spaces


def _same_inequalities(a: _Reading, b: _Reading) -> bool | None:
    if a.tag != b.tag:
        return False  # x < 3 against x <= 3, x > 3: another set of x
    return _items(a.items, a.exact, b.items, b.exact)


_SAME_KIND = {
    "value": _same_values,
    "tuple": _same_tuples,
    "set": _same_sets,
    "matrix": _same_matrices,
    "union": _same_unions,
    "text": _same_words,
    "choice": _same_words,
    "inequality": _same_inequalities,
}


def _items(va: tuple, exact_a: bool, vb: tuple, exact_b: bool) -> bool | None:
    """Item by item: equal, certainly different, or None (close decimals)."""
    if len(va) != len(vb):
        return False
    if va == vb:
        return True
    unequal = [(x, y) for x, y in zip(va, vb, strict=True) if x != y]
    if any(_INF in x or _INF in y for x, y in unequal):
        return False  # an infinite end against another end
    if exact_a and exact_b and all(_rational(x) for x in (*va, *vb)):
        return False  # exact rationals (no decimal written): math-verify compares them exactly
    if all(_far(x, y) for x, y in unequal):
        return False
    return None


def _empty(r: _Reading) -> bool:
    """Might ``r``, read as an interval, be empty (``[5, 1)``, or ends not ordered here)?"""
    lo, hi = r.items
    if _INF in lo or _INF in hi:
        return (_INF in lo and lo[_INF] > 0) or (_INF in hi and hi[_INF] < 0)
    if _rational(lo) and _rational(hi):
        return _number(lo) >= _number(hi)
    return True  # radicals, pi, x: left to math-verify


def _number(v: Value) -> Fraction:
    return v.get((1, 0, 0), Fraction(0))


def _any_inf(a: _Reading, b: _Reading) -> bool:
    return any(_INF in v for v in (*a.items, *b.items))


def _union_parts(r: _Reading) -> list[tuple]:
    brackets = r.tag.split("|")
    return [
        (brackets[i], frozenset(r.items[2 * i].items()), frozenset(r.items[2 * i + 1].items()))
        for i in range(len(brackets))
    ]


def _far(a: Value, b: Value) -> bool:
    """Are the two values far apart (relative 1e-5) at a few points of x?"""
    if any(d for (_, _, d) in (*a, *b)):
        # different polynomials in x: compare at points where they cannot all agree by
        # accident (n + 4 and 4n + 1 agree at 1)
        points = (0.5, 1.7, 2.9, -1.3)
    else:
        points = (1.0,)
    for x in points:
        va, vb = _numeric(a, x), _numeric(b, x)
        if abs(va - vb) <= 1e-5 * max(1.0, abs(va), abs(vb)):
            return False
    return True


def _numeric(v: Value, x: float) -> float:
    return sum(float(c) * math.sqrt(r) * math.pi**k * x**d for (r, k, d), c in v.items())


# --------------------------------------------------------------------------- reading one answer


@dataclass(frozen=True, slots=True)
class _Reading:
    """One answer read: its kind, a tag (brackets, shape, word, relation), its values.

    ``kind`` is value, tuple (``tag`` its brackets: ``()``, ``[]``, ``(]``, ``[)``), set,
    matrix (``tag`` ``RxC``), union (``tag`` the brackets of its intervals), text or word
    (``tag`` the word in lower case), choice or letter (``tag`` the letter), inequality
    (``tag`` ``<``, ``<=``, ``>``, ``>=``; its one value the bound of ``var``). ``var`` is
    the expression's one variable, ``eq`` the letter of ``eq = ...`` when one was written.
    """

    kind: str
    tag: str
    items: tuple[Value, ...]
    exact: bool
    var: str | None = None
    eq: str | None = None


def read_value(text: str) -> tuple[str, tuple[Value, ...], bool] | None:
    """Read ``text`` into (shape, values, exact), or None when outside the subset.

    ``shape`` is ``"value"`` for one value and ``"()"`` for a parenthesised tuple of two or
    more values (other readings name their kind: ``"[)"``, ``"set"``, ``"matrix2x1"``,
    ``"text:monday"``, ...; a variable other than ``x`` is added as ``"@n"``); ``exact`` is
    False when a decimal is written (math-verify rounds those). The result is cached and
    shared: do not modify it.

    >>> read_value(r"2\\sqrt{3}")[1] == read_value(r"\\sqrt{12}")[1]
    True
    >>> read_value("the answer") is None
    True
    """
    r = _read(text)
    if r is None:
        return None
    shape = {"value": "value", "tuple": r.tag}.get(r.kind, f"{r.kind}:{r.tag}")
    if r.var not in (None, "x"):
        shape += f"@{r.var}"
    return shape, r.items, r.exact


@lru_cache(maxsize=65536)  # each distinct string is read once: answers repeat a lot
def _read(text: str) -> _Reading | None:
    if len(text) > MAX_CHARS:
        return None
    sentence = _SENTENCE.fullmatch(text)
    if sentence is not None:
        # math-verify reads a rational number out of such a sentence, nothing else, and
        # not one written with \dfrac or \tfrac
        if "frac" in sentence["answer"].replace("\\frac", ""):
            return None
        r = _read_plain(sentence["answer"])
        ok = r is not None and r.kind == "value" and r.var is None and _rational(r.items[0])
        return r if ok else None
    try:
        return _read_form(_unwrap(text.strip()))
    except (_Unread, ArithmeticError, ValueError, RecursionError):
        return None  # ArithmeticError: division by zero, overflow; RecursionError: a guard


def _unwrap(text: str) -> str:
    """``text`` without what math-verify ignores: ``\\$``, a trailing ``\\text{ unit}``, degrees."""
    for pattern in (_DOLLAR, _UNIT, _DEGREES):
        rest = pattern.sub("", text).strip()
        if rest and rest != text:
            text = rest
    return text


_DOLLAR = re.compile(r"^\\\$\s*")
# no leading \s* in the two below: a match may start only at a backslash or a caret, so a
# long run of spaces is not scanned again from each of its positions (quadratic); nor
# do two \s* meet with only optional text between them
_UNIT = re.compile(r"\\(?:text|mbox|mathrm)\{[^{}()]*\}(?:\s*\^\s*(?:[23]|\{[23]\}))?\s*$")
_DEGREES = re.compile(r"(?:\^\s*(?:\\circ|\{\s*\\circ\s*\})|\\degree)\s*$")
_TEXT = re.compile(r"\\(?:text|textbf|mathrm)\{\s*([A-Za-z]+(?: [A-Za-z]+)*)\s*\}")
_CHOICE = re.compile(r"\\(?:text|textbf|mathrm)\{\s*\(?([A-E])\)?\s*\}|\(([A-E])\)")
_MATRIX = re.compile(
    r"(?:\\begin\{(?P<env>[pb])matrix\}(?P<body>.*)\\end\{(?P=env)matrix\}"
    r"|\\left\(\s*\\begin\{matrix\}(?P<body2>.*)\\end\{matrix\}\s*\\right\))",
    re.DOTALL,
)
_EQUATION = re.compile(r"([a-zA-Z])\s*=\s*([^=]+)")
_RELATION = re.compile(r"(<|>|\\[lg][et]q?(?![a-zA-Z]))")
_RELATIONS = {"<": "<", "\\lt": "<", "\\le": "<=", "\\leq": "<=",
              ">": ">", "\\gt": ">", "\\ge": ">=", "\\geq": ">="}  # fmt: skip
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
#: a whole answer that is a mixed number, ``2\frac{1}{4}`` (math-verify reads 9/4)
_MIXED = re.compile(
    r"(?P<sign>-?)\s*(?P<whole>[1-9]\d{0,5})\s*\\[dt]?frac"
    r"(?:\{\s*(?P<p>\d{1,6})\s*\}\s*\{\s*(?P<q>[1-9]\d{0,5})\s*\}|(?P<p1>\d)(?P<q1>[1-9]))"
)


def _read_form(text: str) -> _Reading:
    """The reading of an unwrapped answer; raises :class:`_Unread` outside the subset."""
    m = _CHOICE.fullmatch(text)
    if m is not None:
        return _Reading("choice", m[1] or m[2], (), True)
    if re.fullmatch(r"[A-E]", text):
        return _Reading("letter", text, (), True)
    m = _TEXT.fullmatch(text)
    if m is not None:
        return _Reading("text", " ".join(m[1].lower().split()), (), True)
    if re.fullmatch(r"[A-Za-z]{2,}", text):
        return _Reading("word", text.lower(), (), True)
    m = _MATRIX.fullmatch(text)
    if m is not None:
        return _read_matrix(m["body"] if m["body"] is not None else m["body2"])
    m = _EQUATION.fullmatch(text)
    if m is not None:
        r = _read_plain(m[2])
        if r is None or r.kind != "value" or r.var == m[1]:
            raise _Unread  # x = x + 1, x = 1, 2: math-verify's
        return _Reading(r.kind, r.tag, r.items, r.exact, r.var, m[1])
    parts = _RELATION.split(text)
    if len(parts) == 3:
        return _read_inequality(parts)
    if len(parts) > 3:
        raise _Unread  # 1 < x < 3
    r = _read_plain(text)
    if r is None:
        raise _Unread
    return r


def _read_matrix(body: str) -> _Reading:
    rows = [row for row in body.split("\\\\")]
    if rows and not rows[-1].strip():
        rows.pop()  # a trailing \\
    cells = [row.split("&") for row in rows]
    if not cells or len({len(row) for row in cells}) != 1:
        raise _Unread
    items, exact, var = [], True, None
    for cell in (c for row in cells for c in row):
        r = _read_plain(cell)
        if r is None or r.kind != "value" or r.var is not None:
            raise _Unread
        items.append(r.items[0])
        exact = exact and r.exact
    return _Reading("matrix", f"{len(cells)}x{len(cells[0])}", tuple(items), exact, var)


def _read_inequality(parts: list[str]) -> _Reading:
    left, rel, right = (p.strip() for p in parts)
    op = _RELATIONS[rel]
    if re.fullmatch(r"[a-zA-Z]", right) and not re.fullmatch(r"[a-zA-Z]", left):
        left, right, op = right, left, _FLIPPED[op]  # 3 > x is x < 3
    if not re.fullmatch(r"[a-zA-Z]", left):
        raise _Unread
    r = _read_plain(right)
    if r is None or r.kind != "value" or r.var is not None:
        raise _Unread
    return _Reading("inequality", op, r.items, r.exact, left)


@lru_cache(maxsize=16384)  # the parts of answers (cells, intervals) and sentences
def _read_plain(text: str) -> _Reading | None:
    """A value, a tuple or interval, a set, a list or a union of intervals; else None."""
    if _THOUSANDS.fullmatch(text.strip()):
        text = text.replace(",", "")  # math-verify reads "1,234,567" as one integer
    m = _MIXED.fullmatch(text.strip())
    if m is not None:
        p, q = (m["p"], m["q"]) if m["p"] is not None else (m["p1"], m["q1"])
        v = Fraction(int(m["whole"])) + Fraction(int(p), int(q))
        return _Reading("value", "", (_const(-v if m["sign"] else v),), True)
    try:
        if "\\cup" in text:
            return _read_union(text)
        toks = _tokens(text)
        if not toks:
            return None
        return _read_tokens(toks)
    except (_Unread, ArithmeticError, ValueError, RecursionError):
        return None


def _read_union(text: str) -> _Reading:
    brackets, items, exact = [], [], True
    for part in text.split("\\cup"):
        r = _read_tokens(_tokens(part))
        if r.kind != "tuple" or len(r.items) != 2 or r.var is not None:
            raise _Unread
        brackets.append(r.tag)
        items += r.items
        exact = exact and r.exact
    return _Reading("union", "|".join(brackets), tuple(items), exact)


_CLOSE = {"(": ")", "[": "]", "\\{": "\\}"}


def _read_tokens(toks: list[tuple[str, str]]) -> _Reading:
    exact = not any(kind == "num" and "." in tok for kind, tok in toks)
    p = _Parser(toks)
    first = toks[0][1]
    if first in _CLOSE and any(t[1] == "," for t in toks):
        p.i += 1
        items = p.items()
        close = p.peek()
        if close is None or close[1] not in (")", "]", "\\}") or p.i + 1 != len(toks):
            raise _Unread
        if (first == "\\{") != (close[1] == "\\}") or len(items) < 2:
            raise _Unread
        if first == "\\{":
            return _Reading("set", "", tuple(items), exact, p.var)
        return _Reading("tuple", first + close[1], tuple(items), exact, p.var)
    if first == "\\{":
        p.i += 1
        items = p.items()
        p.take("\\}")
    else:
        items = p.items()
    if p.i != len(toks):
        raise _Unread
    if len(items) == 1 and first != "\\{":
        if any(_INF in v for v in items):
            raise _Unread  # infinity is an end of an interval only
        return _Reading("value", "", tuple(items), exact, p.var)
    if any(kind == "num" and len(tok) == 3 and toks[i - 1][1] == "," for i, (kind, tok) in
           enumerate(toks) if i):  # fmt: skip
        raise _Unread  # "2, 345" may be a number with a thousands separator
    return _Reading("set", "", tuple(items), exact, p.var)


def _rational(v: Value) -> bool:
    return all(key == (1, 0, 0) for key in v)


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos, n = 0, len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip() == "":
                break
            raise _Unread
        pos = m.end()
        kind = m.lastgroup
        tok = m.group(kind)
        if kind == "cmd" and tok in ("\\left", "\\right"):
            # \left( ... \right): the delimiter that follows is the token
            m2 = re.compile(r"\s*([()\[\]])").match(text, pos)
            if m2 is None:
                raise _Unread
            pos = m2.end()
            out.append(("sym", m2.group(1)))
            continue
        if kind == "num":
            # the whitespace before a token: two numbers side by side ("2 3") are ambiguous
            if out and out[-1][0] == "num":
                raise _Unread
        out.append((kind, tok))
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.toks = tokens
        self.i = 0
        self.depth = 0  # expressions open: each bracket, brace or fraction part opens one
        self.var: str | None = None  # the one variable met so far

    def items(self) -> list[Value]:
        """Expressions separated by commas."""
        out = [self.expr()]
        while self.at(","):
            self.i += 1
            out.append(self.expr())
        return out

    def expr(self) -> Value:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Unread
        try:
            return self._sum()
        finally:
            self.depth -= 1

    def _sum(self) -> Value:
        value: Value = {}
        first = True
        while True:
            sign = 1
            if self.at("+") or self.at("-"):
                sign = -1 if self.peek()[1] == "-" else 1
                self.i += 1
            elif not first:
                return value
            value = _add(value, self.term(), sign)
            first = False

    def term(self) -> Value:
        value = self.factor()
        while True:
            t = self.peek()
            if t is None:
                return value
            if t[1] in ("*", "\\cdot", "\\times"):
                self.i += 1
                value = _mul(value, self.factor())
            elif t[1] == "/":
                self.i += 1
                value = _mul(value, _inverse(self.factor()))
            elif t[0] == "num":
                raise _Unread  # "x 2", "\pi 3": ambiguous juxtaposition
            elif t[1] in _FRACS and self.toks[self.i - 1][0] == "num" and self._integer_fraction():
                raise _Unread  # 2\frac{1}{4} is a mixed number to math-verify: only whole
            elif t[1] in (*_FRACS, "\\sqrt", "\\pi", "(", "{") or t[0] == "var":
                value = _mul(value, self.factor())
            else:
                return value

    def factor(self) -> Value:
        base = self.atom()
        if self.at("^"):
            self.i += 1
            t = self.peek()
            if t is not None and t[0] == "num" and len(t[1]) == 1:
                self.i += 1
                n = int(t[1])
            elif self.at("{"):
                self.i += 1
                t = self.peek()
                if t is None or t[0] != "num" or "." in t[1]:
                    raise _Unread
                self.i += 1
                self.take("}")
                n = int(t[1])
            else:
                raise _Unread
            if n > _MAX_POWER or self.at("^"):
                raise _Unread
            out: Value = {(1, 0, 0): Fraction(1)}
            for _ in range(n):
                out = _mul(out, base)
            return out
        return base

    def atom(self) -> Value:
        t = self.peek()
        if t is None:
            raise _Unread
        kind, tok = t
        self.i += 1
        if kind == "num":
            if "." in tok:
                whole, frac = tok.split(".")
                if len(whole.lstrip("0")) + len(frac) > 12 or (len(whole) > 1 and whole[0] == "0"):
                    raise _Unread
                return _const(Fraction(int(whole + frac), 10 ** len(frac)))
            if len(tok) > 1 and tok[0] == "0":
                raise _Unread
            if len(tok) > _MAX_INT_DIGITS or int(tok) > _MAX_INT:
                raise _Unread
            return _const(Fraction(int(tok)))
        if tok in _FRACS:
            t = self.peek()
            if t is not None and t[0] == "num" and len(t[1]) == 2 and t[1][1] != "0":
                self.i += 1  # \frac12: one digit each
                return _const(Fraction(int(t[1][0]), int(t[1][1])))
            num = self.group()
            den = self.group()
            return _mul(num, _inverse(den))
        if tok == "\\sqrt":
            if self.at("["):
                raise _Unread  # n-th roots
            t = self.peek()
            if t is not None and t[0] == "num" and len(t[1]) == 1:
                self.i += 1
                inner = _const(Fraction(int(t[1])))
            else:
                inner = self.group()
            return _sqrt(inner)
        if tok == "\\pi":
            return {(1, 1, 0): Fraction(1)}
        if kind == "var":
            if self.var not in (None, tok):
                raise _Unread  # two variables: math-verify's
            self.var = tok
            return {(1, 0, 1): Fraction(1)}
        if tok == "\\infty":
            return {_INF: Fraction(1)}
        if tok == "(":
            v = self.expr()
            self.take(")")
            return v
        if tok == "{":
            v = self.expr()
            self.take("}")
            return v
        raise _Unread

    def _integer_fraction(self) -> bool:
        """Is the fraction at the cursor of two integers (``\\frac{1}{4}``, ``\\frac14``)?"""
        t = self.toks[self.i : self.i + 7]
        if len(t) >= 2 and t[1][0] == "num" and len(t[1][1]) == 2:
            return True  # \frac14
        shape = [tok if kind != "num" or "." in tok else "int" for kind, tok in t[1:]]
        return shape == ["{", "int", "}", "{", "int", "}"]

    def group(self) -> Value:
        self.take("{")
        v = self.expr()
        self.take("}")
        return v

    def take(self, tok: str) -> None:
        t = self.peek()
        if t is None or t[1] != tok:
            raise _Unread
        self.i += 1

    def at(self, tok: str) -> bool:
        t = self.peek()
        return t is not None and t[1] == tok

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None


# --------------------------------------------------------------------------- arithmetic on values


#: the key of an infinite end of an interval (``\\infty``): no arithmetic on it
_INF: Key = (0, 0, 0)
_FRACS = ("\\frac", "\\dfrac", "\\tfrac")


def _const(c: Fraction) -> Value:
    return {(1, 0, 0): c} if c else {}


def _inverse(v: Value) -> Value:
    if len(v) != 1 or _INF in v:
        raise _Unread  # dividing by a sum: not in the subset
    ((r, k, d), c) = next(iter(v.items()))
    # 1/(c sqrt(r)) = sqrt(r) / (c r)
    return _bounded({(r, -k, -d): 1 / (c * r)})


def _sqrt(v: Value) -> Value:
    if not v:
        return {}
    if len(v) != 1:
        raise _Unread
    ((r, k, d), c) = next(iter(v.items()))
    if r != 1 or k or d or c < 0:  # r == 0: infinity
        raise _Unread  # nested radicals, sqrt(pi), sqrt(x), imaginary numbers
    p, q = c.numerator, c.denominator
    # sqrt(p/q) = sqrt(p*q)/q
    n = p * q
    if n > _MAX_RADICAND:
        raise _Unread
    outside, inside = _sqrt_of(n)
    return {(inside, 0, 0): Fraction(outside, q)}


@lru_cache(maxsize=4096)
def _sqrt_of(n: int) -> tuple[int, int]:
    """(outside, square-free inside) with ``sqrt(n) = outside * sqrt(inside)``."""
    outside, inside, p = 1, n, 2
    while p * p <= inside:
        while inside % (p * p) == 0:
            inside //= p * p
            outside *= p
        p += 1
    return outside, inside


def _mul(a: Value, b: Value) -> Value:
    if _INF in a or _INF in b:
        raise _Unread  # 2\infty, \infty^2: not an end of an interval
    out: Value = {}
    for (r1, k1, d1), c1 in a.items():
        for (r2, k2, d2), c2 in b.items():
            g = math.gcd(r1, r2)
            # sqrt(r1)*sqrt(r2) = g*sqrt(r1/g * r2/g), both square-free: r1/g, r2/g coprime
            r = (r1 // g) * (r2 // g)
            key = (r, k1 + k2, d1 + d2)
            out[key] = out.get(key, 0) + c1 * c2 * g
    out = {k: c for k, c in out.items() if c}
    if len(out) > _MAX_TERMS:
        raise _Unread
    return _bounded(out)


def _add(a: Value, b: Value, sign: int = 1) -> Value:
    if a and (_INF in a or _INF in b):
        raise _Unread  # \infty + 1
    out = dict(a)
    for k, c in b.items():
        out[k] = out.get(k, 0) + sign * c
    return _bounded({k: c for k, c in out.items() if c})


def _bounded(v: Value) -> Value:
    """``v``, or not read when it has grown past the limits (a power tower, pi^4096)."""
    for (r, k, d), c in v.items():
        if (
            r > _MAX_PRODUCT_RADICAND
            or abs(k) > _MAX_EXPONENT
            or abs(d) > _MAX_EXPONENT
            or c.numerator.bit_length() > _MAX_COEFFICIENT_BITS
            or c.denominator.bit_length() > _MAX_COEFFICIENT_BITS
        ):
            raise _Unread
    return v


# --------------------------------------------------------------------------- outside the subset


class _Unread(Exception):
    """The text is outside the subset this module reads exactly."""
