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

import pytest

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


# ------------------------------------------------------------------ item 9: one very long line


def test_item9_a_jsonl_line_past_the_cap_is_that_files_error_never_held(tmp_path):
    from dagmath_viz import jsonio
    from dagmath_viz.schema import InputError

    path = tmp_path / "long.jsonl"
    with path.open("wb") as out:  # line 2 is 3 MB; the cap 1 MB
        out.write(json.dumps(_record("1")).encode() + b"\n")
        out.write(b'{"x": "' + b"a" * (3 * 2**20) + b'"}\n')
        out.write(json.dumps(_record("3")).encode() + b"\n")
    with pytest.raises(InputError) as caught:
        jsonio.read_lines_bytes(path, cap=2**20)
    assert str(caught.value) == (
        f"{path}: line 2 longer than 1048576 bytes (the cap on one JSON Lines line; "
        "DAGMATH_MAX_LINE_BYTES sets another)"
    )
    # a line of exactly the cap (its newline not counted) is read
    exact = tmp_path / "exact.jsonl"
    exact.write_bytes(b'"' + b"a" * 198 + b'"\n')  # 200 bytes + newline
    assert jsonio.read_lines_bytes(exact, cap=200) == exact.read_bytes()
    with pytest.raises(InputError, match="line 1 longer than 199 bytes"):
        jsonio.read_lines_bytes(exact, cap=199)


@pytest.mark.parametrize("raw", ["0", "-5", "1.5", "lots", "9" * 30])
def test_item9_the_line_cap_from_the_environment_is_checked(raw):
    from dagmath_viz import jsonio
    from dagmath_viz.schema import InputError

    assert jsonio.max_line_bytes({}) == 64 * 2**20
    assert jsonio.max_line_bytes({"DAGMATH_MAX_LINE_BYTES": "1048576"}) == 2**20
    with pytest.raises(InputError, match="DAGMATH_MAX_LINE_BYTES="):
        jsonio.max_line_bytes({"DAGMATH_MAX_LINE_BYTES": raw})


def test_item9_score_keeps_every_good_record_beside_a_file_with_a_long_line(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "good.json").write_text(json.dumps([_record("1"), _record("2")]))
    lines = [json.dumps(_record(str(i))) for i in (3, 4)]
    (data / "good.jsonl").write_text("\n".join(lines) + "\n")
    bad = data / "long.jsonl"
    with bad.open("wb") as out:  # 3 MB on line 2, past the 1 MB cap the test sets
        out.write(json.dumps(_record("5")).encode() + b"\n")
        out.write(b'{"problem_id": "6", "steps": "' + b"a" * (3 * 2**20) + b'"}\n')
    out = tmp_path / "scored.jsonl"
    env = {"DAGMATH_MAX_LINE_BYTES": str(2**20)}
    proc = _dagmath("score", str(data), "-o", str(out), "--no-cache", env=env)
    assert proc.returncode == 4, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"{bad}: file: line 2 longer than 1048576 bytes" in proc.stderr, proc.stderr
    assert sorted(r["problem_id"] for r in _scored(out)) == ["1", "2", "3", "4"]


# ------------------------------------------------------------------ item 8: a source is confined


def _scored_beside(data: Path, sources: list[str]) -> Path:
    """A scored JSONL in ``data`` whose records point at ``sources`` (the reader's root is
    the file the app or ``export-html`` was given: its folder is what may be read)."""
    lines = []
    for i, source in enumerate(sources):
        lines.append(json.dumps({"problem_id": str(i), "sample_id": 0, "source": source}))
    path = data / "scored.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_item8_a_source_outside_the_named_folders_is_never_read(tmp_path, monkeypatch):
    from dagmath_viz.formats import sources
    from dagmath_viz.formats.sources import SourceReader

    data, outside = tmp_path / "data", tmp_path / "outside"
    data.mkdir()
    outside.mkdir()
    inside = data / "runs.json"
    inside.write_text(json.dumps([_record("1")]))
    secret = outside / "runs.json"  # a readable trajectory file, but not under data/
    secret.write_text(json.dumps([_record("2")]))
    (data / "link.json").symlink_to(secret)  # a link inside that leads out
    fifo = data / "fifo.json"
    os.mkfifo(fifo)  # opening it would wait for a writer for ever
    hostile = {
        "/etc/passwd": "/etc/passwd",
        "outside, absolute": f"{secret}:item 1",
        "outside, relative": "../outside/runs.json:item 1",
        "a link out": "link.json:item 1",
        "missing": f"{data / 'gone.json'}:item 1",
        "a FIFO": f"{fifo}:item 1",
    }
    opened: list = []
    real_read, real_load = sources.jsonio.read_bytes, sources.load_file
    monkeypatch.setattr(sources.jsonio, "read_bytes", lambda p: opened.append(p) or real_read(p))
    monkeypatch.setattr(sources, "load_file", lambda p: opened.append(p) or real_load(p))
    reader = SourceReader([_scored_beside(data, list(hostile.values()))])
    for what, source in hostile.items():
        traj, why = reader.read(source)
        written = source.rsplit(":item", 1)[0]
        assert traj is None, what
        assert why == f"source file not found: {written}", what  # one wording, no oracle
    assert opened == []  # nothing was opened: /etc/passwd, the FIFO, the outside file
    traj, why = reader.read("runs.json:item 1")  # a source inside is still read
    assert why is None and traj.problem_id == "1"
    assert opened == [inside]


