"""Uploaded files and zips land safely: no path escapes, links or bombs."""

from __future__ import annotations

import io
import json
import stat
import zipfile

import pytest

from dagmath_viz import uploads
from dagmath_viz.uploads import UploadedFile, materialise_uploads, uploads_id

SAMPLE = json.dumps([{"problem_id": 1, "steps": [{"step_id": 1, "text": "x"}]}]).encode()


def _zip(members: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            z.writestr(info, target)
    return buf.getvalue()


def test_plain_files_and_a_results_zip(tmp_path):
    z = _zip({"run/m/d/problem_1_all_samples.json": SAMPLE})
    files = [UploadedFile("a.json", SAMPLE), UploadedFile("run.zip", z)]
    issues = materialise_uploads(files, tmp_path)
    assert issues == []
    assert (tmp_path / "uploaded" / "a.json").read_bytes() == SAMPLE
    assert (tmp_path / "001_run" / "run" / "m" / "d" / "problem_1_all_samples.json").exists()


@pytest.mark.parametrize(
    "name",
    ["../evil.json", "a/../../evil.json", "/abs/evil.json", "C:/evil.json", "..\\evil.json"],
    ids=["dotdot", "nested-dotdot", "absolute", "drive", "backslash"],
)
def test_zip_member_escaping_the_folder_is_refused(tmp_path, name):
    dest = tmp_path / "dest"
    issues = materialise_uploads(
        [UploadedFile("x.zip", _zip({name: SAMPLE, "ok.json": SAMPLE}))], dest
    )
    assert len(issues) == 1 and "refused" in issues[0].message
    assert issues[0].file == "x.zip" and issues[0].location.startswith("member ")
    assert not (tmp_path / "evil.json").exists()
    assert (dest / "000_x" / "ok.json").exists()  # the good member still lands
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert all(dest in p.parents for p in written)


def test_zip_symlink_member_is_refused(tmp_path):
    issues = materialise_uploads(
        [UploadedFile("x.zip", _zip({}, {"link.json": "/etc/passwd"}))], tmp_path
    )
    assert [i.message for i in issues] == ["refused: symbolic link"]
    assert not (tmp_path / "000_x" / "link.json").exists()


def test_zip_bomb_is_refused_before_inflating(tmp_path, monkeypatch):
    monkeypatch.setattr(uploads, "MAX_TOTAL_BYTES", 1_000_000)
    bomb = _zip({"big.json": b"0" * 5_000_000})  # compresses to a few KB
    assert len(bomb) < 50_000
    issues = materialise_uploads([UploadedFile("bomb.zip", bomb)], tmp_path)
    assert len(issues) == 1 and "cap" in issues[0].message
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


def test_too_many_members(tmp_path, monkeypatch):
    monkeypatch.setattr(uploads, "MAX_FILES", 3)
    z = _zip({f"{i}.json": SAMPLE for i in range(4)})
    issues = materialise_uploads([UploadedFile("many.zip", z)], tmp_path)
    assert "4 members" in issues[0].message


def test_not_a_zip_and_unknown_type(tmp_path):
    issues = materialise_uploads(
        [UploadedFile("broken.zip", b"not a zip"), UploadedFile("notes.txt", b"hi")], tmp_path
    )
    assert [(i.file, "zip" in i.message or ".json" in i.message) for i in issues] == [
        ("broken.zip", True),
        ("notes.txt", True),
    ]


def test_uploads_id_depends_on_names_and_contents():
    a = [UploadedFile("a.json", b"1")]
    assert uploads_id(a) == uploads_id([UploadedFile("a.json", b"1")])
    assert uploads_id(a) != uploads_id([UploadedFile("a.json", b"2")])
    assert uploads_id(a) != uploads_id([UploadedFile("b.json", b"1")])
