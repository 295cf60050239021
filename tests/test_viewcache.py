"""The Overview's derived values kept between app starts (dagmath_viz/store/views.py).

What is read back must be what a fresh computation gives: each test derives the values
anew and compares them with what the cache holds. A miss is shown by a new folder (a new
key) that holds nothing, or by ``source_key`` refusing the source.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from dagmath_viz.analysis import metrics, tables
from dagmath_viz.cli import main
from dagmath_viz.draw import figures, paper_figures
from dagmath_viz.run.corpus import load_corpus
from dagmath_viz.store import views as viewcache
from dagmath_viz.store.uploads import UPLOADS_PREFIX

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_RUNS = ROOT / "sample_data" / "runs"
CODE = "code-1"


@pytest.fixture
def frames(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "frames"
    monkeypatch.setenv("DAGMATH_FRAME_CACHE_DIR", str(folder))
    monkeypatch.delenv("DAGMATH_FRAME_CACHE", raising=False)
    return folder


@pytest.fixture(scope="module")
def sample_scored(tmp_path_factory) -> Path:
    """The bundled sample runs scored by ``dagmath score``."""
    out = tmp_path_factory.mktemp("sample") / "scored.jsonl"
    assert main(["score", str(SAMPLE_RUNS), "-o", str(out), "--no-cache", "-q"]) == 0
    return out


def _scored_copy(tmp_path: Path, sample_scored: Path) -> Path:
    path = tmp_path / "data" / "scored.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(sample_scored.read_bytes())
    return path


def _overview_values(df: pd.DataFrame) -> dict:
    """What pages/overview.py derives and keeps, computed afresh."""
    board = tables.leaderboard(df, n_boot=1000)
    by_diff = tables.by_difficulty(df)
    curve = metrics.auc_curve(df)
    counts = tables.class_counts_table(df)
    colours = figures.assign_model_colours(df["model"].unique())
    return {
        "leaderboard": board,
        "model_spread": tables.model_spread(df, board=board),
        "by_difficulty": by_diff,
        "auc_curve": curve,
        "table1": tables.table1(df),
        "class_counts": counts,
        "spread_figure": paper_figures.spread_figure(board),
        "difficulty_figure": paper_figures.difficulty_figure(by_diff, colours),
        "auc_figure": figures.auc_figure(curve, colours=colours),
        "class_counts_figure": figures.class_counts_figure(counts),
    }


def _figure_json(fig) -> dict:
    return json.loads(fig.to_json())


def _drop_empty(value):
    if isinstance(value, dict):
        out = {k: _drop_empty(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v != {}}
    if isinstance(value, list):
        return [_drop_empty(v) for v in value]
    return value


def test_overview_values_read_back_as_computed(tmp_path, sample_scored, frames):
    path = _scored_copy(tmp_path, sample_scored)
    df = load_corpus([path]).scored  # parses the file and leaves its frame copy
    where = viewcache.source_key([path], None, CODE)
    assert where is not None
    folder, _ = where
    for name, value in _overview_values(df).items():
        assert viewcache.read(folder, name) is None  # nothing kept yet
        assert viewcache.write(folder, name, value) is not None, name
    # a later start: the frame read from its copy, every value derived anew to compare
    again = viewcache.source_key([path], None, CODE)
    assert again == where
    fresh = _overview_values(load_corpus([path]).scored)
    for name, value in fresh.items():
        kept = viewcache.read(folder, name)
        if isinstance(value, pd.DataFrame):
            pd.testing.assert_frame_equal(kept, value, check_exact=True)
            assert list(kept.dtypes) == list(value.dtypes), name
        else:
            # the same figure (Plotly leaves out empty objects such as "font": {})
            assert _drop_empty(_figure_json(kept)) == _drop_empty(_figure_json(value)), name
    # the leaderboard as the page shows it is the same too
    pd.testing.assert_frame_equal(
        tables.leaderboard_display(viewcache.read(folder, "leaderboard")),
        tables.leaderboard_display(fresh["leaderboard"]),
    )


def test_leaderboard_by_hand_survives_the_round_trip(tmp_path, frames):
    """A leaderboard of two problems computed by hand, through the cache."""
    records = []
    for pid, correct in (("1", [True, True]), ("2", [True, False])):
        for sample, ok in enumerate(correct):
            records.append({"model": "m", "dataset": "d", "problem_id": pid, "sample_id": sample,
                            "difficulty": 2, "final_correct": ok, "closed": ok,
                            "closeness_rate": 1.0 if ok else 0.5, "class": "perfect" if ok
                            else "incorrect", "n_nodes": 3, "n_edges": 2, "density": 2 / 3,
                            "max_in_degree": 1, "max_out_degree": 1})  # fmt: skip
    board = tables.leaderboard(pd.DataFrame(records), n_boot=0)
    folder = tmp_path / "derived" / "x-y"
    assert viewcache.write(folder, "leaderboard", board) is not None
    kept = viewcache.read(folder, "leaderboard")
    # PASS@1: problem 1 is 2/2, problem 2 is 1/2: mean 0.75; R̂ the same (closed = correct)
    assert kept.loc[0, "pass_at_1"] == 0.75
    assert kept.loc[0, "r_hat"] == 0.75
    assert kept.loc[0, "n_problems"] == 2
    assert kept.loc[0, "n_trajectories"] == 4
    assert bool(kept.loc[0, "small_sample"]) is True


def test_changed_file_is_a_miss(tmp_path, sample_scored, frames):
    path = _scored_copy(tmp_path, sample_scored)
    df = load_corpus([path]).scored
    folder, _ = viewcache.source_key([path], None, CODE)
    viewcache.write(folder, "class_counts", tables.class_counts_table(df))
    # the same bytes less the last record, same size padded, its old times put back
    stat = path.stat()
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]) + b" " * (len(lines[-1]) - 1) + b"\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size
    assert viewcache.source_key([path], None, CODE) is None  # no frame copy of it yet
    changed = load_corpus([path]).scored  # parsed again, a new frame copy
    assert len(changed) == len(df) - 1
    new_folder, _ = viewcache.source_key([path], None, CODE)
    assert new_folder != folder
    assert viewcache.read(new_folder, "class_counts") is None
    viewcache.write(new_folder, "class_counts", tables.class_counts_table(changed))
    assert not folder.exists()  # the old key's values are gone
    assert viewcache.read(new_folder, "class_counts")["total"].sum() == len(df) - 1


def test_other_code_is_a_miss(tmp_path, sample_scored, frames):
    path = _scored_copy(tmp_path, sample_scored)
    df = load_corpus([path]).scored
    folder, _ = viewcache.source_key([path], None, CODE)
    viewcache.write(folder, "table1", tables.table1(df))
    other, _ = viewcache.source_key([path], None, "code-2")
    assert other != folder
    assert viewcache.read(other, "table1") is None


def test_sources_that_are_not_kept(tmp_path, sample_scored, frames, monkeypatch):
    path = _scored_copy(tmp_path, sample_scored)
    load_corpus([path])
    assert viewcache.source_key([path], None, CODE) is not None
    assert viewcache.source_key([path], "answers.csv", CODE) is None  # an answer key
    assert viewcache.source_key([path, path], None, CODE) is None  # more than one path
    assert viewcache.source_key([SAMPLE_RUNS], None, CODE) is None  # a folder
    with monkeypatch.context() as m:
        m.setenv("DAGMATH_FRAME_CACHE", "0")
        assert viewcache.source_key([path], None, CODE) is None
    # an uploaded file: no frame copy and no derived values, even with a copy planted
    upload = tmp_path / f"{UPLOADS_PREFIX}abc" / "data" / "scored.jsonl"
    upload.parent.mkdir(parents=True)
    upload.write_bytes(path.read_bytes())
    load_corpus([upload])
    assert viewcache.source_key([upload], None, CODE) is None
    # a file with no frame copy (written with the cache off) is not kept either
    fresh = tmp_path / "other" / "scored.jsonl"
    fresh.parent.mkdir()
    fresh.write_bytes(path.read_bytes())
    assert viewcache.source_key([fresh], None, CODE) is None


def test_values_that_would_not_come_back_are_not_kept(tmp_path):
    folder = tmp_path / "derived" / "x-y"
    mixed = pd.DataFrame({"a": [1, "x"]})  # Parquet refuses mixed objects
    assert viewcache.write(folder, "mixed", mixed) is None
    assert viewcache.read(folder, "mixed") is None
    assert viewcache.write(folder, "scalar", 3) is None
    assert viewcache.write(folder, "../escape", pd.DataFrame({"a": [1]})) is None
    assert not (tmp_path / "derived" / "escape.parquet").exists()


def test_corrupt_value_is_a_miss(tmp_path):
    folder = tmp_path / "derived" / "x-y"
    frame = pd.DataFrame({"a": [1.5, float("nan")], "b": ["x", None]})
    target = viewcache.write(folder, "t", frame)
    pd.testing.assert_frame_equal(viewcache.read(folder, "t"), frame, check_exact=True)
    target.write_bytes(b"not parquet")
    assert viewcache.read(folder, "t") is None
    (folder / "f.json").write_text("{")
    assert viewcache.read(folder, "f") is None


def test_unwritable_folder_is_no_cache(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert viewcache.write(blocker / "x-y", "t", pd.DataFrame({"a": [1]})) is None


def _raw_corpus(run: Path):
    """The log-count folder loaded as the app loads a large one: streamed, its run copy kept."""
    return load_corpus([run], stream_bytes=0)


def test_a_raw_folder_keeps_its_values_beside_its_run_copy(tmp_path, frames):
    from dagmath_viz.store import frames as colcache
    from tests.logcount import write_logcount

    run = write_logcount(tmp_path / "run")
    first = _raw_corpus(run)
    assert first.run_copy is not None  # scored now, and kept
    again = _raw_corpus(run)
    assert again.run_copy == first.run_copy  # read back: the same copy
    where = viewcache.source_key([str(run)], None, CODE, again.run_copy)
    assert where is not None
    folder, _ = where
    board = tables.leaderboard(first.scored, n_boot=1000)
    assert viewcache.write(folder, "leaderboard", board) is not None
    pd.testing.assert_frame_equal(viewcache.read(folder, "leaderboard"), board)
    # the folder goes with its run copy: named as the copy is, up to its key
    copy = frames / f"{colcache.run_stem(*first.run_copy)}.parquet"
    assert copy.is_file() and folder.parent == frames / "derived"
    assert folder.name.split("-")[0] == copy.name.split("-")[0]
    # another code version is another key, another folder (with nothing in it)
    other = viewcache.source_key([str(run)], None, "code-2", again.run_copy)
    assert other[0] != folder and viewcache.read(other[0], "leaderboard") is None


def test_a_changed_raw_folder_is_another_copy_and_another_key(tmp_path, frames):
    from tests.logcount import write_logcount

    run = write_logcount(tmp_path / "run")
    before = _raw_corpus(run)
    data = next(run.rglob("problem_1_all_samples.json"))
    data.write_text(data.read_text() + " ")  # same records, one byte more
    after = _raw_corpus(run)
    assert after.run_copy is not None and after.run_copy != before.run_copy
    keys = [viewcache.source_key([str(run)], None, CODE, c.run_copy)[1] for c in (before, after)]
    assert keys[0] != keys[1]


def test_no_run_copy_no_values(tmp_path, frames, monkeypatch):
    from tests.logcount import write_logcount

    run = write_logcount(tmp_path / "run")
    assert load_corpus([run]).run_copy is None  # small: loaded in memory, no run copy
    monkeypatch.setenv("DAGMATH_FRAME_CACHE", "0")
    assert _raw_corpus(run).run_copy is None  # turned off: nothing kept
    assert viewcache.source_key([str(run)], None, CODE, ("id", "key")) is None
