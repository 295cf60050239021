"""Issue 33 (red team, third round), the items left after the first pass: 4, 8, 9 and the
Dask path's timeouts. Every hostile input is generated here at test time (a hang guard
timeout where a command runs, never a timing assertion)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from dagmath_viz.store import uploads
from dagmath_viz.store.uploads import UploadedFile, materialise_uploads

REPO = Path(__file__).resolve().parents[1]


def _dagmath(*args: str, env: dict | None = None, timeout: float = 120):
    return subprocess.run(  # the timeout is the hang guard
        [sys.executable, "-m", "dagmath_viz", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
    )


def _steps(final: str = r"The final answer is $\boxed{6}$.") -> list[dict]:
    return [
        {"step_id": 1, "thinking": "given", "direct_dependent_steps": None, "text": "x = 2"},
        {"step_id": 2, "thinking": "so", "direct_dependent_steps": [1], "text": final},
    ]


def _record(problem_id: str, sample_id: int = 0) -> dict:
    return {
        "problem_id": problem_id,
        "sample_id": sample_id,
        "model": "m",
        "answer": "6",
        "steps": _steps(),
    }


def _scored(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# ------------------------------------------------------------------ item 4: zip directory bomb


def _empty_members_zip(names: list[str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name in names:
            z.writestr(name, b"")
    return buf.getvalue()


def _entries(folder: Path) -> list[Path]:
    return list(folder.rglob("*")) if folder.exists() else []


def test_item4_a_zip_900_folders_deep_is_refused_before_any_folder_is_made(tmp_path):
    deep = "/".join(["d"] * 900)
    names = [f"{deep}/{i}.json" for i in range(200)] + ["ok.json"]  # many empty members
    bomb = _empty_members_zip(names)
    dest = tmp_path / "dest"
    issues = materialise_uploads([UploadedFile("deep.zip", bomb)], dest)
    assert len(issues) == 1 and issues[0].file == "deep.zip" and issues[0].location == "file"
    assert "900 folders deep; at most 32 are accepted" in issues[0].message, issues[0].message
    assert _entries(dest) == []  # not one folder was made, the good member included


def test_item4_a_zip_creating_too_many_folders_is_refused(tmp_path):
    names = [f"f{i}/x.json" for i in range(uploads.MAX_FOLDERS + 1)]  # one folder each
    dest = tmp_path / "dest"
    issues = materialise_uploads([UploadedFile("wide.zip", _empty_members_zip(names))], dest)
    assert len(issues) == 1
    expected = f"would create {uploads.MAX_FOLDERS + 1} folders; at most 5000 are accepted"
    assert issues[0].message == expected
    assert _entries(dest) == []


def test_item4_a_zip_within_the_folder_caps_still_lands(tmp_path):
    deep = "/".join(["d"] * 32)  # exactly the cap
    names = [f"{deep}/a.json", *(f"f{i}/x.json" for i in range(100))]
    dest = tmp_path / "dest"
    assert materialise_uploads([UploadedFile("ok.zip", _empty_members_zip(names))], dest) == []
    assert (dest / "000_ok" / Path(deep) / "a.json").is_file()
