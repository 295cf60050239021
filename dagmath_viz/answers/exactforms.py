"""Exact comparison of common answer forms without SymPy.

math-verify parses both answers into SymPy and compares them; that costs ~6 ms a pair plus
a second or two to import SymPy. Most answers in math data sets are built from a few
pieces: integers, decimals, ``\\frac``/``\\dfrac``/``a/b``, ``\\sqrt``, ``\\pi``, one
variable ``x``, sums, products, small integer powers, and tuples of such. This module reads
that subset exactly into a canonical value (a sum of ``c * sqrt(r) * pi^k * x^d`` with
rational ``c`` and square-free ``r``; such terms are linearly independent over the
rationals, so two values are equal exactly when their canonical forms are) and compares.

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
(:func:`exact_verdict`), reading one (:func:`read_value`, its tokens, its recursive-descent
parser), the arithmetic on canonical values, and last the exception for a text outside
the subset.
"""

from __future__ import annotations

import math
import re
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

_TOKEN = re.compile(
    r"\s*(?:"
    r"(?P<num>\d+(?:\.\d+)?)"
    r"|(?P<cmd>\\(?:dfrac|tfrac|frac|sqrt|pi|cdot|times|left|right)(?![a-zA-Z]))"
    r"|(?P<sym>[-+*/^(){},\[\]x])"
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
    >>> exact_verdict("5 apples", "5") is None
    True
    """
    a = read_value(reference)
    if a is None:
        return None
    b = read_value(prediction)
    if b is None:
        return None
    try:
        return _compare(a, b)
    except (ArithmeticError, ValueError):  # bounded values make these unexpected: not read
        return None


def _compare(a: tuple[str, tuple[Value, ...], bool], b: tuple[str, tuple[Value, ...], bool]):
    """The verdict on two read answers (see :func:`exact_verdict`)."""
    shape_a, va, exact_a = a
    shape_b, vb, exact_b = b
    if shape_a != shape_b or len(va) != len(vb):
        return False  # a tuple against a number, or tuples of different lengths
    if va == vb:
        return True
    if exact_a and exact_b and all(_rational(x) for x in (*va, *vb)):
        return False  # exact rationals (no decimal written): math-verify compares them exactly
    if all(x == y or _far(x, y) for x, y in zip(va, vb, strict=True)):
        return False
    return None


def _far(a: Value, b: Value) -> bool:
    """Are the two values far apart (relative 1e-5) at a few points of x?"""
    if a.keys() != b.keys() and any(d for (_, _, d) in (*a, *b)):
        # different polynomials in x: compare at points where they cannot agree by accident
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


@lru_cache(maxsize=65536)  # each distinct string is read once: answers repeat a lot
def read_value(text: str) -> tuple[str, tuple[Value, ...], bool] | None:
    """Read ``text`` into (shape, values, exact), or None when outside the subset.

    ``shape`` is ``"value"`` for one value and ``"()"`` for a parenthesised tuple of two or
    more values; ``exact`` is False when a decimal is written (math-verify rounds those).
    The result is cached and shared: do not modify it.

    >>> read_value(r"2\\sqrt{3}")[1] == read_value(r"\\sqrt{12}")[1]
    True
    >>> read_value("the answer") is None
    True
    """
    if len(text) > MAX_CHARS:
        return None
    sentence = _SENTENCE.fullmatch(text)
    if sentence is not None:
        text = sentence["answer"]  # math-verify reads the answer out of such a sentence
    if _THOUSANDS.fullmatch(text.strip()):
        text = text.replace(",", "")  # math-verify reads "1,234,567" as one integer
    try:
        toks = _tokens(text)
    except _Unread:
        return None
    if not toks:
        return None
    exact = not any(kind == "num" and "." in tok for kind, tok in toks)
    try:
        if toks[0][1] == "(" and any(t[1] == "," for t in toks):
            p = _Parser(toks)
            p.take("(")
            items = [p.expr()]
            while p.at(","):
                p.i += 1
                items.append(p.expr())
            p.take(")")
            if p.i != len(toks) or len(items) < 2 or sentence is not None:
                return None  # math-verify does not read a tuple out of a sentence
            return "()", tuple(items), exact
        p = _Parser(toks)
        v = p.expr()
        if p.i != len(toks) or (sentence is not None and not _rational(v)):
            return None
        return "value", (v,), exact
    except (_Unread, ArithmeticError, ValueError, RecursionError):
        return None  # ArithmeticError: division by zero, overflow; RecursionError: a guard


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
            elif t[1] in ("\\frac", "\\dfrac", "\\tfrac", "\\sqrt", "\\pi", "x", "(", "{"):
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
        if tok in ("\\frac", "\\dfrac", "\\tfrac"):
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
        if tok == "x":
            return {(1, 0, 1): Fraction(1)}
        if tok == "(":
            v = self.expr()
            self.take(")")
            return v
        if tok == "{":
            v = self.expr()
            self.take("}")
            return v
        raise _Unread

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


def _const(c: Fraction) -> Value:
    return {(1, 0, 0): c} if c else {}


def _inverse(v: Value) -> Value:
    if len(v) != 1:
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
    if r != 1 or k or d or c < 0:
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
