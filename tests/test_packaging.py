"""Packaging metadata that a build would not catch: every subpackage listed, every import
declared, requirements.txt and pyproject.toml in agreement, the app's files shipped.

The build itself, a clean install and the installed app are tested in
``tests/app/test_installed_app.py``.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

REPO = Path(__file__).parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]

#: import name -> distribution name, where they differ
DISTRIBUTION = {"math_verify": "math-verify", "distributed": "dask"}  # dask[distributed]


def _requirements(lines: list[str]) -> dict[str, Requirement]:
    reqs = [Requirement(line.split("#")[0].strip()) for line in lines]
    return {r.name.lower(): r for r in reqs if r}


def _third_party_imports(paths: list[Path]) -> set[str]:
    found = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    local = {"dagmath_viz", "pages", "explorer", "dagmath_viz_app"}
    return {m for m in found - local if m not in sys.stdlib_module_names}


def test_every_subpackage_is_in_the_wheel() -> None:
    """``packages`` is an explicit list (the app maps the repository root): a new folder of
    modules under dagmath_viz must be added to it, or the wheel silently lacks it."""
    folders = {
        ".".join(p.parent.relative_to(REPO).parts)
        for p in (REPO / "dagmath_viz").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert folders <= set(SETUPTOOLS["packages"])
    assert SETUPTOOLS["package-dir"] == {"dagmath_viz_app": "."}
    assert {"dagmath_viz_app", "dagmath_viz_app.pages", "dagmath_viz_app.explorer"} <= set(
        SETUPTOOLS["packages"]
    )


def test_every_import_is_declared_and_every_dependency_imported() -> None:
    code = [
        *(REPO / "dagmath_viz").rglob("*.py"),
        REPO / "app.py",
        *(REPO / "pages").glob("*.py"),
        *(REPO / "explorer").glob("*.py"),
    ]
    imported = {DISTRIBUTION.get(m, m) for m in _third_party_imports(code)}
    declared = {Requirement(r).name.lower() for r in PROJECT["dependencies"]}
    optional = {Requirement(r).name.lower() for r in PROJECT["optional-dependencies"]["dask"]}
    assert imported - declared - optional == set(), "imported but not declared"
    assert declared - imported == set(), "declared but never imported"


def test_requirements_txt_agrees_with_pyproject() -> None:
    text = (REPO / "requirements.txt").read_text(encoding="utf-8").splitlines()
    lines = [x for x in text if x.strip() and not x.lstrip().startswith("#")]
    listed = _requirements(lines)
    declared = _requirements(PROJECT["dependencies"])
    assert {k: (str(v.specifier), v.extras) for k, v in listed.items()} == {
        k: (str(v.specifier), v.extras) for k, v in declared.items()
    }
    for line in lines:  # each floor says why
        assert "#" in line, line


def test_extras_exist_under_their_published_names() -> None:
    """pip 23 matches extras literally: math-verify publishes ``antlr4-13-2``, not the
    underscore spelling, which pip then ignored."""
    from importlib.metadata import requires

    published = {
        m.group(1)
        for r in requires("math-verify") or []
        if (m := re.search(r'extra == "([^"]+)"', r))
    }
    (math_verify,) = [Requirement(r) for r in PROJECT["dependencies"] if "math-verify" in r]
    assert math_verify.extras <= published
    assert {"dask", "dev"} <= set(PROJECT["optional-dependencies"])


def test_pandas_3_is_allowed() -> None:
    (pandas,) = [Requirement(r) for r in PROJECT["dependencies"] if r.startswith("pandas")]
    assert "3.1.1" in pandas.specifier and "2.1.0" in pandas.specifier


def test_the_wheel_carries_the_app() -> None:
    data = SETUPTOOLS["package-data"]
    assert "py.typed" in data["dagmath_viz"] and (REPO / "dagmath_viz" / "py.typed").is_file()
    app_data = data["dagmath_viz_app"]
    assert ".streamlit/config.toml" in app_data and "assets/*" in app_data
    assert any(p.startswith("sample_data/runs") for p in app_data)
    assert any(p.startswith("sample_data/gsm") for p in app_data)
    assert PROJECT["license"] == "MIT" and (REPO / "LICENSE").read_text().startswith("MIT")
    assert set(PROJECT["urls"]) >= {"Homepage", "Source", "Issues"}
    assert PROJECT["scripts"] == {"dagmath": "dagmath_viz.cli:main"}


def test_the_sdist_carries_the_tests_with_their_conftest() -> None:
    manifest = (REPO / "MANIFEST.in").read_text(encoding="utf-8").split()
    for folder in ("tests", "sample_data", "pages", "assets", "dagmath_viz"):
        assert folder in manifest
