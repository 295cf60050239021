"""Tests of dagmath_viz.draw.render: node kinds, levels, layouts, legend, and that the HTML is safe
and offline.

Expected numbers are worked out by hand in the comments next to each trajectory.
"""

from __future__ import annotations

import json
import re
from html import escape as html_escape
from html.parser import HTMLParser

import pytest

from dagmath_viz.draw import render
from dagmath_viz.draw.render import (
    KINDS,
    LEGEND,
    legend_html,
    render_dag_html,
    render_trajectory_html,
)
from dagmath_viz.schema import Step, Trajectory


def _traj(*steps: Step) -> Trajectory:
    return Trajectory(model="m", dataset="d", problem_id="1", sample_id=0, steps=tuple(steps))


def _all(page: str) -> dict:
    """The view's data: the JSON in ``<script type="application/json" id="dm-data">``."""
    m = re.search(r'<script type="application/json" id="dm-data">(.*?)</script>', page, re.S)
    assert m, "no data block in the page"
    return json.loads(m.group(1))


def _data(page: str, name: str) -> list[dict]:
    return _all(page)[name]


def _nodes(page: str) -> list[dict]:
    return _data(page, "nodes")


def _fill(page: str, kind: str) -> str:
    return _all(page)["colors"][kind][0]


def _by_kind(nodes: list[dict]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for n in nodes:
        out.setdefault(n["kind"], []).append(n["id"])
    return {k: sorted(v) for k, v in out.items()}


# The paper's Figure 1 "imperfect" trajectory, renumbered 1..10 in written order:
# v1 v2 v3 v4 v5 v6 v7 v9 v8 v10. Parents: 4,5,6 <- 1; 7 <- 6; 8 (v9) <- 7;
# 9 (v8) <- 3,4,7; 10 (v10) <- 2,5,9. Out-degrees: 1:3, 2:1, 3:1, 4:1, 5:1, 6:1, 7:2, 8:0, 9:1,
# so the only dead end is step 8. Edges: 5 single-parent steps + 3 + 3 = 11.
# Depths: 1,2,3 -> 0; 4,5,6 -> 1; 7 -> 2; 8 -> 3; 9 -> 1 + max(0, 1, 2) = 3; 10 -> 1 + 3 = 4.
IMPERFECT = _traj(
    Step(1, (), "2 log(x-1) = log k"),
    Step(2, (), "k in [-300, 300]"),
    Step(3, (), "exactly one solution is required"),
    Step(4, (1,), "x > 1"),
    Step(5, (1,), "k > 0"),
    Step(6, (1,), "(x-1)^2 = k"),
    Step(7, (6,), "x = 1 ± sqrt(k)"),
    Step(8, (7,), "two solutions for any k"),
    Step(9, (3, 4, 7), "only 1 + sqrt(k) is a solution"),
    Step(10, (2, 5, 9), r"The final answer is $\boxed{300}$."),
)

# Figure 1 "wrong" trajectory v1 v2 v3 v6 v7 v9 v11 -> 1 2 3 4 5 6 7 with 4 <- 1, 5 <- 4,
# 6 <- 5, 7 <- 3, 6. Step 2 is cited by nobody: one dead end.
WRONG = _traj(
    Step(1, (), "2 log(x-1) = log k"),
    Step(2, (), "k in [-300, 300]"),
    Step(3, (), "exactly one solution"),
    Step(4, (1,), "(x-1)^2 = k"),
    Step(5, (4,), "x = 1 ± sqrt(k)"),
    Step(6, (5,), "two solutions for any k"),
    Step(7, (3, 6), r"The final answer is $\boxed{0}$."),
)

# Faulty: step 2 cites 9 (missing), step 3 cites 4 (later), step "x" is not an integer id.
# Well-formed edges: 1->2, 2->4, 4->x, 4->6, 3->6 (5 edges); dashed: ghost 9 -> 2, 4 -> 3.
# Out-degrees by position: 0:1, 1:1, 2:1, 3:2, 4:0 -> the only dead end is position 4 ("x").
# Faulty positions: 1, 2 (named "step 2:", "step 3:") and 4 ("step at position 5:").
# Depths: pos0 0, pos1 1, pos2 0 (no well-formed parent), pos3 2, pos4 3, pos5 1 + max(2, 0) = 3;
# the ghost sits one level above its child step 2: level 0.
FAULTY = _traj(
    Step(1, (), "a"),
    Step(2, (1, 9), "b"),
    Step(3, (4,), "c"),
    Step(4, (2,), "d"),
    Step("x", (4,), "e"),
    Step(6, (4, 3), r"\boxed{1}"),
)

HOSTILE_TEXTS = (
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "href=javascript:alert(1)",
    "costs $5 and $6 </script><script>parent.__pwned=1</script>",
    "see https://evil.example/x.js and HREF='javascript:1'",
)

HOSTILE = _traj(
    Step(1, (), HOSTILE_TEXTS[0], HOSTILE_TEXTS[1]),
    Step(2, (1,), HOSTILE_TEXTS[2], HOSTILE_TEXTS[3]),
    Step(3, (1,), HOSTILE_TEXTS[3], HOSTILE_TEXTS[4]),
    Step(4, (2, "<b>q</b>"), HOSTILE_TEXTS[4], HOSTILE_TEXTS[2]),
)


# -- node kinds, counts and levels ---------------------------------------------------------------


def test_imperfect_kinds_levels_and_edges():
    page = render_dag_html(IMPERFECT, final_correct=True)
    nodes = _nodes(page)
    assert [n["id"] for n in nodes] == list(range(10))
    assert [n["label"] for n in nodes] == [f"S{i}" for i in range(1, 11)]
    assert _by_kind(nodes) == {
        "given": [0, 1, 2],
        "step": [3, 4, 5, 6, 8],
        "dead_end": [7],
        "final_correct": [9],
    }
    assert [n["level"] for n in nodes] == [0, 0, 0, 1, 1, 1, 2, 3, 3, 4]
    assert [n["dead_end"] for n in nodes].count(True) == 1
    assert not any(n["fault"] for n in nodes)
    edges = _data(page, "edges")
    assert len(edges) == 11
    assert {(e["from"], e["to"]) for e in edges} >= {(2, 8), (3, 8), (6, 8), (8, 9), (6, 7)}
    assert not any(e["bad"] for e in edges)


@pytest.mark.parametrize(
    ("final_correct", "final_kind", "fill"),
    [
        (True, "final_correct", "#59a14f"),
        (False, "final_incorrect", "#e15759"),
        (None, "final", "#9e9e9e"),  # a darker grey than a step's #e0e0e0
    ],
)
def test_final_step_colour(final_correct, final_kind, fill):
    page = render_dag_html(WRONG, final_correct=final_correct)
    nodes = _nodes(page)
    assert _by_kind(nodes) == {
        "given": [0, 2],
        "dead_end": [1],
        "step": [3, 4, 5],
        final_kind: [6],
    }
    assert _fill(page, nodes[6]["kind"]) == fill
    assert _fill(page, nodes[1]["kind"]) == "#f28e2b"  # dead end orange
    assert _fill(page, nodes[0]["kind"]) == "#a6cee3"  # given light blue


def test_dead_ends_given_as_step_ids_override_the_graph():
    # Step ids, as in Score.dead_ends: id 3 is position 2; id 99 names nothing.
    nodes = _nodes(render_dag_html(WRONG, dead_ends=[3, 99]))
    assert _by_kind(nodes)["dead_end"] == [2]
    assert nodes[1]["kind"] == "given"


def test_faulty_trajectory_outlines_faults_and_dashes_bad_references():
    page = render_dag_html(FAULTY)
    nodes = _nodes(page)
    assert len(nodes) == 7  # six steps and one "missing 9" placeholder
    assert _by_kind(nodes) == {
        "given": [0],
        "step": [1, 2, 3],
        "dead_end": [4],
        "final": [5],
        "missing": [6],
    }
    assert [n["position"] for n in nodes if n["fault"]] == [1, 2, 4]
    assert nodes[1]["faults"] == ["step 2: parent 9 does not exist"]
    ghost = nodes[6]
    assert ghost["label"] == "missing 9" and ghost["position"] == -1
    assert [n["level"] for n in nodes] == [0, 1, 0, 2, 3, 3, 0]
    assert nodes[4]["label"] == "Sx"
    edges = _data(page, "edges")
    solid = sorted((e["from"], e["to"]) for e in edges if not e["bad"])
    dashed = sorted((e["from"], e["to"]) for e in edges if e["bad"])
    assert solid == [(0, 1), (1, 3), (2, 5), (3, 4), (3, 5)]
    assert dashed == [(3, 2), (6, 1)]
    assert "fault: step 2: parent 9 does not exist" in nodes[1]["title"]


def test_cycle_marks_every_step_on_it():
    # 1 cites 2 (later) and 2 cites 1: validation reports the reference and the cycle.
    cyc = _traj(Step(1, (2,), "a"), Step(2, (1,), "b"), Step(3, (2,), "c"))
    nodes = _nodes(render_dag_html(cyc))
    assert [n["fault"] for n in nodes] == [True, True, False]


def test_ghost_above_a_source_step_shifts_every_level_down():
    # Step 1 cites a missing 0: its ghost would sit at level -1, so everything moves down one.
    nodes = _nodes(render_dag_html(_traj(Step(1, (0,), "a"), Step(2, (1,), "b"))))
    assert [(n["kind"], n["level"]) for n in nodes] == [("step", 1), ("final", 2), ("missing", 0)]


def test_missing_parent_shared_by_two_steps_gets_one_placeholder():
    t = _traj(Step(1, (), "a"), Step(2, (7,), "b"), Step(3, (1, 2, 7, 7), "c"))
    page = render_dag_html(t)
    assert [n["label"] for n in _nodes(page)].count("missing 7") == 1
    dashed = [(e["from"], e["to"]) for e in _data(page, "edges") if e["bad"]]
    assert sorted(dashed) == [(3, 1), (3, 2)]


def test_odd_ids_and_parents_do_not_crash():
    # A list id (not an integer, unhashable) and a dict parent: both faults, both drawn.
    t = _traj(Step([1], (), "a"), Step(2, ({"p": 1},), "b"), Step(3, (2,), "c"))
    nodes = _nodes(render_dag_html(t))
    assert [n["label"] for n in nodes] == ["S[1]", "S2", "S3", "missing {'p': 1}"]
    assert [n["fault"] for n in nodes] == [True, True, False, False]
    assert nodes[0]["kind"] == "dead_end"  # position 0 is cited by nothing


def test_null_parent_is_a_missing_parent():
    # JSON `"direct_dependent_steps": [null]` -> a placeholder "missing None", one dashed edge.
    page = render_dag_html(_traj(Step(1, (), "a"), Step(2, (None, 1), "b")))
    nodes = _nodes(page)
    assert [(n["kind"], n["label"], n["level"]) for n in nodes] == [
        ("given", "S1", 0),
        ("final", "S2", 1),
        ("missing", "missing None", 0),
    ]
    dashed = [(e["from"], e["to"]) for e in _data(page, "edges") if e["bad"]]
    assert dashed == [(2, 1)]


def test_dead_end_list_naming_the_final_step_keeps_it_final():
    nodes = _nodes(render_dag_html(WRONG, dead_ends=[2, 7], final_correct=True))
    assert [(n["kind"], n["dead_end"]) for n in nodes if n["id"] in (1, 6)] == [
        ("dead_end", True),
        ("final_correct", False),
    ]


# -- options and legend ------------------------------------------------------------------------


def test_short_trajectories_are_layered_top_down_long_ones_in_reading_order():
    data = _all(render_dag_html(IMPERFECT))
    assert data["view"]["layout"] == "layered"
    boxes = data["layouts"]["layered"]["boxes"]
    levels = [n["level"] for n in data["nodes"]]
    # One row per level, top-down: a box's top is its level times the layer step.
    assert [b[1] for b in boxes] == [lv * render.geo.LAYER_STEP for lv in levels]
    long = _traj(*(Step(i, (i - 1,) if i > 1 else (), f"s{i}") for i in range(1, 101)))
    data = _all(render_trajectory_html(long))
    assert data["view"]["layout"] == "reading"
    assert "layered" not in data["layouts"]  # over LAYERED_MAX nodes
    assert [b[1] for b in data["layouts"]["reading"]["boxes"][:3]] == [0, 26, 52]


def test_layout_can_be_forced_and_scale_and_selection_passed():
    data = _all(render_trajectory_html(IMPERFECT, layout="reading", scale=0.5, selected_step="9"))
    assert data["view"] == {"layout": "reading", "selected": 8, "scale": 0.5,
                            "show_steps": True, "height": 600, "fit_window": False,
                            "min_height": 440, "max_height": 1600, "link_steps": False,
                            "find": "", "find_hits": [], "bar": None, "tag_stripe": False,
                            "label_summary": False}  # fmt: skip
    assert _all(render_trajectory_html(IMPERFECT, selected_step=99))["view"]["selected"] is None
    assert _all(render_dag_html(IMPERFECT))["view"]["show_steps"] is False


def test_answer_path_and_pruned_layouts():
    # IMPERFECT: the final step 10 depends on 2, 5, 9 <- 3, 4, 7 <- 6 <- 1: all but step 8.
    data = _all(render_trajectory_html(IMPERFECT))
    assert data["answer_path"] == [0, 1, 2, 3, 4, 5, 6, 8, 9]
    for name in ("reading_pruned", "layered_pruned"):
        lay = data["layouts"][name]
        assert [i for i, b in enumerate(lay["boxes"]) if b is None] == [7]
        # the one edge into the dead end (7 -> 8, positions 6 -> 7) is left out
        left_out = [
            (e["from"], e["to"])
            for e, p in zip(data["edges"], lay["paths"], strict=False)
            if p is None
        ]
        assert left_out == [(6, 7)]


def test_root_says_how_many_nodes_it_draws():
    assert 'data-nodes="7"' in render_dag_html(FAULTY)  # 6 steps and 1 placeholder
    assert 'data-nodes="0"' in render_dag_html(_traj())


def test_every_legend_swatch_reads_apart():
    """No two rows of the legend share a swatch (fill, border and style): "Final step, not
    scored" once had the plain step's grey fill."""
    swatches = re.findall(r'class="dm-swatch" style="([^"]*)"></span>([^<]*)<', legend_html())
    assert [label for _, label in swatches] == [e.label for e in LEGEND]
    assert len({css for css, _ in swatches}) == len(LEGEND)
    fills = {label: re.search(r"background:(#\w+)", css)[1] for css, label in swatches}
    # every final step has a fill of its own, like a scored one (green, red)
    finals = [e.label for e in LEGEND if e.kind.startswith("final")]
    assert len({fills[f] for f in finals} | {fills["Step"]}) == len(finals) + 1


def test_legend_covers_every_kind_and_is_in_the_page():
    assert {e.kind for e in LEGEND} == set(KINDS) | {"fault"}
    page = render_dag_html(IMPERFECT)
    assert legend_html(10) in page
    for entry in LEGEND:
        assert entry.label in page
        assert entry.color.startswith("#")


def test_empty_trajectory_renders_with_a_note():
    page = render_dag_html(_traj())
    assert _nodes(page) == []
    assert "No steps to draw." in page


def test_large_trajectory_renders_with_a_note():
    n = 2000
    steps = [Step(1, (), "given")] + [Step(i, (i - 1, i // 2), f"s{i}") for i in range(2, n + 1)]
    page = render_dag_html(_traj(*steps), final_correct=False)
    nodes = _nodes(page)
    assert len(nodes) == n
    assert nodes[-1]["kind"] == "final_incorrect"
    assert f"Large graph: {n} steps" in page
    assert _all(page)["view"]["layout"] == "reading"


def test_long_texts_are_cut():
    page = render_dag_html(_traj(Step(1, (), "q" * 5000, "z" * 5000)))
    title = _nodes(page)[0]["title"]
    # MAX_TEXT - 1 characters and an ellipsis each
    assert title.count("q") == render.MAX_TEXT - 1 and title.count("z") == render.MAX_TEXT - 1
    assert title.count("…") == 2
    assert len(title) < 2 * render.MAX_TEXT + 50


def test_hover_title_is_plain_text_with_id_text_and_justification():
    t = _traj(Step(1, (), "a < b & c", "given in the problem"), Step(2, (1,), "so b", ""))
    nodes = _nodes(render_dag_html(t))
    assert nodes[0]["title"] == "Step 1\na < b & c\n— why: given in the problem"
    assert nodes[1]["title"] == "Step 2\nso b\n— why: (no justification given)"


# -- safety ------------------------------------------------------------------------------------


class _Markup(HTMLParser):
    """Collects the tags and attributes a browser would build from the page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_hostile_text_stays_data():
    page = render_dag_html(HOSTILE, final_correct=False)
    parser = _Markup()
    parser.feed(page)
    tags = [t for t, _ in parser.tags]
    # Only the page's own skeleton: 2 scripts (the data, the view's code), no img.
    assert set(tags) <= {"html", "head", "meta", "script", "style", "body", "div", "span"}
    assert tags.count("script") == 2
    assert page.count("</script>") == 2
    for _, attrs in parser.tags:
        assert not any(a.startswith("on") for a in attrs)
        assert "src" not in attrs and "href" not in attrs
    for raw in ("<img", "<script>alert", "</script><script>parent", "<b>q</b>"):
        assert raw not in page
    # ... and the hover titles still carry the exact text (href broken by a zero-width space).
    nodes = _nodes(page)
    assert HOSTILE_TEXTS[0] in nodes[0]["title"] and HOSTILE_TEXTS[1] in nodes[0]["title"]
    assert "href=javascript:alert(1)" in nodes[1]["title"]  # text, shown with textContent
    assert "$5 and $6 </script><script>parent.__pwned=1</script>" in nodes[2]["title"]
    assert "https://evil.example/x.js" in nodes[3]["title"]
    assert nodes[2]["text"] == HOSTILE_TEXTS[3] and nodes[2]["why"] == HOSTILE_TEXTS[4]
    assert nodes[-1]["kind"] == "missing" and nodes[-1]["label"] == "missing <b>q</b>"


def test_the_view_code_never_uses_inner_html():
    page = render_dag_html(HOSTILE)
    code = re.search(r"<script>(.*?)</script>", page, re.S).group(1)
    assert "innerHTML" not in code and "outerHTML" not in code and "insertAdjacentHTML" not in code
    assert "textContent" in code


def test_the_word_innerhtml_in_a_step_does_not_stop_the_graph():
    # Issue 16 item 10: it used to raise (the whole page was refused).
    t = _traj(Step(1, (), "set el.innerHTML = x"), Step(2, (1,), "innerHTML", "innerHTML"))
    nodes = _nodes(render_trajectory_html(t, final_correct=True))
    assert [n["text"] for n in nodes] == ["set el.innerHTML = x", "innerHTML"]


@pytest.mark.parametrize(
    "traj", [IMPERFECT, FAULTY, HOSTILE, _traj()], ids=lambda t: str(len(t.steps))
)
def test_offline_no_url_left(traj):
    page = render_dag_html(traj)
    assert "http://" not in page.lower() and "https://" not in page.lower()
    assert "bootstrap" not in page.lower() and "jsdelivr" not in page.lower()
    # The SVG namespace string survives as a JavaScript escape, not as a URL.
    assert '"http:\\/\\/www.w3.org/2000/svg"' in page
    assert page.startswith("<!DOCTYPE html>")


def test_ids_are_ints_and_labels_short():
    nodes = _nodes(render_dag_html(HOSTILE))
    assert all(type(n["id"]) is int for n in nodes)
    assert [n["label"] for n in nodes[:4]] == ["S1", "S2", "S3", "S4"]


def test_deep_chains_default_to_reading_order_wide_short_ones_to_layers():
    # 13 steps in one chain: 13 layers, over LAYERED_MAX_LAYERS (12) -> reading order.
    chain = _traj(*(Step(i, (i - 1,) if i > 1 else (), "s") for i in range(1, 14)))
    assert _all(render_trajectory_html(chain))["view"]["layout"] == "reading"
    # 12 steps in one chain: 12 layers -> layered; the layered layout is offered for both.
    chain = _traj(*(Step(i, (i - 1,) if i > 1 else (), "s") for i in range(1, 13)))
    data = _all(render_trajectory_html(chain))
    assert data["view"]["layout"] == "layered" and "layered" in data["layouts"]


# -- formula budget and the landing choice ----------------------------------------------------


def test_typeset_plan_stops_at_the_budget_and_says_so():
    # Formulas per step: 2, 1, 0, 3, 0. Budget 3: steps 0 and 1 (3 formulas) are typeset,
    # step 2 has none but comes before the first that does not fit; step 3 (3 more) does not
    # fit, so it and everything after it show raw.
    texts = ["$a$ and $b$", "$c$", "plain", "$d$ $e$ $f$", "plain"]
    plan = render.typeset_plan(texts, 0, 5, budget=3)
    assert plan.typeset == (True, True, True, False, False)
    assert (plan.formulas, plan.over_budget) == (3, True)
    # A page that fits is typeset whole.
    assert render.typeset_plan(texts, 0, 3, budget=3).over_budget is False
    # The page window is honoured: steps 3..4 alone fit a budget of 3.
    assert render.typeset_plan(texts, 3, 5, budget=3).typeset == (True, True)


def test_a_2_mb_trajectory_of_240000_formulas_typesets_at_most_the_budget():
    # 120 steps of 2,000 formulas "$x_{k}$ " (9-10 chars each): about 2.3 MB, 240,000 formulas.
    steps = [
        Step(i, (i - 1,) if i > 1 else (), " ".join(f"$x_{{{k}}}$" for k in range(2000)))
        for i in range(1, 121)
    ]
    assert sum(len(s.text) for s in steps) > 2_000_000
    plan = render.typeset_plan([s.text for s in steps], 0, render.STEPS_PER_PAGE)
    assert plan.formulas == 0 and plan.over_budget  # 2,000 > 300 already in the first step
    assert not any(plan.typeset)
    # The view carries each step's text cut to MAX_STEP_TEXT characters, shown as plain text.
    page = render_trajectory_html(_traj(*steps))
    assert len(page) < 120 * render.MAX_STEP_TEXT * 1.1 + 500_000
    assert all(len(n["text"]) <= render.MAX_STEP_TEXT for n in _nodes(page))


# -- math (issue 34 item 2) ----------------------------------------------------------------


MATH_STEPS = (
    Step(1, (), r"Let \( p(x) \) be the polynomial, with \[ p(5) = \dfrac{24}{5} \]."),
    Step(2, (1,), r"So \( <script>parent.__pwned=1</script> \) and $\href{javascript:1}{x}$"),
    Step(3, (2,), "no math here, it costs $5"),
    Step(4, (3,), r"The final answer is \(\boxed{\frac{24}{5}}\).", r"since \(a \le b\)"),
)


def test_steps_with_formulas_carry_segments_for_the_typesetter():
    nodes = _nodes(render_trajectory_html(_traj(*MATH_STEPS), final_correct=True))
    assert nodes[0]["math"] == [
        [0, "Let "],
        [1, "p(x)"],
        [0, " be the polynomial, with "],
        [2, r"p(5) = \dfrac{24}{5}"],
        [0, "."],
    ]
    # markup or a link inside a delimiter is no formula: the step has nothing to typeset
    assert "math" not in nodes[1] and "math" not in nodes[2]
    assert nodes[3]["math"][1] == [1, r"\boxed{\frac{24}{5}}"]
    assert nodes[3]["why_math"] == [[0, "since "], [1, r"a \le b"]]


def test_hover_and_labels_show_formulas_as_text_not_tex():
    nodes = _nodes(render_trajectory_html(_traj(*MATH_STEPS), final_correct=True))
    # by hand: \( p(x) \) -> p(x); \dfrac{24}{5} -> 24/5; \boxed{..} -> its content; \le -> ≤
    assert nodes[0]["snippet"] == "Let p(x) be the polynomial, with p(5) = 24/5."
    assert "The final answer is 24/5." in nodes[3]["title"]
    assert "why: since a ≤ b" in nodes[3]["title"]
    assert "\\(" not in nodes[3]["title"]


def test_a_page_with_math_carries_katex_and_stays_offline_and_inert():
    page = render_trajectory_html(_traj(*MATH_STEPS), final_correct=True)
    assert "window.dmKatex=" in page  # the KaTeX Streamlit ships, inlined
    assert not re.search(r"https?://", page, re.I)
    assert "<script>parent" not in page  # the hostile step stays JSON data
    assert page.count("</script>") == 3  # data, KaTeX, the view
    # a page without formulas does not carry KaTeX's 250 kB
    plain_page = render_trajectory_html(_traj(Step(1, (), "a"), Step(2, (1,), "b")))
    assert "dmKatex=" not in plain_page and plain_page.count("</script>") == 2


# -- state in the address, and find (issue 34 item 6/7) -------------------------------------


def test_a_search_marks_its_steps_and_selects_the_first():
    # IMPERFECT's texts: which hold "v9"? Read from the trajectory itself, by hand below.
    t = _traj(
        Step(1, (), "Let x be 3"),
        Step(2, (1,), "so y = 2", "since X is odd"),
        Step(3, (2,), "The final answer is $5$."),
    )
    view = _all(render_trajectory_html(t, find="  x ", link_steps=True))["view"]
    # "x" in step 1's text and in step 2's thinking ("X", any case); not in step 3
    assert view["find_hits"] == [0, 1] and view["selected"] == 0 and view["find"] == "x"
    assert view["link_steps"] is True
    # a step= link wins over the first hit
    assert _all(render_trajectory_html(t, find="x", selected_step=3))["view"]["selected"] == 2
    # nodes carry their step id for the address
    assert [n["sid"] for n in _nodes(render_trajectory_html(t))] == ["1", "2", "3"]


# -- step fields: a bar, a tag stripe, the summary (issue 34 item 3) ---------------------------

# Three chunks as Thought Anchors writes them (fields in the source's order; NaN and a bool
# are not numbers to draw; step 3 has no importance at all).
FIELDED = _traj(
    Step(1, (), "set up", tags=("problem_setup",),
         fields=(("importance", 0.5), ("summary", "  read the\nproblem "), ("ok", True))),
    Step(2, (1,), "compute", tags=("active_computation", "x"),
         fields=(("importance", -2.0), ("accuracy", float("nan")))),
    Step(3, (2,), "answer", tags=("active_computation",), fields=(("accuracy", 0.25),)),
)  # fmt: skip


def test_step_encodings_offer_what_the_steps_have():
    offer = render.step_encodings(FIELDED)
    # accuracy is a number on step 3 (NaN on step 2 is not); "ok" is a bool, not a number.
    assert offer == render.StepEncodings(("importance", "accuracy"), True, True)
    assert render.step_encodings(IMPERFECT) == render.StepEncodings((), False, False)


def test_field_values_ranges_and_tag_colours_in_the_data():
    data = render.graph_data(FIELDED)
    assert [n["fields"] for n in data["nodes"]] == [
        {"importance": 0.5}, {"importance": -2.0}, {"accuracy": 0.25}
    ]  # fmt: skip
    assert data["fields"]["importance"] == {"min": -2.0, "max": 0.5, "absmax": 2.0, "n": 2}
    assert [n["summary"] for n in data["nodes"]] == ["read the problem", "", ""]
    # First tags: active_computation twice, problem_setup once -> the first two colours.
    assert data["tag_colors"] == [["active_computation", render.TAG_COLORS[0], 2],
                                  ["problem_setup", render.TAG_COLORS[1], 1]]  # fmt: skip
    assert [n["tag_color"] for n in data["nodes"]] == [render.TAG_COLORS[1], *[
        render.TAG_COLORS[0]] * 2]  # fmt: skip
    assert "importance: -2" in data["nodes"][1]["title"]
    assert "summary: read the problem" in data["nodes"][0]["title"]


def test_the_chosen_encodings_reach_the_view_and_the_legend():
    page = render_trajectory_html(FIELDED, bar_field="importance", color_by="tag",
                                  label_by="summary")  # fmt: skip
    view = _all(page)["view"]
    assert view["bar"] == {"field": "importance", "absmax": 2.0}
    assert view["tag_stripe"] is True and view["label_summary"] is True
    assert "Bar: importance, length |value| / 2 (the largest); range -2 to 0.5; 2 of 3" in page
    assert "Bar: negative value" in page
    assert "Tag: active_computation (2)" in page and "Tag: problem_setup (1)" in page
    # A field the steps lack, or tags and summaries they lack, draw nothing and say nothing.
    page = render_trajectory_html(IMPERFECT, bar_field="importance", color_by="tag",
                                  label_by="summary")  # fmt: skip
    view = _all(page)["view"]
    assert (view["bar"], view["tag_stripe"], view["label_summary"]) == (None, False, False)
    legend = page[page.index('id="dagmath-legend"') : page.index('id="dm-bar"')]
    assert "Bar:" not in legend and "Tag:" not in legend


def test_field_names_and_tags_from_the_source_are_legend_text_not_markup():
    evil = "<img src=x onerror=alert(1)>"
    traj = _traj(Step(1, (), "a", tags=(evil,), fields=((evil, 1.0),)), Step(2, (1,), "b"))
    page = render_trajectory_html(traj, bar_field=evil, color_by="tag")
    assert evil not in page and html_escape(evil) in page
