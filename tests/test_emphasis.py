"""Markdown emphasis in model text (DeepSeek R1 writes ``**Final Answer**``): kept as bold
where markdown or our own markup shows the text, its markers dropped where the text is
plain (box labels, tooltips, tables); math never touched, model text never executable."""

from __future__ import annotations

import re

import pytest

from dagmath_viz.analysis.align import align_texts
from dagmath_viz.analysis.step_fields import step_fields_table
from dagmath_viz.draw.aligned import render_aligned_html
from dagmath_viz.draw.pictures import trajectory_svg
from dagmath_viz.draw.render import graph_data
from dagmath_viz.schema import Step, Trajectory
from dagmath_viz.text import math_markdown, math_plain, rich_segments, strip_emphasis

# Thought Anchors' last chunk of problem 4164 (../shared/data/thought-anchors), as written.
R1_LAST = "**Final Answer**\nThe value of \\( p(5) \\) is \\boxed{\\dfrac{24}{5}}."


def _traj(*texts: str) -> Trajectory:
    steps = tuple(Step(i + 1, (i,) if i else (), t) for i, t in enumerate(texts))
    return Trajectory("m", "d", "1", 0, steps)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("**Final Answer**", "Final Answer"),
        ("*so* and __also__ and _this_", "so and also and this"),
        ("***both***", "both"),
        ("**bold *and italic* here**", "bold and italic here"),
        # not emphasis: arithmetic, powers, snake case, spaced stars, escaped stars
        ("2*3*4 = 24", "2*3*4 = 24"),
        ("x * y * z", "x * y * z"),
        ("2**3 = 8 and 3**2 = 9", "2**3 = 8 and 3**2 = 9"),
        ("problem_id_all", "problem_id_all"),
        (r"\*not\* emphasis", r"\*not\* emphasis"),
        ("**never closed", "**never closed"),
        ("**across\nlines**", "**across\nlines**"),
        # math is never touched, inside or around the emphasis
        ("$a*b*c$ and $**x**$", "$a*b*c$ and $**x**$"),
        (r"\(x_1_2\) and \[ a*b*c \]", r"\(x_1_2\) and \[ a*b*c \]"),
        ("**Answer: $x_1 = 2$**", "Answer: $x_1 = 2$"),
        (r"**so \boxed{a*b*}**", r"so \boxed{a*b*}"),
    ],
)
def test_strip_emphasis_drops_only_the_markers(text, expected):
    assert strip_emphasis(text) == expected


def test_the_r1_final_answer_reads_as_plain_text():
    assert strip_emphasis(R1_LAST) == R1_LAST.replace("**", "")
    assert math_plain(R1_LAST) == "Final Answer The value of p(5) is 24/5."


def test_rich_segments_open_and_close_around_formulas():
    assert rich_segments(R1_LAST) == [
        (3, "strong"),
        (0, "Final Answer"),
        (4, "strong"),
        (0, "\nThe value of "),
        (1, "p(5)"),
        (0, " is "),
        (1, r"\boxed{\dfrac{24}{5}}"),
        (0, "."),
    ]
    assert rich_segments("***x*** **a $y$ b**") == [
        (3, "strong"), (3, "em"), (0, "x"), (4, "em"), (4, "strong"), (0, " "),
        (3, "strong"), (0, "a "), (1, "y"), (0, " b"), (4, "strong"),
    ]  # fmt: skip
    # openings and closings always pair up and nest, whatever the text
    for text in ("*a **b* c**", "**a *b** c*", "_a __b_ c__", "***a* b**", "**a** **"):
        depth = []
        for kind, piece in rich_segments(text):
            if kind == 3:
                depth.append(piece)
            elif kind == 4:
                assert depth and depth.pop() == piece, text
        assert not depth, text


