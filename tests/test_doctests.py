"""The ``>>>`` examples in the library's docstrings run, and say what the code does."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import dagmath_viz

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(dagmath_viz.__path__, "dagmath_viz.")
    if m.name != "dagmath_viz.__main__"
)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _examples(name: str) -> tuple[int, int]:
    result = doctest.testmod(importlib.import_module(name), optionflags=FLAGS, verbose=False)
    return result.failed, result.attempted


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_examples_of_each_module_run(name: str) -> None:
    failed, _attempted = _examples(name)
    assert failed == 0


def test_the_examples_are_found() -> None:
    """The collection itself works: the library holds dozens of examples (42 on
    2026-12-03), so finding none would mean the test above checks nothing."""
    assert sum(_examples(name)[1] for name in MODULES) >= 40
