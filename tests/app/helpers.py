"""Helpers for AppTest-driven tests of the app's pages."""

from __future__ import annotations


def choice(at, key: str):
    """The selectbox drawn by ``pages.common.select(..., key)``.

    Its widget key is ``<key>__w<n>_<digest of its options>`` (the box is drawn afresh
    whenever its options change), so it is found by that prefix.
    """
    found = [s for s in at.selectbox if s.key and s.key.startswith(f"{key}__w")]
    assert len(found) == 1, (key, [s.key for s in at.selectbox])
    return found[0]
