"""A loaded corpus: rows, trajectories behind them, natural problem order, issue table."""

from __future__ import annotations

import json

from dagmath_viz.cli import main
from dagmath_viz.corpus import load_corpus, natural_key


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
