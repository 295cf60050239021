"""Two trajectories of one problem side by side, step text aligned row by row (static HTML).

One grid holds both sides: each row is an aligned pair (joined in the middle column, ``=``
for a restatement, ``≈`` for equal mathematical content, with a word diff of the two texts
one click away under it) or steps only one side has: between two pairs, A's and B's
unpaired steps sit side by side, not joined, and the shorter side's run ends in empty
slots.
So both sides share one layout and one scale, and they scroll together: they are one
scrolling box. Text wraps, it is never clipped. Dead ends are orange, as in every view;
the final step says whether its answer is right.

Math is typeset, offline, as in the Trajectory view: each step's formulas (``$…$``,
``$$…$$``, ``\\(…\\)``, ``\\[…\\]`` and a bare ``\\boxed{…}``, found by
:func:`dagmath_viz.text.math_segments`; an unclosed delimiter stays text) are written as
``<span class="tex" data-tex="…">`` holding the formula as text, and the page's KaTeX (the
copy Streamlit ships, :func:`dagmath_viz.draw.offline_assets.katex_bundle`) replaces each
with MathML when it scrolls into view. The word diff of a pair keeps every formula whole
(:func:`dagmath_viz.analysis.align.math_word_diff`): a formula that differs is struck out
and added as one piece. A step with more than
:data:`~dagmath_viz.draw.render.MAX_STEP_FORMULAS` formulas shows as written.

Safety: every piece of model text is HTML-escaped and ``://`` is written ``:&#47;&#47;``, so
no markup, script or URL from a model reaches the page. The page's only scripts are KaTeX
and ``assets/aligned_view.js``, which hands each formula's text to KaTeX (``trust`` off, so
``\\href``, ``\\url``, ``\\html…`` and ``\\includegraphics`` do nothing; ``maxExpand``
ends a macro bomb) and never parses text as markup; ``<details>`` opens the diffs.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from dagmath_viz.analysis.align import Alignment, math_word_diff
from dagmath_viz.draw.offline_assets import katex_bundle
from dagmath_viz.draw.render import LAYERED_MAX, MAX_STEP_FORMULAS
from dagmath_viz.schema import Trajectory
from dagmath_viz.text import math_segments, reveal_bidi, rich_segments

__all__ = ["GRAPH_SCALE", "MAX_CELL_TEXT", "render_aligned_html", "shared_layout"]

#: One zoom for both graphs of a comparison (1 = 100 %), so that their sizes compare.
GRAPH_SCALE = 1.0


def shared_layout(traj_a: Trajectory, traj_b: Trajectory) -> str:
    """The one layout both graphs of a comparison are drawn in (Compare and its export):
    layered only when both are short enough for it, else reading order."""
    return "layered" if max(len(traj_a.steps), len(traj_b.steps)) <= LAYERED_MAX else "reading"


#: Longest step text shown in a cell (longer text is cut, and says so).
MAX_CELL_TEXT = 4000
_KIND_MARK = {"statement": ("=", "same statement"), "math": ("≈", "same mathematical content")}

_CSS = """
body { margin: 0; font: 13px/1.4 sans-serif; color: #111; background: #fff; }
.aligned { height: var(--h); overflow-y: auto; overflow-x: hidden; border: 1px solid #ddd; }
.row { display: grid; grid-template-columns: minmax(0, 1fr) 44px minmax(0, 1fr);
       border-bottom: 1px solid #f0f0f0; }
.head { position: sticky; top: 0; z-index: 2; background: #fafafa; font-weight: bold;
        border-bottom: 1px solid #ccc; }
.head > div { padding: 6px 8px; overflow-wrap: anywhere; }
.cell { padding: 5px 8px; min-width: 0; white-space: pre-wrap; overflow-wrap: anywhere;
        border-left: 4px solid #d0d0d0; }
.cell.empty { border-left-color: transparent;
              background: repeating-linear-gradient(45deg, #fafafa 0 6px, #f2f2f2 6px 12px); }
.cell.dead { border-left-color: #f28e2b; background: #fff3e6; }
.cell.final_correct { border-left-color: #59a14f; background: #eef7ec; }
.cell.final_incorrect { border-left-color: #e15759; background: #fdeeee; }
.row.only .cell:not(.empty) { outline: 1px dashed #b0b0b0; outline-offset: -1px; }
.sid { font-weight: bold; color: #555; margin-right: 6px; }
.tag { display: inline-block; font-size: 11px; padding: 0 4px; margin-left: 4px;
       border-radius: 3px; background: #eee; color: #333; }
.tag.dead { background: #f28e2b; color: #fff; }
.tag.only { background: #ddd; }
.tag.moved { background: #d4c4e8; }
.join { display: flex; flex-direction: column; align-items: center; justify-content: center;
        background: #eef4fb; border-left: 2px solid #4e79a7; border-right: 2px solid #4e79a7; }
.join .mark { font-size: 18px; font-weight: bold; color: #4e79a7; }
.gap { background: #fff; }
details.diff { grid-column: 1 / -1; font-size: 11px; padding: 2px 8px 4px;
               white-space: pre-wrap; overflow-wrap: anywhere; background: #f7f9fc; }
details summary { cursor: pointer; color: #4e79a7; }
del { background: #fdd; text-decoration: line-through; }
ins { background: #dfd; text-decoration: none; }
.legend { font-size: 12px; padding: 4px 0; color: #333; }
.legend span { margin-right: 12px; }
.sw { display: inline-block; width: 10px; height: 10px; vertical-align: middle;
      margin-right: 3px; border: 1px solid #999; }
.tex math { font-size: 1.08em; }
.tex[data-display="1"] { display: block; margin: 3px 0; overflow-x: auto; }
details.diff .tex { display: inline-block; padding: 0 2px; text-decoration: none; }
del .tex { background: #fdd; box-shadow: inset 0 0 0 1px #e15759; }
ins .tex { background: #dfd; box-shadow: inset 0 0 0 1px #59a14f; }
"""


def _safe(text: object) -> str:
    return html.escape(str(text), quote=True).replace("://", ":&#47;&#47;")


def _cut(text: str) -> str:
    if len(text) <= MAX_CELL_TEXT:
        return text
    return text[: MAX_CELL_TEXT - 1] + f"… (cut: {len(text):,} characters)"


def render_aligned_html(
    traj_a: Trajectory,
    traj_b: Trajectory,
    alignment: Alignment,
    *,
    dead_a: Iterable = (),
    dead_b: Iterable = (),
    correct_a: bool | None = None,
    correct_b: bool | None = None,
    labels: tuple[str, str] = ("A", "B"),
    height_px: int = 720,
    katex: bool = True,
) -> str:
    """The aligned view of ``traj_a`` and ``traj_b`` under ``alignment`` (positions of their
    steps), a whole HTML document for an iframe ``height_px`` high.

    Every row carries ``data-a`` / ``data-b`` (step positions, empty for a slot) and a class:
    ``pair`` (joined; ``data-kind`` says why) or ``only``; every cell ``data-side``.

    ``katex``: inline KaTeX (~250 KB, only when some step has a formula) to typeset the
    formulas. False leaves that to the page that holds this one (an exported comparison:
    one KaTeX for the whole file), which calls ``dmAligned.use(katex)`` in this frame;
    until something does, formulas show as their TeX.
    """
    dead = (set(dead_a), set(dead_b))
    correct = (correct_a, correct_b)
    sides = (traj_a.steps, traj_b.steps)
    moved = {("a", p.a): sides[1][p.b].step_id for p in alignment.moved} | {
        ("b", p.b): sides[0][p.a].step_id for p in alignment.moved
    }
    kinds: dict[tuple[int | None, int | None], str] = {(p.a, p.b): p.kind for p in alignment.pairs}
    rows = []
    for a, b in alignment.rows(packed=True):
        kind = kinds.get((a, b), "")
        pair = bool(kind)
        cells = []
        for side, pos in (("a", a), ("b", b)):
            k = 0 if side == "a" else 1
            if pos is None:
                cells.append(f'<div class="cell empty" data-side="{side}"></div>')
                continue
            cells.append(
                _cell(side, sides[k], pos, dead[k], correct[k], pair, moved.get((side, pos)))
            )
        middle, diff = '<div class="gap"></div>', ""
        if pair and a is not None and b is not None:
            middle = _join(kind)
            diff = _diff(sides[0][a].text, sides[1][b].text)
        klass = "pair" if pair else "only"
        rows.append(
            f'<div class="row {klass}" data-kind="{kind}" data-a="{"" if a is None else a}" '
            f'data-b="{"" if b is None else b}">{cells[0]}{middle}{cells[1]}{diff}</div>'
        )
    n_pairs = len(alignment.pairs)
    head = (
        f'<div class="row head"><div>{_safe(labels[0])} · {len(sides[0])} steps</div>'
        f"<div></div><div>{_safe(labels[1])} · {len(sides[1])} steps</div></div>"
    )
    legend = (
        '<div class="legend">'
        f"<span>{n_pairs} aligned pairs · {len(alignment.only_a)} steps only in A · "
        f"{len(alignment.only_b)} only in B · {len(alignment.moved)} moved</span>"
        '<span><b style="color:#4e79a7">=</b> same statement</span>'
        '<span><b style="color:#4e79a7">≈</b> same mathematical content</span>'
        '<span><i class="sw" style="background:#fff3e6;border-color:#f28e2b"></i>dead end</span>'
        '<span><i class="sw" style="background:#f2f2f2"></i>no step on this side</span>'
        "</div>"
    )
    grid = "".join(rows)
    bundle = katex_bundle() if katex and 'class="tex"' in grid else None
    page = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><style>"
        + _CSS
        + f"</style></head><body style='--h:{max(200, height_px - 40)}px'>"
        + legend
        + f'<div class="aligned" data-pairs="{n_pairs}" data-rows="{len(rows)}">'
        + head
        + grid
        + "</div>"
        + ("<script>" + bundle.script + "</script>" if bundle is not None else "")
        + "<script>"
        + _asset("aligned_view.js")
        + "</script></body></html>"
    )
    if "innerHTML" in _asset("aligned_view.js") or re.search(r"https?://", page, re.I):
        raise RuntimeError("the aligned view would use innerHTML or an external URL")
    return page


def _cell(side, steps, pos, dead, correct, paired, moved_to) -> str:
    step = steps[pos]
    final = pos == len(steps) - 1
    classes = ["cell"]
    tags = []
    if step.step_id in dead:
        classes.append("dead")
        tags.append('<span class="tag dead">dead end</span>')
    if final and correct is not None:
        classes.append("final_correct" if correct else "final_incorrect")
        tags.append(f'<span class="tag">final · {"right" if correct else "wrong"}</span>')
    if not paired:
        tags.append(f'<span class="tag only">only {side.upper()}</span>')
    if moved_to is not None:
        other = "B" if side == "a" else "A"
        tags.append(f'<span class="tag moved">moved: {other}\'s S{_safe(moved_to)}</span>')
    parents = ", ".join(f"S{p}" for p in step.parents) or "given"
    return (
        f'<div class="{" ".join(classes)}" data-side="{side}" data-step="{_safe(step.step_id)}">'
        f'<span class="sid">S{_safe(step.step_id)}</span><span class="tag">← '
        f"{_safe(parents[:120])}</span>{''.join(tags)}\n{_text(step.text)}</div>"
    )


def _join(kind: str) -> str:
    mark, title = _KIND_MARK.get(kind, ("·", ""))
    return f'<div class="join" title="{title}"><span class="mark">{mark}</span></div>'


def _diff(text_a: str, text_b: str) -> str:
    """A word diff of two aligned steps, folded (a click opens it), across the whole row;
    formulas are kept whole (a formula that differs is struck out or added as one)."""
    if text_a == text_b:
        return ""
    a, b = _cut(text_a), _cut(text_b)
    typeset = _typesettable(a) and _typesettable(b)
    parts = []
    for op, tokens in math_word_diff(a, b):
        tag = {"=": "span", "-": "del", "+": "ins"}[op]
        words = " ".join(
            _safe(piece) if kind == 0 else _formula(kind, piece, typeset, inline=True)
            for kind, piece in tokens
        )
        parts.append(f"<{tag}>{words}</{tag}>")
    return (
        '<details class="diff"><summary>text diff of this pair</summary>'
        f"{' '.join(parts)}</details>"
    )


def _typesettable(text: str) -> bool:
    return sum(1 for kind, _ in math_segments(text) if kind) <= MAX_STEP_FORMULAS


def _text(text: str) -> str:
    """A step's text (cut to :data:`MAX_CELL_TEXT`) as HTML: escaped text, formulas and
    markdown emphasis (``**bold**`` as ``<strong>``), or all escaped text when it has more
    formulas than :data:`MAX_STEP_FORMULAS`."""
    cut = _cut(text)
    segments = rich_segments(cut)
    if sum(1 for kind, _ in segments if kind in (1, 2)) > MAX_STEP_FORMULAS:
        return _safe(reveal_bidi(cut))
    out = []
    for i, (kind, piece) in enumerate(segments):
        if kind in (3, 4):  # markdown emphasis: our own tags (they pair up and nest)
            tag = "em" if piece == "em" else "strong"
            out.append(f"<{tag}>" if kind == 3 else f"</{tag}>")
            continue
        if kind:
            out.append(_formula(kind, piece))
            continue
        # a display formula is a block of its own: the line break beside it is not a line
        if i and segments[i - 1][0] == 2:
            piece = piece.removeprefix("\n")
        if i + 1 < len(segments) and segments[i + 1][0] == 2:
            piece = piece.removesuffix("\n")
        out.append(_safe(piece))
    return "".join(out)


def _formula(kind: int, tex: str, typeset: bool = True, *, inline: bool = False) -> str:
    """One formula: its TeX as text, between ``\\(``/``\\)`` (``\\[``/``\\]`` for a display),
    in a span the page's script typesets from ``data-tex`` (``inline``: a display formula
    set in the line, as a diff shows it)."""
    shown = _safe(("\\[" if kind == 2 else "\\(") + tex + ("\\]" if kind == 2 else "\\)"))
    if not typeset:
        return shown
    display = 1 if kind == 2 and not inline else 0
    return f'<span class="tex" data-display="{display}" data-tex="{_safe(tex)}">{shown}</span>'


@cache
def _asset(name: str) -> str:
    return (Path(__file__).parent / "assets" / name).read_text(encoding="utf-8")
