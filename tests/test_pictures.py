"""The graph as a picture (dagmath_viz.draw.pictures, ``export-html --format svg|png``)."""

from __future__ import annotations

import re
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dagmath_viz.cli import main
from dagmath_viz.draw import pictures
from dagmath_viz.draw.render import graph_data
from dagmath_viz.schema import DagMathError, Step, Trajectory

REPO = Path(__file__).resolve().parents[1]
GSM_BFS = REPO / "sample_data" / "runs" / "gsm-bfs"
SVG = "{http://www.w3.org/2000/svg}"

# Hand-worked: S1, S2 givens; S3 <- S1 (nothing uses it: a dead end); S4 <- S1, S2 (final).
# 4 nodes, 3 edges; colours: 2 given, 1 dead end, 1 final (incorrect).
FOUR = Trajectory(
    "m",
    "d",
    "p",
    0,
    (
        Step(1, (), "<script>alert(1)</script> a"),
        Step(2, (), 'b <a href="x">'),
        Step(3, (1,), "c $"),
        Step(4, (1, 2), "d"),
    ),
)


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # also proves it is well-formed XML


def test_svg_draws_every_node_and_edge_with_the_view_geometry():
    svg = pictures.trajectory_svg(FOUR, final_correct=False)
    root = parse(svg)
    nodes = root.findall(f".//{SVG}g[@class]")
    kinds = [g.get("class") for g in nodes if g.get("class", "").startswith("dm-node")]
    assert sorted(kinds) == sorted(
        ["dm-node k-given", "dm-node k-given", "dm-node k-dead_end", "dm-node k-final_incorrect"]
    )
    edges = root.findall(f".//{SVG}path[@class='dm-edge']")
    assert len(edges) == 3
    # the boxes are the view's own (layered layout for four steps)
    lay = graph_data(FOUR, final_correct=False)["layouts"]["layered"]
    rects = [g.find(f"{SVG}rect") for g in nodes if g.get("class", "").startswith("dm-node")]
    drawn = sorted((float(r.get("x")), float(r.get("y"))) for r in rects)
    assert drawn == sorted((b[0], b[1]) for b in lay["boxes"])
    assert sorted(e.get("d") for e in edges) == sorted(lay["paths"])


def test_svg_text_is_escaped_and_nothing_runs():
    svg = pictures.trajectory_svg(FOUR, final_correct=False)
    assert "<script" not in svg and "<a " not in svg
    root = parse(svg)
    assert root.find(f".//{SVG}script") is None and root.find(f".//{SVG}a") is None
    titles = [t.text for t in root.iter(f"{SVG}title")]
    assert any("<script>alert(1)</script> a" in t for t in titles)  # shown as text


def test_svg_of_a_long_chain_is_in_reading_order():
    steps = tuple(Step(i, (i - 1,) if i > 1 else (), f"step {i}") for i in range(1, 81))
    svg = pictures.trajectory_svg(Trajectory("m", "d", "p", 0, steps))
    root = parse(svg)
    ys = [
        float(g.find(f"{SVG}rect").get("y"))
        for g in root.iter(f"{SVG}g")
        if (g.get("class") or "").startswith("dm-node")
    ]
    assert len(ys) == 80 and ys == sorted(ys)  # one row per step, top to bottom
    assert "step 80" in svg  # each box carries its text snippet


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_png_is_the_svg_at_twice_its_size():
    if pictures.find_chromium() is None:
        pytest.skip("no Chromium: PNG export is unavailable (SVG remains)")
    svg = pictures.trajectory_svg(FOUR, final_correct=False)
    width, height = (int(v) for v in re.search(r'width="(\d+)" height="(\d+)"', svg).groups())
    assert png_size(pictures.svg_to_png(svg)) == (2 * width, 2 * height)


def test_png_without_chromium_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv("DAGMATH_CHROMIUM", str(tmp_path / "no-such-browser"))
    with pytest.raises(DagMathError, match="PNG needs Chromium"):
        pictures.svg_to_png("<svg/>", "x.png")


def test_export_html_format_svg(tmp_path):
    out = tmp_path / "g.svg"
    args = ["export-html", str(GSM_BFS), "--problem", "10", "--format", "svg", "-o", str(out)]
    assert main([*args, "-q"]) == 0
    root = parse(out.read_text(encoding="utf-8"))
    # problem 10 of the bundled gsm-bfs run, read by hand from its file: 9 steps; S5 (a given)
    # and S8 (<- S6) are cited by no later step, so they are its two dead ends
    nodes = [g for g in root.iter(f"{SVG}g") if (g.get("class") or "").startswith("dm-node")]
    assert len(nodes) == 9
    assert sum(g.get("class") == "dm-node k-dead_end" for g in nodes) == 2
    assert main([*args[:-4], "--report", "--format", "svg", "-o", str(out)]) == 2


def _legend_swatches(root: ET.Element) -> dict[str, tuple[str, str, str]]:
    """The picture's legend: each label's swatch as (fill, stroke, stroke width), read by
    position (a swatch's rect comes right before its label's text)."""
    legend = next(g for g in root.iter(f"{SVG}g") if g.get("transform", "").startswith("translate"))
    children = list(legend)
    out = {}
    for rect, text in zip(children[::2], children[1::2], strict=True):
        assert rect.tag == f"{SVG}rect" and text.tag == f"{SVG}text"
        out[text.text or ""] = (rect.get("fill"), rect.get("stroke"), rect.get("stroke-width"))
    return out


def _box(root: ET.Element, kind: str) -> tuple[str | None, str | None]:
    g = next(g for g in root.iter(f"{SVG}g") if g.get("class") == f"dm-node k-{kind}")
    rect = g.find(f"{SVG}rect")
    assert rect is not None
    return rect.get("fill"), rect.get("stroke")


def test_unscored_final_step_reads_apart_from_a_step_in_the_legend_and_the_drawing():
    # S1 <- nothing; S2 <- S1; S3 <- S2: given, step, final (no reference answer: unscored)
    chain = Trajectory("m", "d", "p", 0, (Step(1, (), "a"), Step(2, (1,), "b"), Step(3, (2,), "c")))
    root = parse(pictures.trajectory_svg(chain, final_correct=None))
    swatches = _legend_swatches(root)
    step, final = swatches["Step"], swatches["Final step, not scored"]
    # a fill of its own, as the scored finals have (green, red), not the step's grey
    assert final[0] != step[0]
    assert len(set(swatches[k][0] for k in ("Step", "Final step, not scored",
               "Final step, correct", "Final step, incorrect"))) == 4  # fmt: skip
    # each swatch is drawn as its boxes are: same fill and border colour
    assert _box(root, "step") == step[:2]
    assert _box(root, "final") == final[:2]
    assert _box(root, "final") != _box(root, "step")
    scored = parse(pictures.trajectory_svg(chain, final_correct=True))
    assert _box(scored, "final_correct") == _legend_swatches(scored)["Final step, correct"][:2]
