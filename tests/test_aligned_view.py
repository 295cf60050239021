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


def test_model_text_is_inert():
    html = _html([HOSTILE, "x = 1"], ["x = 1", HOSTILE], labels=(HOSTILE, "B"))
    assert "<script" not in html and "<a " not in html and "<img" not in html
    assert "://" not in html
    assert "&lt;script&gt;" in html


def test_long_text_is_cut_and_says_so():
    html = _html(["w " * 5000], ["other"])
    assert "(cut: 10,000 characters)" in html
