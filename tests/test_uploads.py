"""Uploaded files and zips land safely: no path escapes, links or bombs."""

from __future__ import annotations

import io
import json
import stat
import zipfile

import pytest

from dagmath_viz.store import uploads
from dagmath_viz.store.uploads import UploadedFile, materialise_uploads, uploads_id

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


# --------------------------------------------------------------------------- the store

import gc  # noqa: E402
import os  # noqa: E402

from dagmath_viz.store.uploads import UploadStore, check_efficiency_records  # noqa: E402

# A zip with one good member and one that escapes: every upload of it must carry the warning.
WARNING_ZIP = _zip({"run/m/d/problem_1_all_samples.json": SAMPLE, "../evil.json": SAMPLE})


def _files_under(folder) -> list:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def test_store_folder_is_private_fresh_and_ignores_a_planted_link(tmp_path):
    planted = tmp_path / "planted"
    planted.mkdir()
    # the old fixed location, planted in advance with a link to somewhere else
    (tmp_path / "dagmath-viz-uploads").symlink_to(planted, target_is_directory=True)
    store = UploadStore(parent=tmp_path)
    up = store.store("s1", "data", [UploadedFile("a.json", SAMPLE)])
    assert store.root.parent == tmp_path and store.root.name.startswith("dagmath-viz-uploads-")
    assert not store.root.is_symlink()
    assert stat.S_IMODE(store.root.stat().st_mode) == 0o700
    assert store.root in up.folder.parents
    assert _files_under(planted) == []  # nothing followed the planted link
    assert UploadStore(parent=tmp_path).root != store.root  # every process its own


def test_a_second_session_uploading_the_same_zip_keeps_its_warnings(tmp_path):
    store = UploadStore(parent=tmp_path)
    a = store.store("s1", "data", [UploadedFile("x.zip", WARNING_ZIP)])
    b = store.store("s2", "data", [UploadedFile("x.zip", WARNING_ZIP)])
    assert len(a.issues) == len(b.issues) == 1 and "refused" in b.issues[0].message
    assert a.folder != b.folder and a.source_id != b.source_id  # nothing shared
    # a rerun of the same session with the same files reuses its copy, warnings included
    again = store.store("s2", "data", [UploadedFile("x.zip", WARNING_ZIP)])
    assert again is b and again.issues == b.issues


def test_a_new_upload_replaces_the_slots_old_one(tmp_path):
    store = UploadStore(parent=tmp_path)
    first = store.store("s1", "data", [UploadedFile("a.json", SAMPLE)])
    other_slot = store.store("s1", "gsm", [UploadedFile("p.jsonl", b"{}\n")])
    second = store.store("s1", "data", [UploadedFile("b.json", SAMPLE)])
    assert not first.folder.exists() and second.folder.exists() and other_slot.folder.exists()
    assert store.used_bytes() == len(SAMPLE) + 3


def test_uploads_are_deleted_when_the_session_ends(tmp_path):
    store = UploadStore(parent=tmp_path)
    lease = store.lease("s1")
    up = store.store("s1", "data", [UploadedFile("a.json", SAMPLE)])
    kept = store.store("s2", "data", [UploadedFile("a.json", SAMPLE)])
    del lease  # the session's state is dropped
    gc.collect()
    assert not up.folder.exists() and not up.folder.parent.exists()
    assert kept.folder.exists()
    store.end_session("s2")
    assert _files_under(store.root) == []


def test_uploads_unused_past_their_age_are_swept(tmp_path):
    store = UploadStore(parent=tmp_path, max_age=3600)
    old = store.store("s1", "data", [UploadedFile("a.json", SAMPLE)])
    old.last_used[0] -= 3601  # an hour and a second ago
    new = store.store("s2", "data", [UploadedFile("a.json", SAMPLE)])  # sweeps on the way
    assert not old.folder.exists() and new.folder.exists()


