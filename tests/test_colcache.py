"""The columnar copy of a scored JSONL file (dagmath_viz/store/frames.py, via load_corpus).

The frame read back from the copy must be the frame parsed from the JSONL, dtypes, lists,
None and NaN included: each test compares a load that read the copy against a load with
the cache turned off. That a load *did* read the copy is shown by making the JSON path
raise.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from dagmath_viz.cli import main
from dagmath_viz.run import streamed
from dagmath_viz.run.corpus import load_corpus
from dagmath_viz.score.record import concat_frames
from dagmath_viz.store import frames as colcache
from dagmath_viz.store import views as viewcache

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_RUNS = ROOT / "sample_data" / "runs"
BAD = ROOT / "tests" / "data" / "bad"
THOUGHT_ANCHORS = (ROOT / ".." / "shared" / "data" / "thought-anchors").resolve()


@pytest.fixture
def frames(tmp_path, monkeypatch) -> Path:
    """An empty frame-cache folder, used by every load in the test."""
    folder = tmp_path / "frames"
    monkeypatch.setenv("DAGMATH_FRAME_CACHE_DIR", str(folder))
    monkeypatch.delenv("DAGMATH_FRAME_CACHE", raising=False)
    return folder


def _uncached(paths, monkeypatch) -> pd.DataFrame:
    with monkeypatch.context() as m:
        m.setenv("DAGMATH_FRAME_CACHE", "0")
        return load_corpus(paths).scored


def _cached_only(paths, monkeypatch) -> pd.DataFrame:
    """A load that must not parse any scored JSONL (every file read from its copy)."""

    def refuse(path):
        raise AssertionError(f"{path} was parsed, not read from its copy")

    with monkeypatch.context() as m:
        m.setattr(streamed, "_parsed_scored_jsonl", refuse)
        return load_corpus(paths).scored


def _same(left: pd.DataFrame, right: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(left, right, check_exact=True)
    for col in left.columns:  # None stays None, NaN stays NaN, a list stays a list
        if left[col].dtype == object:
            assert [type(v) for v in left[col]] == [type(v) for v in right[col]], col


def _copies(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.parquet")) if folder.exists() else []


def _record(pid, **fields) -> dict:
    rec = {"model": "m", "dataset": "d", "problem_id": pid, "sample_id": 0, "difficulty": 3,
           "domain": None, "n_nodes": 3, "n_edges": 2, "density": 2 / 3, "max_in_degree": 1,
           "max_out_degree": 1, "dead_ends": [], "closeness_rate": 1.0, "closed": True,
           "ancestor_share": 1.0, "predicted_answer": "7", "reference_answer": "7",
           "final_correct": True, "perfect": True, "class": "perfect", "answer_check": "equal",
           "errors": [], "source": "run/m/d/problem_1.json:item 0", "answer_step": 3}  # fmt: skip
    rec.update(fields)
    return rec


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return path


# Records a scorer or a hand could write that are still valid: None where a value is
# unknown, equal-length lists (numpy would make a 2-D array of them), string step ids,
# text that is HTML or a lone "$", a field the scorer does not know, mixed types in it.
ODD_RECORDS = [
    _record("1", dead_ends=[2, 3], errors=["f: step 2 cites itself"], extra={"a": [1, "x"]}),
    _record(
        "2",
        dead_ends=[4, 5],
        difficulty=None,
        final_correct=None,
        perfect=False,
        **{"class": "unscored"},
        reference_answer=None,
        answer_step=None,
        extra=7,
    ),  # fmt: skip
    _record(
        "10",
        dead_ends=["1a", "2b"],
        predicted_answer="<script>alert(1)</script>",
        domain="Algebra",
        extra=None,
        density=0.1 + 0.2,
        source="",
        errors=["é ✓ $\\frac{1}{2}$", ""],
    ),  # fmt: skip
    _record("3", sample_id=2, difficulty=2.5, extra=1.5, closed=False, closeness_rate=0.0),
]


@pytest.fixture(scope="module")
def sample_scored(tmp_path_factory) -> Path:
    """The bundled sample runs scored by ``dagmath score`` (no verdict cache, no copy)."""
    out = tmp_path_factory.mktemp("sample") / "scored.jsonl"
    assert main(["score", str(SAMPLE_RUNS), "-o", str(out), "--no-cache", "-q"]) == 0
    return out


def test_sample_data_reads_back_identical(sample_scored, frames, monkeypatch):
    parsed = _uncached([sample_scored], monkeypatch)
    assert len(parsed) == 4430 and not _copies(frames)
    first = load_corpus([sample_scored]).scored  # parses, then keeps the copy
    assert len(_copies(frames)) == 1
    _same(first, parsed)
    _same(_cached_only([sample_scored], monkeypatch), parsed)
    assert sorted(p.name for p in sample_scored.parent.iterdir()) == ["scored.jsonl"]


def test_odd_records_read_back_identical(tmp_path, frames, monkeypatch):
    path = _write_jsonl(tmp_path / "data" / "odd.jsonl", ODD_RECORDS)
    parsed = _uncached([path], monkeypatch)
    assert parsed["final_correct"].tolist() == [True, None, True, True]  # object, with None
    assert parsed["dead_ends"].tolist() == [[2, 3], [4, 5], ["1a", "2b"], []]
    assert pd.isna(parsed.loc[1, "difficulty"]) and parsed.loc[3, "difficulty"] == 2.5
    load_corpus([path])
    assert len(_copies(frames)) == 1
    back = _cached_only([path], monkeypatch)
    _same(back, parsed)
    # a field the scorer does not know is kept in the one JSON column (issue 33, item 2)
    other = [json.loads(v) for v in back["other_fields"]]
    assert other == [{"extra": {"a": [1, "x"]}}, {"extra": 7}, {"extra": None}, {"extra": 1.5}]
    assert "extra" not in back.columns


def test_two_files_concatenate_as_parsed(tmp_path, frames, monkeypatch):
    """Per-file frames joined again: a column bool in one file and object in the other
    gets the dtype all its values give, whether the files were parsed or read back."""
    plain = _write_jsonl(tmp_path / "a.jsonl", [_record("1"), _record("2", sample_id=1)])
    odd = _write_jsonl(tmp_path / "b.jsonl", ODD_RECORDS)
    parsed = _uncached([plain, odd], monkeypatch)
    assert parsed["final_correct"].dtype == object and len(parsed) == 6
    load_corpus([plain, odd])
    assert len(_copies(frames)) == 2
    _same(_cached_only([plain, odd], monkeypatch), parsed)


def test_thought_anchors_scored_reads_back_identical(tmp_path, frames, monkeypatch):
    if not THOUGHT_ANCHORS.is_dir():
        if os.environ.get("DAGMATH_REQUIRE_SHARED") == "1":
            pytest.fail(f"{THOUGHT_ANCHORS} not found and DAGMATH_REQUIRE_SHARED=1")
        pytest.skip(f"{THOUGHT_ANCHORS} not found (DAGMATH_REQUIRE_SHARED=1 to fail)")
    out = tmp_path / "ta.jsonl"
    main(["score", str(THOUGHT_ANCHORS), "-o", str(out), "--no-cache", "-q"])
    parsed = _uncached([out], monkeypatch)
    assert len(parsed) == 20 and set(parsed["domain"]) > {"Algebra"}
    load_corpus([out])
    _same(_cached_only([out], monkeypatch), parsed)


def test_rewritten_file_of_the_same_size_is_parsed_again(tmp_path, frames, monkeypatch):
    path = _write_jsonl(tmp_path / "run.jsonl", [_record("1", predicted_answer="7")])
    assert load_corpus([path]).scored.loc[0, "class"] == "perfect"
    old = path.stat()
    path.write_text(path.read_text().replace('"predicted_answer": "7"', '"predicted_answer": "8"'))
    os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))  # even the old mtime put back
    assert path.stat().st_size == old.st_size and path.stat().st_mtime_ns == old.st_mtime_ns
    again = load_corpus([path]).scored
    assert again["predicted_answer"].tolist() == ["8"]
    assert len(_copies(frames)) == 1  # the old copy was replaced, not kept beside it
    _same(_cached_only([path], monkeypatch), again)


def test_corrupt_copy_is_parsed_again_and_replaced(tmp_path, frames, monkeypatch):
    path = _write_jsonl(tmp_path / "run.jsonl", ODD_RECORDS)
    parsed = _uncached([path], monkeypatch)
    load_corpus([path])
    (copy,) = _copies(frames)
    for garbage in (b"", b"PAR1 not parquet at all", copy.read_bytes()[:-20]):
        copy.write_bytes(garbage)
        assert colcache.read(path) is None
        _same(load_corpus([path]).scored, parsed)  # no traceback: parsed instead
        _same(_cached_only([path], monkeypatch), parsed)  # and the copy is whole again


def test_copy_of_another_file_is_not_used(tmp_path, frames, monkeypatch):
    a = _write_jsonl(tmp_path / "a.jsonl", [_record("1")])
    b = _write_jsonl(tmp_path / "b.jsonl", [_record("2")])
    load_corpus([a])
    (copy,) = _copies(frames)
    copy.rename(colcache.cache_file(b, frames))  # where b's copy would be
    assert colcache.read(b) is None
    assert load_corpus([b]).scored["problem_id"].tolist() == ["2"]


def test_unwritable_cache_folder_still_loads(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder would be")
    monkeypatch.setenv("DAGMATH_FRAME_CACHE_DIR", str(blocker / "frames"))
    path = _write_jsonl(tmp_path / "run.jsonl", ODD_RECORDS)
    _same(load_corpus([path]).scored, _uncached([path], monkeypatch))


def test_full_disk_leaves_no_partial_copy(tmp_path, frames, monkeypatch):
    import pyarrow.parquet as pq

    def full(table, where, **kw):
        where.write(b"PAR1 half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pq, "write_table", full)
    path = _write_jsonl(tmp_path / "run.jsonl", ODD_RECORDS)
    _same(load_corpus([path]).scored, _uncached([path], monkeypatch))
    assert frames.is_dir() and list(frames.iterdir()) == []


def test_a_bad_line_means_no_copy(tmp_path, frames, monkeypatch):
    """A file with a bad record goes to load_file, which names the line: never cached."""
    path = tmp_path / "wrong_types.jsonl"
    path.write_bytes((BAD / "35_scored_record_wrong_types.jsonl").read_bytes())
    loaded = load_corpus([path])
    # line 2's closeness_rate is "high", line 3's class is a script: only line 1 loads
    assert len(loaded) == 1 and any("closeness_rate" in i.message for i in loaded.issues)
    assert any("unknown class" in i.message for i in loaded.issues)
    assert not _copies(frames)
    assert len(load_corpus([path]).issues) == len(loaded.issues)


def test_file_changed_while_read_is_not_cached(tmp_path, frames):
    path = _write_jsonl(tmp_path / "run.jsonl", [_record("1")])
    before = path.stat()
    frame = _uncached_frame(path)
    _write_jsonl(path, [_record("1"), _record("2")])
    assert colcache.write(path, frame, before) is None
    assert not _copies(frames)


def _uncached_frame(path: Path) -> pd.DataFrame:
    return concat_frames(streamed._parsed_scored_jsonl(path))


def test_values_json_would_change_are_not_cached(tmp_path, frames):
    path = _write_jsonl(tmp_path / "run.jsonl", [_record("1"), _record("2")])
    for odd in ([1.5, float("nan")], [(1, 2), [1, 2]], [1, pd.Timestamp(0)]):
        frame = _uncached_frame(path)
        frame["extra"] = pd.Series(odd, dtype=object)
        assert colcache.write(path, frame, path.stat()) is None, odd
    frame = _uncached_frame(path)
    frame["when"] = pd.to_datetime([0, 1])  # not a plain dtype
    assert colcache.write(path, frame, path.stat()) is None
    assert not _copies(frames)


def test_uploaded_files_are_never_copied(tmp_path, frames, monkeypatch):
    """Uploads live only as long as their session; a copy in the cache would outlive it."""
    from dagmath_viz.store.uploads import UploadedFile, UploadStore

    store = UploadStore(parent=tmp_path)
    text = "".join(json.dumps(r) + "\n" for r in ODD_RECORDS).encode()
    upload = store.store("session", "data", [UploadedFile("odd.jsonl", text)])
    (path,) = upload.folder.rglob("odd.jsonl")
    assert len(load_corpus([upload.folder])) == 4 and not _copies(frames)
    assert colcache.write(path, _uncached_frame(path), path.stat()) is None
    store.end_session("session")


def test_turned_off_writes_nothing(tmp_path, frames, monkeypatch):
    monkeypatch.setenv("DAGMATH_FRAME_CACHE", "0")
    path = _write_jsonl(tmp_path / "run.jsonl", [_record("1")])
    load_corpus([path])
    assert colcache.cache_dir() is None and not frames.exists()
    assert colcache.write(path, _uncached_frame(path), path.stat(), frames) is None  # even so
    assert main(["score", str(path), "-o", str(tmp_path / "o.jsonl"), "-q",
                 "--cache-dir", str(tmp_path / "c")]) == 0  # fmt: skip
    assert not frames.exists() and not (tmp_path / "c" / "frames").exists()


def test_default_folder_is_beside_the_verdict_cache(tmp_path, monkeypatch):
    monkeypatch.delenv("DAGMATH_FRAME_CACHE_DIR", raising=False)
    monkeypatch.delenv("DAGMATH_FRAME_CACHE", raising=False)
    monkeypatch.setenv("DAGMATH_CACHE_DIR", str(tmp_path / "c"))
    assert colcache.cache_dir() == tmp_path / "c" / "frames"
    monkeypatch.delenv("DAGMATH_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert colcache.cache_dir() == tmp_path / "xdg" / "dagmath-viz" / "frames"


def test_score_leaves_no_copy_and_the_first_load_writes_one(tmp_path, monkeypatch):
    """``dagmath score -o`` writes only its JSONL (building the frame would cost it pandas,
    pyarrow and a second read, ~20 % of a cached run); the app's first load of the file
    writes the copy, and the next load reads it."""
    monkeypatch.delenv("DAGMATH_FRAME_CACHE", raising=False)
    run = _write_jsonl(tmp_path / "in" / "records.jsonl", ODD_RECORDS)
    out, caches = tmp_path / "out" / "scored.jsonl", tmp_path / "caches"
    monkeypatch.setenv("DAGMATH_FRAME_CACHE_DIR", str(caches / "frames"))
    assert main(["score", str(run), "-o", str(out), "--cache-dir", str(caches), "-q"]) == 0
    assert not (caches / "frames").exists()
    first = load_corpus([out])
    assert len(_copies(caches / "frames")) == 1
    _same(_cached_only([out], monkeypatch), first.scored)


def _copy_of(tmp_path: Path, name: str, frames: Path, mtime: int) -> Path:
    """A written copy of a one-record file ``name``, dated ``mtime`` (seconds)."""
    path = _write_jsonl(tmp_path / name, [_record("1")])
    copy = colcache.write(path, _uncached_frame(path), path.stat(), frames)
    assert copy is not None
    os.utime(copy, (mtime, mtime))
    return copy


def test_the_folder_keeps_the_most_recently_used_copies_within_its_cap(
    tmp_path, frames, monkeypatch
):
    monkeypatch.setenv(colcache.MAX_MB_ENV, "1000")
    a = _copy_of(tmp_path, "a.jsonl", frames, 1_000)
    b = _copy_of(tmp_path, "b.jsonl", frames, 2_000)
    # what viewcache keeps beside a copy: a folder named by the source's digest (as the
    # copy is) and a key of its own
    derived_a = viewcache.folder_of(tmp_path / "a.jsonl", "derived-key", frames)
    assert derived_a.name.split("-")[0] == a.name.split("-")[0] != b.name.split("-")[0]
    derived_a.mkdir(parents=True)
    (derived_a / "leaderboard.parquet").write_bytes(b"x" * 10)
    derived_b = viewcache.folder_of(tmp_path / "b.jsonl", "derived-key", frames)
    derived_b.mkdir()
    orphan = frames / "derived" / f"{'0' * 20}-{'1' * 20}"
    orphan.mkdir()  # derived values of no copy, named as viewcache names them
    (frames / "derived" / "0000-gone").mkdir()  # not a name the cache gives: the user's
    size = a.stat().st_size
    # room for two copies (and the 10 derived bytes): writing a third drops the oldest, a
    monkeypatch.setenv(colcache.MAX_MB_ENV, "0")
    monkeypatch.setattr(colcache, "max_bytes", lambda: 2 * size + 10)
    c = _copy_of(tmp_path, "c.jsonl", frames, 3_000)
    assert _copies(frames) == sorted([b, c])
    assert not derived_a.exists()
    assert derived_b.is_dir()  # b's copy stays, and so do its derived values
    assert not orphan.exists()
    assert (frames / "derived" / "0000-gone").is_dir()  # never deleted (issue 33, item 13)
    # reading b makes it the most recent: the next write drops c, not b
    assert colcache.read(tmp_path / "b.jsonl", frames) is not None
    d = _copy_of(tmp_path, "d.jsonl", frames, 10**10)
    assert _copies(frames) == sorted([b, d])


def test_the_copy_just_written_stays_even_over_the_cap(tmp_path, frames, monkeypatch):
    monkeypatch.setenv(colcache.MAX_MB_ENV, "0")
    _copy_of(tmp_path, "a.jsonl", frames, 1_000)
    b = _copy_of(tmp_path, "b.jsonl", frames, 2_000)
    assert _copies(frames) == [b]


def test_the_cap_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv(colcache.MAX_MB_ENV, raising=False)
    assert colcache.max_bytes() == 2 * 2**30
    monkeypatch.setenv(colcache.MAX_MB_ENV, "512")
    assert colcache.max_bytes() == 512 * 2**20
    monkeypatch.setenv(colcache.MAX_MB_ENV, "lots")  # not a number: the default
    assert colcache.max_bytes() == 2 * 2**30
