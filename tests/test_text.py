"""Model text made safe for markdown: math kept, markup and stray dollars inert."""

from __future__ import annotations

import pytest

from dagmath_viz.text import counted, escape_markdown, math_markdown, normalise_statement, plain


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # balanced inline math is kept for KaTeX
        ("so $x^2 = 4$ holds", r"so $x^2 = 4$ holds"),
        # display math is kept
        ("$$a+b$$", "$$a+b$$"),
        # a lone dollar is escaped, so it cannot open math for the paragraph
        ("it costs $5 today", r"it costs \$5 today"),
        # HTML is escaped character by character
        ("<img src=x onerror=alert(1)>", r"\<img src\=x onerror\=alert\(1\)\>"),
        # markdown links and images are neutralised
        ("[click](javascript:alert(1))", r"\[click\]\(javascript\:alert\(1\)\)"),
        # \href inside math is shown as text, not rendered as a link
        (r"$\href{javascript:x}{y}$", r"\$\\href\{javascript\:x\}\{y\}\$"),
    ],
    ids=["inline-math", "display-math", "stray-dollar", "html", "md-link", "href-in-math"],
)
def test_math_markdown(text, expected):
    assert math_markdown(text) == expected


def test_math_markdown_truncates_long_text():
    out = math_markdown("a" * 10_000, max_chars=100)
    assert out == "a" * 100 + " …"


def test_escape_markdown_escapes_every_dollar():
    assert escape_markdown("$1 and $2") == r"\$1 and \$2"


def test_plain_flattens_and_shortens():
    assert plain("a\n  b\tc") == "a b c"
    assert plain("x" * 10, max_chars=5) == "xxxx…"


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (r"Let $x = \left(1+2\right)$.", "let x=(1+2)", True),
        ("$k > 0$", "k>0", True),
        ("$k > 0$", "k>1", False),
    ],
)
def test_normalise_statement(a, b, same):
    assert (normalise_statement(a) == normalise_statement(b)) is same


# A wrong answer "24" behind a right-to-left override displays as "42" when the control
# character reaches the screen.
RLO_ANSWER = "\u202e24"
BIDI_CONTROLS = "\u200e\u200f\u061c\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def test_rlo_answer_is_shown_with_its_override_visible():
    from dagmath_viz.text import reveal_bidi

    assert reveal_bidi(RLO_ANSWER) == "[U+202E]24"
    assert plain(f"Predicted answer: {RLO_ANSWER}") == "Predicted answer: [U+202E]24"
    # in markdown the tag's brackets are escaped, so it shows as typed
    assert escape_markdown(RLO_ANSWER) == r"\[U\+202E\]24"
    assert math_markdown(f"so $x={RLO_ANSWER}$") == "so $x=[U+202E]24$"


@pytest.mark.parametrize("control", list(BIDI_CONTROLS))
def test_no_bidi_control_reaches_the_screen(control):
    from dagmath_viz.text import reveal_bidi

    text = f"a{control}b"
    for shown in (reveal_bidi(text), plain(text), escape_markdown(text), math_markdown(text)):
        assert control not in shown
        assert f"U+{ord(control):04X}" in shown.replace("\\", "")


def test_ordinary_right_to_left_text_is_kept():
    # Hebrew and Arabic letters are text, not controls: they must show unchanged.
    from dagmath_viz.text import reveal_bidi

    assert reveal_bidi("שלום مرحبا") == "שלום مرحبا"


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("no math", 0),
        ("costs $5 and $6", 0),  # no closing pair: two stray dollars
        ("$a$ and $$b$$", 2),
        ("$x^2$ costs \\$5", 1),  # an escaped dollar is no delimiter
    ],
)
def test_count_formulas(text, count):
    from dagmath_viz.text import count_formulas

    assert count_formulas(text) == count


@pytest.mark.parametrize(
    ("n", "expected"), [(0, "0 files"), (1, "1 file"), (2, "2 files"), (3126, "3,126 files")]
)
def test_counted_says_one_file_and_many_files(n, expected):
    assert counted(n, "file") == expected


def test_counted_takes_an_irregular_plural():
    assert counted(1, "trajectory", "trajectories") == "1 trajectory"
    assert counted(100_000, "trajectory", "trajectories") == "100,000 trajectories"


