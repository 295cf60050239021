"""A trajectory's graph as a picture: SVG from the view's own geometry, PNG through Chromium.

The SVG draws exactly what :func:`dagmath_viz.draw.render.graph_data` computes (boxes, routed
edges, colours, the legend), so the picture in a paper is the graph the app and its geometry
tests check. Text is XML-escaped. PNG: the SVG rasterised by a local Chromium (headless,
no network), at twice the CSS size so that labels stay legible when printed; without
Chromium, :func:`svg_to_png` says so and SVG remains.
"""

from __future__ import annotations

import html
import math
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dagmath_viz.draw.render import LEGEND, choose_layout, graph_data, swatch_style
from dagmath_viz.schema import DagMathError, Trajectory

__all__ = ["CHROMIUM_NAMES", "PNG_SCALE", "find_chromium", "svg_to_png", "trajectory_svg"]

#: Browsers tried, in order, for PNG (the first found on ``PATH``, or ``$DAGMATH_CHROMIUM``).
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Device pixels per CSS pixel of a PNG (lowered for very tall pictures; see below).
PNG_SCALE = 2.0
#: Chromium will not capture a screenshot much taller than this many device pixels.
_MAX_DEVICE_PX = 16_000

_M = 14  # margin around the drawing, as the view's
_LEGEND_ROW = 18
_NS = "http://www.w3.org/2000/svg"  # an XML namespace (a name), never fetched


def trajectory_svg(
    traj: Trajectory,
    *,
    dead_ends: Iterable[int] | None = None,
    final_correct: bool | None = None,
    layout: str = "auto",
) -> str:
    """The trajectory's graph as a standalone SVG document (legend on top).

    Example:
        >>> from dagmath_viz.schema import Step, Trajectory
        >>> t = Trajectory("m", "d", "1", 0, (Step(1, (), "a<b"), Step(2, (1,), "b")))
        >>> svg = trajectory_svg(t, final_correct=True)
        >>> svg.count('class="dm-node'), "a&lt;b" in svg
        (2, True)
    """
    data = graph_data(traj, dead_ends=dead_ends, final_correct=final_correct)
    name = choose_layout(data) if layout == "auto" else layout
    if name not in data["layouts"]:
        name = "reading"
    lay = data["layouts"][name]
    inner = max(lay["width"], 640.0)  # the legend's room; a narrower graph sits centred
    legend, legend_h = _legend(inner)
    width = inner + 2 * _M
    left = _M + (inner - lay["width"]) / 2
    height = lay["height"] + 2 * _M + legend_h
    out = [
        f'<svg xmlns="{_NS}" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="sans-serif" font-size="13">',
        '<rect width="100%" height="100%" fill="#ffffff"/>',
        _markers(),
        legend,
        f'<g transform="translate({left:g},{_M + legend_h})">',
    ]
    for edge, path in zip(data["edges"], lay["paths"], strict=True):
        if path is None:
            continue
        colour, dash, arrow = ("#d62728", ' stroke-dasharray="5 4"', "b") if edge["bad"] else (
            "#9a9a9a", "", "a"
        )  # fmt: skip
        out.append(
            f'<path class="dm-edge" d="{html.escape(path)}" fill="none" stroke="{colour}" '
            f'stroke-width="1.3"{dash} marker-end="url(#dm-arrow-{arrow})"/>'
        )
    reading = lay["kind"] == "reading"
    for node, box in zip(data["nodes"], lay["boxes"], strict=True):
        if box is not None:
            out.append(_node(node, box, data["colors"][node["kind"]], reading))
    out.append("</g></svg>")
    return "\n".join(out)


def _node(node: dict[str, Any], box: list[float], colours: list[str], reading: bool) -> str:
    x, y, w, h = box
    fill, stroke = colours
    width = 3.5 if node["fault"] else 2.5 if node["kind"].startswith("final") else 1.2
    stroke = "#d62728" if node["fault"] else stroke
    dash = ' stroke-dasharray="4 3"' if node["kind"] == "missing" else ""
    label = html.escape(node["label"])
    if reading:
        snip = html.escape(_snippet(node, w))
        text = (
            f'<text x="{x + 6}" y="{y + h / 2}" dominant-baseline="central" fill="#111">'
            f'<tspan font-weight="bold">{label}</tspan>'
            f'<tspan dx="7" fill="#333">{snip}</tspan></text>'
        )
    else:
        text = (
            f'<text x="{x + w / 2}" y="{y + h / 2}" dominant-baseline="central" '
            f'text-anchor="middle" fill="#111">{label}</text>'
        )
    return (
        f'<g class="dm-node k-{html.escape(node["kind"])}"><title>'
        f"{html.escape(node['title'])}</title>"
        f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="4" fill="{fill}" '
        f'stroke="{stroke}" stroke-width="{width}"{dash}/>{text}</g>'
    )