def test_caps_per_session_and_for_all_sessions_count_what_is_kept(tmp_path):
    kb = b"[" + b" " * 998 + b"]"  # a 1,000-byte JSON file
    store = UploadStore(
        parent=tmp_path, max_upload_bytes=10_000, max_session_bytes=2_500, max_store_bytes=4_000
    )
    store.store("s1", "data", [UploadedFile("a.json", kb), UploadedFile("b.json", kb)])
    refused = store.store("s1", "gsm", [UploadedFile("c.json", kb)])  # 500 left in s1
    assert (
        refused.paths == (None,)
        and refused.issues[0].message
        == "1000 bytes; only 500 bytes of the cap per session (2500) are left"
    )
    store.store("s2", "data", [UploadedFile("d.json", kb)])  # 1,000 left overall
    bomb = _zip({"big.json": b"0" * 5_000})
    refused = store.store("s3", "data", [UploadedFile("big.zip", bomb)])
    assert refused.issues[0].message == (
        "would inflate to 5000 bytes; only 1000 bytes of the cap for all sessions (4000) are left"
    )
    assert _files_under(refused.folder) == []  # refused before anything was written
    assert store.used_bytes() == 3_000


@pytest.mark.parametrize(
    ("proof", "message"),
    [
        ({"efficiency": "high"}, "efficiency is 'high', expected a number"),
        ({"efficiency": None}, "efficiency is None, expected a number"),
        ({"distance_dfs": "x"}, "distance_dfs is 'x', expected a number"),
        ({"strategy": None}, "strategy is None, expected a string"),
        ({"correct": "yes"}, "correct is 'yes', expected true or false"),
    ],
)
def test_efficiency_proof_records_with_wrong_types_are_named_and_left_out(proof, message):
    good = {"problem_id": 1, "strategy": "dfs", "correct": True, "efficiency": 0.5}
    problems, proofs, issues = check_efficiency_records(
        [{"problem_id": 1}], [good, {**good, **proof}], "problems.jsonl", "proofs.jsonl"
    )
    assert problems == [{"problem_id": 1}] and proofs == [good]
    assert [str(i) for i in issues] == [f"proofs.jsonl: record 2: skipped: {message}"]


def test_efficiency_problem_records_without_an_id_are_named_and_left_out():
    problems, _, issues = check_efficiency_records(
        [{"problem_id": 1}, {"text": "no id"}, {"problem_id": [1]}], [], "p.jsonl", "q.jsonl"
    )
    assert problems == [{"problem_id": 1}]
    assert [i.location for i in issues] == ["record 2", "record 3"]
    assert "no problem_id" in issues[0].message
    assert os.sep not in issues[1].message  # names the upload, never a server path


def test_uploads_of_a_disconnected_session_are_swept(tmp_path):
    connected = {"s1", "s2"}
    store = UploadStore(parent=tmp_path, is_alive=lambda s: s in connected)
    gone = store.store("s1", "data", [UploadedFile("a.json", SAMPLE)])
    connected.discard("s1")  # its tab is closed
    kept = store.store("s2", "data", [UploadedFile("a.json", SAMPLE)])  # sweeps on the way
    assert not gone.folder.exists() and kept.folder.exists()


def test_a_background_sweep_needs_no_other_upload(tmp_path):
    import time

    connected = {"s1"}
    store = UploadStore(parent=tmp_path, is_alive=lambda s: s in connected, sweep_every=0.05)
    up = store.store("s1", "data", [UploadedFile("a.json", SAMPLE)])
    connected.clear()
    for _ in range(200):  # a hang guard, not a timing: the sweep runs every 0.05 s
        if not up.folder.exists():
            break
        time.sleep(0.05)
    assert not up.folder.exists()
    assert store.used_bytes() == 0


def test_the_storing_session_is_never_swept_by_its_own_upload(tmp_path):
    # the runtime may not list a session as active yet while its first script runs
    store = UploadStore(parent=tmp_path, is_alive=lambda s: False)
    up = store.store("s1", "data", [UploadedFile("a.json", SAMPLE)])
    assert store.store("s1", "data", [UploadedFile("a.json", SAMPLE)]) is up
    assert up.folder.exists()


def test_the_apps_sweep_interval_is_a_minute_unless_the_environment_says_otherwise():
    from dagmath_viz.schema import InputError
    from dagmath_viz.store.uploads import SWEEP_ENV, sweep_interval

    assert SWEEP_ENV == "DAGMATH_UPLOAD_SWEEP_SECONDS"  # the name the README documents
    assert sweep_interval({}) == 60.0
    assert sweep_interval({SWEEP_ENV: " "}) == 60.0
    assert sweep_interval({SWEEP_ENV: "0.5"}) == 0.5
    for bad in ("0", "-1", "nan", "inf", "a minute"):
        with pytest.raises(InputError, match=f"^{SWEEP_ENV}=.*above 0$"):
            sweep_interval({SWEEP_ENV: bad})
