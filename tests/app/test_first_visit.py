"""A first visit (issue 31, item 8): the page list holds pages only, and the bundled
sample's load notes are explained, not alarming.

Streamlit lists every ``pages/*.py`` in the sidebar before ``st.navigation`` has run once
(its legacy multipage mode; ``explorer.common._rerun_through_app_if_alone``), so on a fresh
server the first page shows that list for a moment: every file there must be a page of
``app.py``'s navigation, and every helper lives in ``explorer/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.app.helpers import app_on

ROOT = Path(__file__).resolve().parents[2]


def _navigation_pages() -> set[str]:
    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    return {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "attr", "") == "Page"
        and isinstance(node.args[0], ast.Constant)
    }


def test_the_pages_folder_holds_the_navigations_pages_only():
    files = {f"pages/{p.name}" for p in (ROOT / "pages").iterdir() if p.suffix == ".py"}
    assert files == _navigation_pages()
    assert not [p for p in (ROOT / "pages").iterdir() if p.is_dir() and p.name != "__pycache__"]
    assert {"common.py", "graph_view.py"} <= {p.name for p in (ROOT / "explorer").iterdir()}


def test_the_bundled_samples_illegal_trajectories_are_explained(monkeypatch):
    at = app_on(monkeypatch, None, timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    (panel,) = [e for e in at.expander if "load or scoring problems" in e.label]
    # counted from sample_data/build.py's output: 6 illegal trajectories with 8 faults
    # (two with a cycle and a parent that is not earlier, two with a missing parent 999,
    # two with a duplicate id), and no file or line that could not be read
    assert panel.label.startswith(":material/info: 8 load or scoring problems: ")
    assert "6 illegal trajectories, scored as such" in panel.label
    assert ":material/warning:" not in panel.label
    notes = " ".join(c.value for c in at.caption)
    assert "Every file was read" in notes and "on purpose" in notes
    (table,) = [
        f.value
        for f in at.dataframe
        if list(f.value.columns) == ["file", "where", "severity", "problem"]
    ]
    assert len(table) == 8 and (table["where"] != "").all()
    # the cycle read from the file (its step 1 cites its last step, 14)
    row = table[table["problem"] == "cycle: 1 -> 7 -> 8 -> 9 -> 10 -> 11 -> 13 -> 14 -> 1"].iloc[0]
    assert row["file"].endswith("sim-focus-2.5/arith-word/problem_101_all_samples.json")
    assert row["where"] == "item 13: problem 101 sample 12"