def test_markdown_keeps_bold_and_everything_else_inert():
    # by hand: the markers kept bare, the text between them escaped as before, the line
    # break a markdown hard break, both formulas in the dollar form Streamlit typesets
    assert math_markdown(R1_LAST) == (
        "**Final Answer**  \nThe value of $p(5)$ is $\\boxed{\\dfrac{24}{5}}$\\."
    )
    assert math_markdown("*so* 2*3*4 and __u__") == "*so* 2\\*3\\*4 and **u**"
    hostile = '**<script>x</script> [y](javascript:1) <a href="//e">$5** and *<img src=x>*'
    assert math_markdown(hostile) == (
        "**\\<script\\>x\\</script\\> \\[y\\]\\(javascript\\:1\\) "
        '\\<a href\\=\\"//e\\"\\>\\$5** and *\\<img src\\=x\\>*'
    )
    # an unmatched marker stays escaped, as any other character
    assert math_markdown("**open") == "\\*\\*open"


def test_graph_labels_and_tooltips_show_no_markers_and_the_list_shows_bold():
    traj = _traj("Let $x = 2$.", "**Step 2:** so $x*x = 4$", R1_LAST)
    nodes = graph_data(traj)["nodes"]
    assert nodes[1]["snippet"] == "Step 2: so x*x = 4"
    assert nodes[2]["snippet"] == "Final Answer The value of p(5) is 24/5."
    for node in nodes:
        assert "**" not in node["snippet"] and "**" not in node["title"]
    # the step list beside the graph: the text as written, its bold as an element
    assert nodes[2]["text"] == R1_LAST
    assert nodes[2]["math"][:3] == [[3, "strong"], [0, "Final Answer"], [4, "strong"]]
    # a step with emphasis and no formula is built as rich text too
    assert _traj("**Done.**").steps and graph_data(_traj("**Done.**"))["nodes"][0]["math"] == [
        [3, "strong"], [0, "Done."], [4, "strong"],
    ]  # fmt: skip


def test_the_picture_labels_show_no_markers():
    svg = trajectory_svg(_traj("Let $x = 2$.", R1_LAST), layout="reading")
    labels = re.findall(r'<tspan dx="7" fill="#333">(.*?)</tspan>', svg)
    assert labels == ["Let x = 2.", "Final Answer The value of p(5) is 24/5."]


def test_the_step_fields_table_shows_no_markers():
    table = step_fields_table(_traj("**Step 1.** Let x = 2", R1_LAST))
    assert table["text"].tolist() == [
        "Step 1. Let x = 2",
        r"Final Answer The value of \( p(5) \) is \boxed{\dfrac{24}{5}}.",
    ]


def test_the_aligned_view_shows_bold_as_its_own_tag_and_text_escaped():
    a = ["Let $x = 2$.", "**<b>Final</b> Answer** 4"]
    b = ["Let $x = 2$.", "*so* 4"]
    page = render_aligned_html(_traj(*a), _traj(*b), align_texts(a, b))
    grid = page[: page.index("<script>")]
    assert "<strong>&lt;b&gt;Final&lt;/b&gt; Answer</strong>" in grid
    assert "<em>so</em>" in grid
    assert "<b>" not in grid and "**" not in grid.split('<details class="diff">')[0]


def test_shared_r1_chains_show_no_emphasis_marker_in_labels_or_tooltips(thought_anchors_root):
    from dagmath_viz.formats.discovery import load_paths

    trajs = load_paths([thought_anchors_root]).trajectories
    marked = [s.text for t in trajs for s in t.steps if "**" in s.text]
    # read from the files: R1 closes most chains with "**Final Answer**"
    assert sum("**Final Answer**" in text for text in marked) >= 10
    for traj in trajs:
        for node in graph_data(traj)["nodes"]:
            if node["position"] < 0:
                continue
            assert not re.search(r"\*\*\w", node["snippet"]), (traj.source, node["snippet"])
            assert not re.search(r"\*\*\w", node["title"]), (traj.source, node["title"])


def test_an_answer_line_shows_no_markers():
    from dagmath_viz.text import answer_markdown

    # the page's "Predicted answer": escaped markdown, so stars would show as typed
    assert answer_markdown("**Final Answer** 4") == "Final Answer 4"
    assert answer_markdown("2*3*4") == "2\\*3\\*4"
    assert answer_markdown(r"\boxed{**x**}") == r"$\boxed{**x**}$"  # TeX: left alone