# -- the four delimiter styles (issue 34 item 2: R1-style models write \( \) and \[ \]) ------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # \( \) is inline math, written as the dollar form Streamlit typesets
        (r"so \(x^2 = 4\) holds", r"so $x^2 = 4$ holds"),
        # \[ \] is display math; its line breaks are joined (one formula, one line)
        ("then \\[a\n+ b\\] done", "then $$a + b$$ done"),
        # markup inside \( \) is no formula: it shows as typed, escaped
        (r"\( <script>alert(1)</script> \)", r"\\\( \<script\>alert\(1\)\</script\> \\\)"),
        # a link command inside \[ \] is shown as text
        (r"\[\href{javascript:x}{y}\]", r"\\\[\\href\{javascript\:x\}\{y\}\\\]"),
        # an escaped bracket \\[2pt] is a TeX line break, not a delimiter
        (r"a \\[2pt] b", r"a \\\\\[2pt\] b"),
    ],
    ids=["paren-inline", "bracket-display", "script-in-paren", "href-in-bracket", "linebreak"],
)
def test_math_markdown_reads_backslash_delimiters(text, expected):
    assert math_markdown(text) == expected


def test_math_segments_split_text_and_formulas():
    from dagmath_viz.text import math_segments

    text = r"Let \(p(5)\) be $\dfrac{24}{5}$; costs $5 and \[ y = 1 \]"
    assert math_segments(text) == [
        (0, "Let "),
        (1, "p(5)"),
        (0, " be "),
        (1, r"\dfrac{24}{5}"),
        (0, "; costs $5 and "),
        (2, "y = 1"),
    ]
    # a dollar inside a backslash formula would open math elsewhere: not a formula
    assert math_segments(r"\(a $ b\)") == [(0, r"\(a $ b\)")]


def test_math_plain_reads_as_text_not_tex():
    from dagmath_viz.text import math_plain

    assert math_plain(r"so \(\frac{1}{2} \le x^2\)") == "so 1/2 ≤ x²"
    assert math_plain(r"$\sqrt{3} \cdot \pi$ and \[\boxed{7}\]") == "√(3) · π and 7"
    # not math: left as typed, and markup stays text (the caller shows it with textContent)
    assert math_plain("costs $5 <b>") == "costs $5 <b>"
    # escaped braces are a set's braces; a long exponent is not three superscripts and a 7
    assert math_plain(r"Let $B$ be \(\{0,1\}^{3}\)") == "Let B be {0,1}³"
    assert math_plain(r"\(2^{4027} + x^{2k} + \frac{1}{2^{10}}\)") == "2^(4027) + x^(2k) + 1/2¹⁰"
    # a sentence cut inside a display formula, as Thought Anchors' chunks often are
    assert math_plain("we have:\n\\[\n(2k - 1)!! = 2^k") == "we have: (2k - 1)!! = 2^k"
    assert math_plain("= 2^{2013} \\times 2013!\n\\]\nSo \\(x \\le 1\\)") == (
        "= 2^(2013) × 2013! So x ≤ 1"
    )
    assert math_plain("= 4028 \\times 4027 \\times 4026!") == "= 4028 × 4027 × 4026!"


def test_no_tex_command_left_in_the_shared_chains_labels_and_hover_text():
    """Graph labels and tooltips cannot typeset: on every shared chain (Thought Anchors'
    R1 chunks, the few-shot solutions) none shows a TeX command as typed."""
    import re

    from dagmath_viz.draw.render import graph_data
    from dagmath_viz.formats.discovery import load_paths

    try:
        from tests import thought_anchors
        from tests.test_layout import _require_shared
    except ImportError:  # pragma: no cover
        import thought_anchors
        from test_layout import _require_shared

    _require_shared(thought_anchors.ROOT)
    trajs = load_paths([thought_anchors.ROOT.parent]).trajectories
    assert len(trajs) >= 28
    tex = re.compile(r"\\(?:[A-Za-z]+|[{}\[\]()])")
    # the source writes TeX in many chunks (at least one per chain with a formula)
    assert sum(bool(tex.search(s.text)) for t in trajs for s in t.steps) > 100
    for traj in trajs:
        for node in graph_data(traj)["nodes"]:
            if node["position"] < 0:
                continue
            assert not tex.search(node["snippet"]), (traj.source, node["snippet"])
            assert not tex.search(node["title"]), (traj.source, node["title"])


def test_an_unclosed_delimiter_flood_is_bounded():
    from dagmath_viz.text import math_segments

    # 5,000 openings that never close: each scan stops after 2,000 characters
    text = r"\(" * 5000
    assert math_segments(text) == [(0, text)]


def test_a_bare_boxed_answer_is_typeset():
    from dagmath_viz.text import math_segments

    # R1 writes its answer as \boxed{...} outside any delimiter (Thought Anchors problem 4164)
    text = r"The value of \( p(5) \) is \boxed{-\dfrac{5}{12}}."
    assert math_segments(text) == [
        (0, "The value of "),
        (1, "p(5)"),
        (0, " is "),
        (1, r"\boxed{-\dfrac{5}{12}}"),
        (0, "."),
    ]
    # unbalanced braces or markup: shown as typed
    assert math_segments(r"\boxed{a{b}") == [(0, r"\boxed{a{b}")]
    assert math_segments(r"\boxed{<img>}") == [(0, r"\boxed{<img>}")]
