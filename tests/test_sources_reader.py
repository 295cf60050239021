"""``SourceReader`` reads one record alone and keeps a bounded amount (issue 17, item 5).

Reading a record alone must give exactly what reading its whole file gives; what the reader
keeps is bounded by an estimate of bytes, not by a count of files.
"""

from __future__ import annotations

import json
from pathlib import Path

from dagmath_viz.formats.registry import load_file
from dagmath_viz.formats.sources import SourceReader, trajectory_bytes


def _sample(pid, sid, texts: list[str], **extra) -> dict:
    steps = [
        {"step_id": i + 1, "text": t, "thinking": f"why {i + 1}",
         "direct_dependent_steps": [i] if i else None}
        for i, t in enumerate(texts)
    ]  # fmt: skip
    record = {"problem_id": pid, "steps": steps, **extra}
    if sid is not None:
        record["sample_id"] = sid
    return record


def _official(tmp_path: Path, samples: list[dict], pid: int = 3) -> Path:
    folder = tmp_path / "m" / "d"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"problem_{pid}_all_samples.json"
    path.write_text(json.dumps(samples))
    return path


def test_one_record_read_alone_is_the_one_the_whole_file_gives(tmp_path):
    path = _official(tmp_path, [_sample(3, s, [f"a{s}", f"b{s}", f"c{s}"]) for s in range(4)])
    jsonl = tmp_path / "runs.jsonl"
    jsonl.write_text(
        json.dumps(_sample(5, 0, ["x", "y"], model="mm", dataset="dd"))
        + "\n\n"  # a blank line: the next record is on line 3
        + json.dumps(
            [
                _sample(5, 1, ["p"], model="mm", dataset="dd"),
                _sample(5, 2, ["q", "r"], model="mm", dataset="dd"),
            ]
        )  # fmt: skip
        + "\n"
    )
    whole = {t.source: t for f in (path, jsonl) for t in load_file(f).trajectories}
    assert sorted(whole) == sorted(
        [f"{path}:item {i}" for i in (1, 2, 3, 4)]
        + [f"{jsonl}:line 1", f"{jsonl}:line 3, item 1", f"{jsonl}:line 3, item 2"]
    )
    for source, expected in whole.items():
        got, why = SourceReader([tmp_path]).read(source, expected.key)
        assert why is None and got == expected, source
    third, _ = SourceReader([tmp_path]).read(f"{path}:item 3", ("m", "d", "3", 2))
    assert [s.text for s in third.steps] == ["a2", "b2", "c2"]
    last, _ = SourceReader([tmp_path]).read(f"{jsonl}:line 3, item 2", ("mm", "dd", "5", 2))
    assert [s.text for s in last.steps] == ["q", "r"]


def test_a_record_without_sample_id_gets_its_position_as_the_whole_file_gives(tmp_path):
    # no sample_id: the loader numbers the records by position (0, 1, ...), so the second
    # record of the file is sample 1 however it is read
    path = _official(tmp_path, [_sample(3, None, ["a"]), _sample(3, None, ["b"])])
    for key in (("m", "d", "3", 1), None):
        traj, why = SourceReader([tmp_path]).read(f"{path}:item 2", key)
        assert why is None and traj.sample_id == 1 and traj.steps[0].text == "b"


def test_a_file_rewritten_since_it_was_read_is_read_again(tmp_path):
    path = _official(tmp_path, [_sample(3, 0, ["old"])])
    reader = SourceReader([tmp_path])
    assert reader.read(f"{path}:item 1")[0].steps[0].text == "old"
    path.write_text(json.dumps([_sample(3, 0, ["new text"]), _sample(3, 1, ["other"])]))
    assert reader.read(f"{path}:item 2")[0].steps[0].text == "other"


def test_what_the_reader_keeps_is_bounded_by_bytes(tmp_path):
    # one step of 1,000 characters of text and "why 1" (5): 1,005 characters, plus the
    # allowance of 400 per step and 2,000 per trajectory = 3,405 bytes each
    paths = [
        _official(tmp_path / f"r{i}", [_sample(i, 0, [str(i) * 1000])], pid=i) for i in range(4)
    ]
    first = SourceReader([tmp_path]).read(f"{paths[0]}:item 1")[0]
    assert trajectory_bytes(first) == 3405
    reader = SourceReader([tmp_path], max_bytes=2 * 3405)
    kept = [reader.read(f"{p}:item 1")[0] for p in paths]
    assert reader.kept_bytes == 2 * 3405
    # the last two read are kept (the same objects come back), the first two were let go
    assert reader.read(f"{paths[3]}:item 1")[0] is kept[3]
    assert reader.read(f"{paths[2]}:item 1")[0] is kept[2]
    again = reader.read(f"{paths[0]}:item 1")[0]
    assert again is not kept[0] and again == kept[0]
    assert reader.kept_bytes <= reader.max_bytes


def test_a_trajectory_larger_than_the_bound_is_returned_but_not_kept(tmp_path):
    path = _official(tmp_path, [_sample(3, 0, ["x" * 5000])])
    reader = SourceReader([tmp_path], max_bytes=4000)
    traj, why = reader.read(f"{path}:item 1")
    assert why is None and traj.steps[0].text == "x" * 5000
    assert reader.kept_bytes == 0
    assert reader.read(f"{path}:item 1")[0] is not traj