def test_item8_no_named_folder_reads_no_source(tmp_path):
    from dagmath_viz.formats.sources import SourceReader

    path = tmp_path / "runs.json"
    path.write_text(json.dumps([_record("1")]))
    assert SourceReader().read(f"{path}:item 1") == (None, f"source file not found: {path}")
    assert SourceReader([tmp_path]).read(f"{path}:item 1")[0].problem_id == "1"


def test_item8_a_folder_of_links_reads_the_sources_it_gathers(tmp_path):
    """A folder named that holds only links reads each target as named (the walk's rule),
    so its sources are inside what the user named."""
    from dagmath_viz.formats.sources import SourceReader

    kept = tmp_path / "kept" / "model-a"
    kept.mkdir(parents=True)
    (kept / "runs.json").write_text(json.dumps([_record("1")]))
    gather = tmp_path / "gather"
    gather.mkdir()
    (gather / "model-a").symlink_to(kept)
    traj, why = SourceReader([gather]).read(f"{gather / 'model-a' / 'runs.json'}:item 1")
    assert why is None and traj.problem_id == "1"


# ------------------------------------------------------------------ the --dask path's timeouts

#: 3,000 nested parentheses: math-verify cannot settle it within the deadline
NESTED = "(" * 3000 + "6" + ")" * 3000


@pytest.fixture
def dask_client():
    """A local in-process cluster, as tests/test_distributed.py runs one."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None
    ) as cluster:
        with distributed.Client(cluster) as client:
            yield client


def test_dask_path_names_an_answer_check_timeout_and_never_keeps_it(dask_client, tmp_path):
    from dagmath_viz.answers.check import AnswerChecker
    from dagmath_viz.run.distributed import score_on_dask

    data = tmp_path / "data"
    data.mkdir()
    bomb = {**_record("2"), "steps": _steps(r"$\boxed{" + NESTED + "}$")}
    (data / "problem_1.json").write_text(json.dumps([_record("1")]))
    (data / "problem_2.json").write_text(json.dumps([bomb, {**bomb, "sample_id": 1}]))
    (data / "problem_3.json").write_text(json.dumps([{**bomb, "problem_id": "3"}]))
    checker = AnswerChecker(timeout=3)
    run = score_on_dask([data], checker=checker, files_per_partition=1, timeout=3)
    by_id: dict = {}
    for line in b"".join(run.lines()).splitlines():
        rec = json.loads(line)
        by_id.setdefault(rec["problem_id"], []).append(rec["answer_check"])
    assert by_id["1"] == ["equal"]
    reason = by_id["2"][0]
    assert reason.startswith(("timeout", "error")), reason  # unsettled, scored not equivalent
    assert by_id["2"] == [reason, reason] and by_id["3"] == [reason]
    warnings = [str(i) for i in run.issues if i.severity == "warning"]
    # one warning for the pair, naming the first file that gave it and all 3 trajectories
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith(f"{data / 'problem_2.json'}: answer check {reason} on ")
    assert warnings[0].endswith("(3 trajectories): scored not equivalent")
    assert checker.quick_verdict("6", NESTED) is None  # not kept as a verdict


# ------------------------------------------------------------------ done when: all of them at once


def test_done_when_score_keeps_every_good_record_beside_every_hostile_input(tmp_path):
    """A folder holding a long line, a FIFO, a directory-bomb zip and a scored file whose
    sources point outside, beside good files: every good record written, the bad named,
    exit 4, and nothing of /etc/passwd in the output."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "good.json").write_text(json.dumps([_record("1"), _record("2")]))
    with (data / "long.jsonl").open("wb") as out:
        out.write(b'{"problem_id": "9", "steps": "' + b"a" * (3 * 2**20) + b'"}\n')
    os.mkfifo(data / "fifo.jsonl")
    deep = "/".join(["d"] * 900)
    (data / "deep.zip").write_bytes(_empty_members_zip([f"{deep}/{i}.json" for i in range(50)]))
    scored = [
        {"model": "m", "dataset": "d", "problem_id": "3", "sample_id": 0, "class": "perfect",
         "final_correct": True, "answer_check": "equal", "source": "/etc/passwd"},
    ]  # fmt: skip
    (data / "scored.jsonl").write_text(json.dumps(scored[0]) + "\n")
    out = tmp_path / "scored.jsonl"
    proc = _dagmath(
        "score", str(data), "-o", str(out), "--no-cache", env={"DAGMATH_MAX_LINE_BYTES": "1048576"}
    )
    assert proc.returncode == 4, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"{data / 'long.jsonl'}: file: line 1 longer than 1048576 bytes" in proc.stderr
    assert f"{data / 'fifo.jsonl'}: file: skipped: not a regular file" in proc.stderr
    records = _scored(out)
    assert sorted(r["problem_id"] for r in records) == ["1", "2", "3"]
    assert "root:" not in out.read_text()  # the source is carried as text, never read
    assert not (data / "d").exists()  # score does not open zips: no folder was made
