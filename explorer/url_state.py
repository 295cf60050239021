"""A page's widget state kept in the address, so Back, a shared link and a return through
the sidebar all show the page as it was left (issue 34 item 6).

Streamlit forgets a widget's value once a run does not draw it (another page ran), and it
does not put widget values in the URL. So before a page draws its widgets, :func:`restore`
fills their keys: from the address when it was changed from outside (Back, a link), else
from the page's own memory (a return through the sidebar, whose link has no parameters);
after them, :func:`remember` writes the values back to both. Only non-default values go in
the address, so a page left as it opened has a plain URL.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st


@dataclass(frozen=True)
class Field:
    """One widget: its session key, its URL parameter, its default and, for choices, the
    values allowed (a value from the address outside them is dropped, not raised on)."""

    key: str
    param: str
    default: Any
    options: tuple[Any, ...] | None = None


def _encode(value: Any) -> str | list[str]:
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def _decode(field: Field, raw: list[str]) -> Any:
    """The widget value of a parameter's values, or the default when they do not fit."""
    default = field.default
    if isinstance(default, (list, tuple)):
        allowed = {str(o): o for o in field.options or ()}
        return [allowed[r] for r in dict.fromkeys(raw) if r in allowed]
    if not raw:
        return default
    text = raw[-1]
    if isinstance(default, bool):
        return text == "1"
    if isinstance(default, int):
        try:
            value = int(text)
        except ValueError:
            return default
        lo, hi = field.options or (value, value)
        return min(max(value, lo), hi)
    if field.options is not None:
        return text if text in {str(o) for o in field.options} else default
    return text[:200]


def _address(fields: Sequence[Field]) -> dict[str, list[str]]:
    return {f.param: st.query_params.get_all(f.param) for f in fields if f.param in st.query_params}


def restore(fields: Sequence[Field], memory: str, scope: str | None = None) -> None:
    """Fill the widgets' keys before they are drawn (see the module docstring).

    ``scope`` names what the values were chosen on (the data source): when it changes,
    the widgets start from their defaults, as on a first visit (a step range kept from
    another source, clamped into this one's, would hide most of its trajectories).
    """
    kept_scope = st.session_state.get(f"{memory}__scope", scope)
    st.session_state[f"{memory}__scope"] = scope
    if kept_scope != scope:
        for f in fields:
            st.session_state.pop(f.key, None)
        st.session_state.pop(memory, None)
    address = _address(fields)
    written = st.session_state.get(f"{memory}__url")
    if address and address != written:
        for f in fields:
            st.session_state[f.key] = _decode(f, address.get(f.param, []))
    elif all(f.key not in st.session_state for f in fields) and memory in st.session_state:
        kept = st.session_state[memory]
        for f in fields:
            st.session_state[f.key] = _decode(f, _as_raw(kept.get(f.key, f.default)))
    for f in fields:
        if f.key not in st.session_state:
            st.session_state[f.key] = f.default


def _as_raw(value: Any) -> list[str]:
    encoded = _encode(value)
    return encoded if isinstance(encoded, list) else [encoded]


def remember(fields: Sequence[Field], memory: str) -> None:
    """Write the widgets' values to the page's memory and their non-defaults to the address."""
    values = {f.key: st.session_state.get(f.key, f.default) for f in fields}
    st.session_state[memory] = values
    written: dict[str, list[str]] = {}
    for f in fields:
        value = values[f.key]
        same = list(value) == list(f.default) if isinstance(value, (list, tuple)) else None
        if same or (same is None and value == f.default):
            st.query_params.pop(f.param, None)
            continue
        st.query_params[f.param] = _encode(value)
        written[f.param] = _as_raw(value)
    st.session_state[f"{memory}__url"] = written
