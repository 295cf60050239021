"""The format registry is the one place that names formats (issue 26 step 2): no module
outside the format modules names a trajectory data suffix (``.jsonl``, ``.parquet``, ...) or
the official file name, so a new format is one module plus one registry line."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from dagmath_viz.formats import official, registry

REPO = Path(__file__).parents[1]
FORMATS = REPO / "dagmath_viz" / "formats"
#: Modules of formats/ that are not format modules: they must ask the registry too.
NOT_FORMAT_MODULES = {"sources.py", "__init__.py"}
#: Modules whose suffixes name files that are not trajectory data, and why.
OTHER_FILES = {
    "dagmath_viz/store/frames.py": "the frame cache's own Parquet files",
    "dagmath_viz/store/views.py": "the view cache's own files",
    "dagmath_viz/answers/check.py": "the verdict cache's file",
    "dagmath_viz/generation/": "generate's problem files, journals and run records",
    "dagmath_viz/logic/": "the efficiency lens's problem and proof files",
    "pages/efficiency.py": "the efficiency lens's uploads",
    "dagmath_viz/cli/report.py": "--format json, an output format",
    "dagmath_viz/cli/compare.py": "--format json, an output format",
    "dagmath_viz/cli/gsm.py": "the efficiency lens's commands and their --format json",
    "dagmath_viz/store/results.py": "score's output tables, written and read back (read_scored)",
    "dagmath_viz/cli/score.py": "-o's table suffixes (no pandas import to parse arguments)",
    "dagmath_viz/store/labels.py": "the label sidecar's own file, named beside the data file",
    "dagmath_viz/cli/labels.py": "--format json, an output format",
}
SUFFIXES = registry.TRAJECTORY_SUFFIXES
_BARE = {s.lstrip(".") for s in SUFFIXES} | {s.rsplit(".", 1)[-1] for s in SUFFIXES}
_NAMED = re.compile(
    r"^[a-z0-9_*.\-]*(?:" + "|".join(re.escape(s) for s in SUFFIXES) + r")$"
)  # a lowercase file name or glob ending in one (OUT.jsonl in a help text is a placeholder)


def _constants(source: str) -> list[tuple[int, str]]:
    """Every string constant of the code (docstrings, which explain, left out)."""
    tree = ast.parse(source)
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            docstrings.add(id(body[0].value))
    found = [
        (node.lineno, node.col_offset, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]
    return [(line, value) for line, _col, value in sorted(found)]


def _offences(rel: str, source: str) -> list[str]:
    out = []
    for line, value in _constants(source):
        text = value.strip()
        if "_all_samples" in text:
            out.append(f"{rel}:{line}: the official file name {value!r}")
        elif text in _BARE or _NAMED.match(text) or text in SUFFIXES:
            if not any(rel.startswith(allowed) for allowed in OTHER_FILES):
                out.append(f"{rel}:{line}: a data suffix {value!r}")
    return out


def _checked_files() -> list[Path]:
    files = [
        *REPO.glob("dagmath_viz/**/*.py"),
        *REPO.glob("explorer/*.py"),
        *REPO.glob("pages/*.py"),
    ]
    return sorted(f for f in files if f.parent != FORMATS or f.name in NOT_FORMAT_MODULES)


def test_no_module_but_the_format_modules_names_a_suffix_or_the_official_name() -> None:
    offences = []
    for path in _checked_files():
        rel = path.relative_to(REPO).as_posix()
        offences.extend(_offences(rel, path.read_text(encoding="utf-8")))
    assert offences == []


def test_the_scan_finds_what_it_looks_for() -> None:
    # the same scan on code that breaks each rule, so the test above can fail
    code = (
        'A = ".jsonl"\nB = f"problem_{x}_all_samples.json"\nC = ["json", "parquet"]\n'
        'D = "answers.jsonl"\n'
        'def f():\n    """Reads problem_1_all_samples.json and x.jsonl."""\n'
        'E = "OUT.jsonl"\n'
    )
    found = _offences("dagmath_viz/x.py", code)
    assert [o.split(": ", 1)[0] for o in found] == [
        "dagmath_viz/x.py:1", "dagmath_viz/x.py:2", "dagmath_viz/x.py:3",
        "dagmath_viz/x.py:3", "dagmath_viz/x.py:4",
    ]  # fmt: skip
    assert _offences("dagmath_viz/logic/x.py", 'A = ".jsonl"\n') == []


def test_the_official_name_is_written_once() -> None:
    assert official.file_name("12") == "problem_12_all_samples.json"
    assert official.NAME.match(official.file_name("a b")).group(1) == "a b"
    assert registry.format_of(Path("m/d") / official.file_name("3")).name == "official"


def test_uploads_and_the_uploader_follow_the_registry() -> None:
    from dagmath_viz.store import uploads

    for suffix in registry.DATA_SUFFIXES:
        assert suffix.rsplit(".", 1)[-1] in uploads.UPLOADER_TYPES
    assert "zip" in uploads.UPLOADER_TYPES
    assert registry.DATA_SUFFIXES == (
        ".json", ".jsonl", ".csv", ".eval", ".ndjson", ".jsonl.gz", ".parquet",
    )  # fmt: skip
