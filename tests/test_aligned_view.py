"""The aligned side-by-side view (dagmath_viz/draw/aligned.py): rows as the alignment has
them, dead ends marked, and model text never markup, script or URL."""

from __future__ import annotations

import re

from dagmath_viz.analysis.align import align_texts
from dagmath_viz.draw.aligned import render_aligned_html
from dagmath_viz.schema import Step, Trajectory

HOSTILE = '<script>alert(1)</script><a href="https://x.example/">$x$</a> <img src=x onerror=1>'


def _traj(texts: list[str], model: str = "m") -> Trajectory:
    steps = tuple(Step(i + 1, (i,) if i else (), t) for i, t in enumerate(texts))
    return Trajectory(model, "d", "1", 0, steps)


def _html(a: list[str], b: list[str], **kw) -> str:
    ta, tb = _traj(a), _traj(b)
    al = align_texts(a, b)
    return render_aligned_html(ta, tb, al, **kw)


def test_rows_follow_the_alignment():
    html = _html(["x = 2", "so y = 3", "done: 5"], ["x = 2", "then 5"])
    # (0, 0) joined as a restatement; A's step 2 alone; (2, 1) joined by its value 5
    rows = re.findall(
        r'<div class="row (pair|only)" data-kind="(\w*)" data-a="(\d*)" data-b="(\d*)"', html
    )
    assert rows == [
        ("pair", "statement", "0", "0"),
        ("only", "", "1", ""),
        ("pair", "math", "2", "1"),
    ]
    assert html.count('class="cell empty"') == 1
    # the math pair's texts differ: a folded word diff; the restatement has none
    assert html.count('<details class="diff">') == 1


def test_dead_ends_and_final_steps_are_marked():
    html = _html(["a 1", "b 2", "c 3"], ["a 1", "c 3"], dead_a=[2], correct_a=True, correct_b=False)
    assert html.count('class="cell dead"') == 1 and 'data-step="2"' in html
    assert "final_correct" in html and "final_incorrect" in html


def _grid(html: str) -> str:
    """The page less its own scripts (KaTeX when a step has math, then aligned_view.js)."""
    scripts = re.findall(r"<script>.*?</script>", html, re.S)
    assert len(scripts) in (1, 2) and "dmAligned" in scripts[-1]
    return html[: html.index("<script>")] + html[html.rindex("</script>") + 9 :]


def test_model_text_is_inert():
    html = _html([HOSTILE, "x = 1"], ["x = 1", HOSTILE], labels=(HOSTILE, "B"))
    grid = _grid(html)
    assert "<script" not in grid and "<a " not in grid and "<img" not in grid
    assert "://" not in html
    assert "&lt;script&gt;" in grid


def _cells(html: str) -> list[str]:
    found = r'<div class="cell[^"]*" data-side="\w" data-step="\d+">(.*?)</div>'
    return re.findall(found, html, re.S)


def test_math_is_kept_whole_and_escaped():
    a = [r"Compute $3(1+3(x))$ and <b>", r"so \(x^2 < y\) or \[a \& b\]", r"open \( x = 1"]
    b = [r"Compute $3(1+3(x))$ and <b>", r"so \[a \& b\]", r"open \( x = 1"]
    html = _html(a, b)
    cells = _cells(html)
    # each formula one span: its TeX whole (for KaTeX) and shown as TeX until typeset
    span = '<span class="tex" data-display="0" data-tex="3(1+3(x))">\\(3(1+3(x))\\)</span>'
    assert cells[0].endswith(f"\nCompute {span} and &lt;b&gt;")
    # markup inside delimiters is never a formula: shown as typed, escaped
    assert r"so \(x^2 &lt; y\) or " in cells[2]
    display = '<span class="tex" data-display="1" data-tex="a \\&amp; b">\\[a \\&amp; b\\]</span>'
    assert cells[2].endswith(display) and cells[3].endswith(f"so {display}")
    # an unclosed delimiter is text
    assert cells[4].endswith(r"open \( x = 1") and "tex" not in cells[4]
    assert html.count('class="tex"') == 4  # A1, B1, A2's display and B2's
    # a display formula is its own block: the line breaks around it are not kept as well
    cells = _cells(_html(["so\n\\[y = 1\\]\nthen"], ["other"]))
    assert cells[0].endswith('\nso<span class="tex" data-display="1" data-tex="y = 1">'
                             '\\[y = 1\\]</span>then')  # fmt: skip
    # links never reach KaTeX: shown as typed
    cells = _cells(_html([r"see \(\href{javascript:x}{y}\)"], ["other"]))
    assert cells[0].endswith(r"see \(\href{javascript:x}{y}\)")
    # one KaTeX, inlined because there is math; none asked for (an exported file's own)
    assert html.count("window.katex=") == 1
    assert "window.katex=" not in _html(a, b, katex=False)
    assert "window.katex=" not in _html(["x = 1"], ["x = 1"])


def test_the_word_diff_never_splits_a_formula():
    # one value written two ways: a math pair, whose diff strikes the formula out whole
    a = [r"so \(x = \frac{1}{2}\) and y is 2"]
    b = [r"so \(x = 0.5\) and y is 2"]
    html = _html(a, b)
    assert 'data-kind="math"' in html
    diff = html[html.index('<details class="diff">') :]
    diff = diff[: diff.index("</details>")]
    span = r'<span class="tex" data-display="0" data-tex="{0}">\({0}\)</span>'
    old, new = span.replace("{0}", r"x = \frac{1}{2}"), span.replace("{0}", "x = 0.5")
    assert f"<span>so</span> <del>{old}</del> <ins>{new}</ins> <span>and y is 2</span>" in diff