def _snippet(node: dict[str, Any], box_width: float) -> str:
    """As much of the step's text as fits its box (the view's own rule): its plain-text
    snippet (formulas as readable text, markdown emphasis markers dropped)."""
    text = " ".join(str(node.get("snippet") or node.get("text") or "").split())
    room = math.floor((box_width - 14 - 9 * len(node["label"])) / 7)
    return text if len(text) <= room else text[: max(room - 1, 0)] + "…"


def _markers() -> str:
    parts = ["<defs>"]
    for key, colour in (("a", "#9a9a9a"), ("b", "#d62728")):
        parts.append(
            f'<marker id="dm-arrow-{key}" viewBox="0 0 10 10" refX="9" refY="5" '
            'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
            f'<path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>'
        )
    parts.append("</defs>")
    return "".join(parts)


def _legend(width: float) -> tuple[str, float]:
    """The legend as rows of swatches and text that wrap within ``width``."""
    swatch = {e.kind: e for e in LEGEND}
    items, x, y = [], 0.0, 0.0
    for kind, entry in swatch.items():
        item_w = 22 + 6.6 * len(entry.label) + 16
        if x and x + item_w > width:
            x, y = 0.0, y + _LEGEND_ROW
        # the swatch as the boxes are drawn: fill, border colour and width (the view's)
        fill, border, stroke, dashed = swatch_style(kind)
        dash = ' stroke-dasharray="3 2"' if dashed else ""
        items.append(
            f'<rect class="dm-swatch k-{kind}" x="{x}" y="{y + 3}" width="14" height="10" '
            f'fill="{fill}" stroke="{border}" stroke-width="{stroke}"{dash}/>'
            f'<text x="{x + 20}" y="{y + 8}" dominant-baseline="central" font-size="12" '
            f'fill="#222">{html.escape(entry.label)}</text>'
        )
        x += item_w
    height = y + _LEGEND_ROW + 6
    return f'<g transform="translate({_M},{_M / 2})">' + "".join(items) + "</g>", height


# --------------------------------------------------------------------------- PNG


def find_chromium() -> str | None:
    """The Chromium to rasterise with: ``$DAGMATH_CHROMIUM`` or the first of
    :data:`CHROMIUM_NAMES` on ``PATH``."""
    wanted = os.environ.get("DAGMATH_CHROMIUM")
    if wanted:
        return wanted if Path(wanted).is_file() else None
    return next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), None)


def svg_to_png(svg: str, name: str = "picture.png", *, timeout: float = 120.0) -> bytes:
    """``svg`` (from :func:`trajectory_svg`) as PNG bytes, drawn by a headless Chromium.

    Raises:
        DagMathError: no Chromium is installed, or it failed or took longer than ``timeout``.
    """
    browser = find_chromium()
    if browser is None:
        raise DagMathError(
            f"{name}: PNG needs Chromium (apt-get install chromium, or set DAGMATH_CHROMIUM); "
            "--format svg needs nothing"
        )
    width, height = _size(svg)
    scale = min(PNG_SCALE, _MAX_DEVICE_PX / max(height, 1.0))
    page = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><style>html,body{margin:0}</style>"
        f"</head><body>{svg}</body></html>"
    )
    with tempfile.TemporaryDirectory(prefix="dagmath-png-") as folder:
        src, out = Path(folder) / "picture.html", Path(folder) / "picture.png"
        src.write_text(page, encoding="utf-8")
        command = [
            browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--disable-background-networking", "--disable-component-update", "--no-first-run",
            f"--user-data-dir={Path(folder) / 'profile'}",
            f"--force-device-scale-factor={scale:.3f}",
            f"--window-size={math.ceil(width)},{math.ceil(height)}",
            f"--screenshot={out}", src.as_uri(),
        ]  # fmt: skip
        try:
            subprocess.run(command, capture_output=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise DagMathError(f"{name}: Chromium took more than {timeout:.0f} s") from None
        except OSError as exc:
            raise DagMathError(f"{name}: cannot run {browser}: {exc.strerror or exc}") from None
        if not out.is_file() or out.stat().st_size == 0:
            raise DagMathError(f"{name}: Chromium ({browser}) wrote no picture")
        return out.read_bytes()


def _size(svg: str) -> tuple[float, float]:
    head = svg[: svg.index(">")]
    values = {}
    for key in ("width", "height"):
        start = head.index(f' {key}="') + len(key) + 3
        values[key] = float(head[start : head.index('"', start)])
    return values["width"], values["height"]
