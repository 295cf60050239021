"""Scripts a self-contained page inlines: KaTeX (found in the installed packages) and Plotly.

Nothing is downloaded. KaTeX comes from the copy Streamlit ships in its static files (an
ES-module chunk, ``static/js/katex.<hash>.js``); the file is only read, Streamlit is never
imported. Pages have it write MathML, which browsers lay out themselves: no stylesheet and
no font goes with it (the KaTeX stylesheet Streamlit ships is of another KaTeX version than
its script: its HTML output would put subscripts on the line). When no usable copy is
found, :func:`katex_bundle` returns ``None`` and pages show math as LaTeX source.

Both bundles contain URLs in strings and comments (XML namespaces the scripts need at run
time, licence links, map-tile servers our charts never use). :func:`neutralise_urls` writes
every ``http://`` as ``http:\\/\\/``: the same string to JavaScript and CSS, but no URL a
scanner or a browser's preloader follows, so a page can promise it names no external URL.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = ["KatexBundle", "katex_bundle", "neutralise_urls", "plotly_bundle"]

_URL = re.compile(r"(https?):(//)", re.IGNORECASE)
_EXPORT = re.compile(r"export\s*\{\s*([A-Za-z_$][\w$]*)\s+as\s+default\s*\}\s*;?\s*$")


@dataclass(frozen=True, slots=True)
class KatexBundle:
    """KaTeX as a classic script that sets ``window.katex``, and its version."""

    script: str
    version: str


def neutralise_urls(code: str) -> str:
    """``code`` (JavaScript or CSS) with every ``http(s)://`` written ``http(s):\\/\\/``.

    >>> neutralise_urls('ns = "http://www.w3.org/2000/svg"')
    'ns = "http:\\\\/\\\\/www.w3.org/2000/svg"'
    """
    return _URL.sub(r"\1:\\/\\/", code)


@cache
def plotly_bundle() -> str:
    """Plotly's own offline bundle (``plotly.offline.get_plotlyjs()``), URLs neutralised."""
    from plotly.offline import get_plotlyjs

    return neutralise_urls(get_plotlyjs())


@cache
def katex_bundle() -> KatexBundle | None:
    """The KaTeX Streamlit ships, made inlinable; ``None`` when it is not installed or its
    files are not in the shape this expects (then math stays LaTeX source)."""
    static = _streamlit_static()
    if static is None:
        return None
    scripts = sorted((static / "js").glob("katex.*.js"))
    if len(scripts) != 1:
        return None
    code = scripts[0].read_text(encoding="utf-8")
    export = _EXPORT.search(code)
    if export is None or re.search(r"^\s*import[\s{*]|\bexport\s", code[: export.start()], re.M):
        return None
    script = "(function(){" + code[: export.start()] + f";window.katex={export.group(1)};" + "})();"
    version = re.search(r"version:`([0-9.]+)`", code)
    return KatexBundle(neutralise_urls(script), version.group(1) if version else "?")


def _streamlit_static() -> Path | None:
    try:  # locates the package without importing it (the library never imports Streamlit)
        spec = importlib.util.find_spec("streamlit")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        static = Path(root) / "static" / "static"
        if (static / "js").is_dir():
            return static
    return None
