"""A loaded corpus: rows, trajectories behind them, natural problem order, issue table."""

from __future__ import annotations

import json

import pytest

from dagmath_viz.cli import main
from dagmath_viz.formats.discovery import load_paths
from dagmath_viz.run.corpus import load_corpus
from dagmath_viz.text import natural_key


@pytest.fixture(autouse=True)
def _own_frame_cache(tmp_path, monkeypatch):
    """Columnar copies of scored JSONL (colcache.py) go to the test's folder, not ~/.cache."""
    monkeypatch.setenv("DAGMATH_FRAME_CACHE_DIR", str(tmp_path / "frame-cache"))


def _sample(pid: int, sid: int, parents: list) -> dict:
    steps = [
        {"step_id": i + 1, "direct_dependent_steps": p, "text": f"s{i + 1}"}
        for i, p in enumerate(parents)
    ]
    steps[-1]["text"] = r"so $\boxed{7}$"
    return {"problem_id": pid, "sample_id": sid, "steps": steps, "metadata": {"model": "m"}}


def _write_run(root):
    folder = root / "m" / "d"
    folder.mkdir(parents=True)
    for pid in (10, 2):
        samples = [_sample(pid, 0, [None, [1]]), _sample(pid, 1, [None, [2]])]  # 2nd: self-cite
        (folder / f"problem_{pid}_all_samples.json").write_text(json.dumps(samples))
    (folder / "broken.json").write_text('[{"steps": [}')
    (root / "answers.json").write_text(json.dumps({"2": "7", "10": "8"}))


def test_rows_and_trajectories(tmp_path):
    _write_run(tmp_path)
    corpus = load_corpus([tmp_path])
    assert len(corpus) == 4
    row = corpus.row_of("m", "d", "2", 0)
    assert corpus.trajectory(row).problem_id == "2"
    assert corpus.scored.iloc[row]["class"] == "perfect"  # 7 == 7, closed
    assert corpus.scored.iloc[corpus.row_of("m", "d", "10", 0)]["class"] == "incorrect"
    assert corpus.row_of("m", "d", "3", 0) is None
    assert corpus.problems("m", "d") == ["2", "10"]  # natural order, not "10" < "2"


def test_issue_table_lists_load_and_structure_problems(tmp_path):
    _write_run(tmp_path)
    table = load_corpus([tmp_path]).issue_table()
    files = list(table["file"])
    assert any(f.endswith("broken.json") for f in files)
    illegal = table[table["severity"] == "illegal"]
    assert len(illegal) == 2  # sample 1 of each problem cites itself
    assert all("cites itself" in p for p in illegal["problem"])


def test_issue_table_is_made_once_and_handed_out_as_copies(tmp_path, monkeypatch):
    _write_run(tmp_path)
    corpus = load_corpus([tmp_path])
    first = corpus.issue_table()
    first.loc[:, "problem"] = "changed by a caller"
    # the frame is not walked again: a rerun of a page reads the table it made
    monkeypatch.setattr(type(corpus), "_issues", lambda self: pytest.fail("made twice"))
    again = corpus.issue_table()
    assert len(again) == len(first) and "changed by a caller" not in set(again["problem"])
    assert (again["severity"] == "illegal").sum() == 2


def test_scored_jsonl_rows_have_no_trajectory(tmp_path):
    _write_run(tmp_path)
    scored = load_corpus([tmp_path]).scored
    path = tmp_path / "out" / "scored.jsonl"
    assert main(["score", str(tmp_path), "-o", str(path)]) == 4  # written; broken.json named
    corpus = load_corpus([path])
    assert len(corpus) == 4 and corpus.trajectory(0) is None
    assert list(corpus.scored["class"]) == list(scored["class"])


def test_natural_key():
    assert sorted(["p10", "p2", "p1"], key=natural_key) == ["p1", "p2", "p10"]


def _scored_file(tmp_path, monkeypatch):
    """A scored JSONL of 40 records (``dagmath score`` output, copied under new problem ids)."""
    _write_run(tmp_path)
    path = tmp_path / "out" / "scored.jsonl"
    main(["score", str(tmp_path), "-o", str(path)])
    lines = path.read_bytes().splitlines()
    big = []
    for copy in range(10):
        for line in lines:
            rec = json.loads(line)
            rec["problem_id"] = f"{rec['problem_id']}-{copy}"
            big.append(json.dumps(rec))
    path.write_text("\n".join(big) + "\n")
    return path


def test_scored_jsonl_read_in_slices_is_the_same_frame(tmp_path, monkeypatch):
    import dagmath_viz.run.streamed as streamed_module

    path = _scored_file(tmp_path, monkeypatch)
    whole = load_corpus([path]).scored
    monkeypatch.setattr(streamed_module, "SCORED_SLICE", 100)  # a slice of a line or two
    monkeypatch.setenv("DAGMATH_FRAME_CACHE", "0")  # parse it again, not read its copy
    assert len(streamed_module._parsed_scored_jsonl(path)) > 10
    sliced = load_corpus([path])
    assert len(sliced) == 40
    assert list(sliced.scored.dtypes) == list(whole.dtypes)
    assert sliced.scored.equals(whole)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for line, rec in enumerate(records):  # every row is its line of the file
        key = (rec["model"], rec["dataset"], rec["problem_id"], rec["sample_id"])
        assert sliced.row_of(*key) == line
        assert sliced.scored.iloc[line]["n_nodes"] == rec["n_nodes"]
        assert list(sliced.scored.iloc[line]["dead_ends"]) == rec["dead_ends"]


def test_a_bad_line_in_a_later_slice_is_named_and_the_rest_kept(tmp_path, monkeypatch):
    import dagmath_viz.run.streamed as streamed_module

    path = _scored_file(tmp_path, monkeypatch)
    lines = path.read_text().splitlines()
    lines[30] = lines[30].replace('"class": "', '"class": "nonsense-')
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(streamed_module, "SCORED_SLICE", 100)
    corpus = load_corpus([path])
    assert len(corpus) == 39
    bad = json.loads(lines[30])["class"]
    assert bad.startswith("nonsense-")
    assert [(i.location, i.message) for i in corpus.issues] == [
        ("line 31", f"scored record: unknown class '{bad}'")
    ]
    assert corpus.issues == load_paths([path]).issues  # what the one-file reader says


def test_a_key_seen_twice_keeps_its_first_row(tmp_path, monkeypatch):
    path = _scored_file(tmp_path, monkeypatch)
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    again = dict(first, n_nodes=first["n_nodes"] + 5)
    path.write_text("\n".join([*lines, json.dumps(again)]) + "\n")
    corpus = load_corpus([path])
    assert len(corpus) == 41
    key = (first["model"], first["dataset"], first["problem_id"], first["sample_id"])
    assert corpus.row_of(*key) == 0
    assert corpus.row_of(key[0], key[1], key[2], 12345) is None
    assert corpus.row_of("no such model", key[1], key[2], key[3]) is None


def test_a_jsonl_of_trajectories_is_read_once(tmp_path, monkeypatch):
    """Only a file whose first line is a scored record is read by the slice reader; a
    JSONL of trajectories goes to load_file alone (it used to be read by both)."""
    from dagmath_viz import jsonio

    path = tmp_path / "m" / "d" / "runs.jsonl"
    path.parent.mkdir(parents=True)
    step = {"step_id": 1, "thinking": "t", "direct_dependent_steps": None, "text": r"$\boxed{1}$"}
    lines = [{"problem_id": i, "sample_id": 0, "steps": [step], "answer": "1"} for i in range(3)]
    path.write_text("".join(json.dumps(rec) + "\n" for rec in lines))
    reads: list[str] = []
    real, real_lines = jsonio.read_bytes, jsonio.read_lines_bytes
    monkeypatch.setattr(jsonio, "read_bytes", lambda p: reads.append(str(p)) or real(p))
    monkeypatch.setattr(  # JSON Lines are read through the line cap (issue 33 item 9)
        jsonio, "read_lines_bytes", lambda p, cap=None: reads.append(str(p)) or real_lines(p, cap)
    )
    corpus = load_corpus([path])
    assert len(corpus) == 3 and corpus.trajectory(0) is not None
    assert reads.count(str(path)) == 1
