"""Hugging Face dataset files (issue 27 item 1): JSON Lines in a ``.json`` file, ``.jsonl.gz``,
``.ndjson``, ``.parquet``; the field map; free-form replies reported once per file.

The fixtures in tests/fixtures/hf were written by the real ``datasets`` library
(``make_hf_fixtures.py``, versions in ``VERSIONS.txt``). Expected values are read from
those files here with json, gzip and pyarrow, not from this package.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from dagmath_viz.cli import main
from dagmath_viz.formats.discovery import load_paths
from dagmath_viz.formats.fieldmap import FieldMap
from dagmath_viz.formats.registry import format_of
from dagmath_viz.formats.sources import SourceReader
from dagmath_viz.schema import InputError

HF = Path(__file__).parent / "fixtures" / "hf"


def _rows(path: Path) -> list[dict]:
    """The file's records, read without this package."""
    if path.suffix == ".parquet":
        return pq.read_table(path).to_pylist()
    raw = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    return [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]


def _expected(row: dict) -> dict:
    """Dead ends (every step but the last that no step cites) and correctness (the last
    \\boxed{} of the final step against ``answer``), worked out from the record itself."""
    steps = row["steps"]
    cited = {p for s in steps for p in (s["direct_dependent_steps"] or [])}
    dead = [s["step_id"] for s in steps[:-1] if s["step_id"] not in cited]
    final = steps[-1].get("text") or steps[-1].get("node")
    boxed = re.findall(r"\\boxed\{([^}]*)\}", final)[-1]
    return {
        "model": row.get("model", "gold"),
        "problem_id": row["problem_id"],
        "dead_ends": dead,
        "final_correct": boxed == (row.get("answer") or row.get("final_answer")),
    }


FILES = ["trajectories.json", "trajectories.jsonl.gz", "trajectories.ndjson",
         "trajectories.parquet", "gold.parquet"]  # fmt: skip


@pytest.mark.parametrize("name", FILES)
def test_each_hf_file_scores_as_its_rows_say(name: str, tmp_path: Path) -> None:
    path = HF / name
    rows = _rows(path)
    out = tmp_path / "scored.jsonl"
    assert main(["score", str(path), "-o", str(out), "--no-cache"]) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(records) == len(rows)
    got = [
        {k: r[k] for k in ("model", "problem_id", "dead_ends", "final_correct")} for r in records
    ]
    assert got == [_expected(row) for row in rows]


def test_to_json_escapes_slashes_and_they_read_back(tmp_path: Path) -> None:
    raw = (HF / "trajectories.json").read_text(encoding="utf-8")
    assert r"half\/1" in raw  # what datasets wrote
    ((first, *_),) = [load_paths([HF / "trajectories.json"]).trajectories]
    assert first.problem_id == "half/1" and first.problem_text == "What is 1/2 of 4?"


def test_formats_are_named_by_the_registry() -> None:
    assert format_of(HF / "trajectories.json").name == "JSON Lines in .json"
    assert format_of(HF / "trajectories.jsonl.gz").name == "JSON Lines, gzipped"
    assert format_of(HF / "trajectories.ndjson").name == "NDJSON"
    assert format_of(HF / "trajectories.parquet").name == "Parquet"


def test_a_json_document_is_not_taken_for_json_lines(tmp_path: Path) -> None:
    one = tmp_path / "one.json"
    one.write_text('{"steps": []}\n', encoding="utf-8")  # one object, then nothing
    pretty = tmp_path / "pretty.json"
    pretty.write_text('{\n  "steps": []\n}\n', encoding="utf-8")
    array = tmp_path / "array.json"
    array.write_text('[{"steps": []},\n{"steps": []}]\n', encoding="utf-8")
    assert {format_of(p).name for p in (one, pretty, array)} == {"JSON records"}


@pytest.mark.parametrize("name", ["trajectories.parquet", "trajectories.jsonl.gz"])
def test_a_record_is_read_back_from_its_source(name: str) -> None:
    (*_, third) = load_paths([HF / name]).trajectories
    place = "row 3" if name.endswith(".parquet") else "line 3"
    assert third.source == f"{HF / name}:{place}"
    traj, why = SourceReader([HF]).read(third.source, third.key)
    assert why is None and traj == third


def test_broken_container_files_are_named(tmp_path: Path) -> None:
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    (tmp_path / "bad.jsonl.gz").write_bytes(b"not gzip")
    issues = {Path(i.file).name: i.message for i in load_paths([tmp_path]).issues}
    assert issues["bad.parquet"].startswith("not a readable Parquet file")
    assert issues["bad.jsonl.gz"].startswith("not a readable gzip file")


# --------------------------------------------------------------------------- field map


MATH500_MAP = "problem_id=unique_id,problem_text=problem,answer=answer"


def test_a_math500_shaped_file_reads_through_the_field_map(tmp_path: Path) -> None:
    path = HF / "math500_shaped.json"
    rows = _rows(path)
    unmapped = load_paths([path]).trajectories
    assert [t.problem_id for t in unmapped] == ["math500_shaped"] * 2  # the file's stem
    out = tmp_path / "scored.jsonl"
    cmd = ["score", str(path), "-o", str(out), "--no-cache", "--map", MATH500_MAP]
    assert main(cmd) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["problem_id"] for r in records] == [row["unique_id"] for row in rows]
    assert [r["reference_answer"] for r in records] == [row["answer"] for row in rows]
    assert [r["final_correct"] for r in records] == [True, False]  # 4 = 4; 6 != 9
    mapped = load_paths([path], fields=FieldMap.parse(MATH500_MAP)).trajectories
    assert [t.problem_text for t in mapped] == [row["problem"] for row in rows]


def test_report_takes_the_map_too(tmp_path: Path, capsys) -> None:
    assert main(["report", str(HF / "math500_shaped.json"), "--map", MATH500_MAP]) == 0


def test_a_map_naming_a_field_no_record_has_is_said_once(tmp_path: Path, capsys) -> None:
    """A misspelt column would otherwise change nothing without a word (every record's
    problem id falling back to the file's stem)."""
    path = HF / "math500_shaped.json"
    loaded = load_paths([path], fields=FieldMap.parse("problem_id=uniq_id,answer=answer"))
    assert [(i.severity, i.message) for i in loaded.issues] == [
        ("warning", "--map problem_id=uniq_id: no record has the field 'uniq_id'; "
                    "problem_id read as if unmapped")
    ]  # fmt: skip
    assert len(loaded.trajectories) == len(_rows(path))
    assert load_paths([path], fields=FieldMap.parse(MATH500_MAP)).issues == ()
    out = tmp_path / "scored.jsonl"
    assert main(["score", str(path), "-o", str(out), "--no-cache", "--map", "problem_id=uid"]) == 0
    assert "no record has the field 'uid'" in capsys.readouterr().err


def _mixed_upload(root: Path) -> Path:
    """20 files of one record each: f01 and f02 have a ``question`` column, f03..f20 do not;
    and one file of broken JSON (unreadable: not one of the files read through the map)."""
    run = root / "run"
    run.mkdir()
    for k in range(1, 21):
        record = {"problem_id": f"p{k}", "steps": [{"step_id": 1, "text": "\\boxed{2}"}]}
        if k <= 2:
            record["question"] = f"What is {k} + 1?"
        (run / f"f{k:02}.json").write_text(json.dumps([record]), encoding="utf-8")
    (run / "zz_broken.json").write_text("[{", encoding="utf-8")
    return run


def test_a_column_some_files_lack_is_one_warning_naming_how_many(tmp_path: Path, capsys) -> None:
    """A mixed upload of 20 files gave 18 near-identical warnings, one per file lacking the
    column: one now, saying 18 of the 20 files read and naming the first three."""
    run = _mixed_upload(tmp_path)
    fields = FieldMap.parse("problem_text=question")
    loaded = load_paths([run], fields=fields)
    mapped = [i for i in loaded.issues if i.message.startswith("--map ")]
    assert [(i.file, i.severity, i.message) for i in mapped] == [
        (str(run), "warning",
         "--map problem_text=question: no record has the field 'question' in 18 of the 20 "
         "files read (f03.json, f04.json, f05.json and 15 more); problem_text read as if "
         "unmapped in those")
    ]  # fmt: skip
    assert {t.problem_text for t in loaded.trajectories} == {"", "What is 1 + 1?", "What is 2 + 1?"}
    # the same one line on the CLI's stderr (the pool's path, not load_paths)
    out = tmp_path / "scored.jsonl"
    assert main(["score", str(run), "-o", str(out), "--no-cache", "--map", fields.text]) == 4
    err = capsys.readouterr().err
    assert err.count("--map problem_text=question") == 1, err
    assert (
        f"warning: {run}: --map problem_text=question: no record has the field 'question' "
        "in 18 of the 20 files read (f03.json, f04.json, f05.json and 15 more)" in err
    )
    assert "zz_broken.json: file: line 1" in err  # the unreadable file is still named


def test_a_misspelt_column_of_many_files_is_said_once_as_in_none(tmp_path: Path, capsys) -> None:
    run = _mixed_upload(tmp_path)
    fields = FieldMap.parse("problem_text=qustion,problem_id=problem_id")
    loaded = load_paths([run], fields=fields)
    assert [(i.file, i.message) for i in loaded.issues if i.severity == "warning"] == [
        (str(run),
         "--map problem_text=qustion: no record has the field 'qustion' in any of the 20 "
         "files read (a misspelt column?); problem_text read as if unmapped")
    ]  # fmt: skip
    out = tmp_path / "scored.jsonl"
    assert main(["score", str(run), "-o", str(out), "--no-cache", "--map", fields.text]) == 4
    err = capsys.readouterr().err
    assert err.count("no record has the field 'qustion' in any of the 20 files read") == 1, err


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("problem_id", "is not FIELD=COLUMN"),
        ("colour=x", "'colour' is not one of"),
        ("problem_id=a,id=b", "mapped twice"),
        (" , ", "no FIELD=COLUMN entry"),
    ],
)
def test_a_bad_map_is_named(text: str, fragment: str) -> None:
    with pytest.raises(InputError, match=re.escape(fragment)):
        FieldMap.parse(text)


def test_a_bad_map_on_the_command_line_is_a_usage_error(capsys) -> None:
    assert main(["score", str(HF / "math500_shaped.json"), "--map", "colour=x"]) == 2
    assert "'colour' is not one of" in capsys.readouterr().err


# --------------------------------------------------------------------------- free-form


def test_free_form_replies_are_reported_once_per_file(tmp_path: Path) -> None:
    many = tmp_path / "many.jsonl"
    lines = [json.dumps({"problem": f"{i}?", "solution": "<think>hm</think>"}) for i in range(500)]
    many.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = load_paths([HF / "free_form.json", many])
    assert result.trajectories == ()
    assert [(Path(i.file).name, i.message) for i in result.issues] == [
        (
            "free_form.json",
            "free-form chain of thought: no numbered steps; convert it with `dagmath depends` "
            "(2 records not read as trajectories)",
        ),
        (
            "many.jsonl",
            "free-form chain of thought: no numbered steps; convert it with `dagmath depends` "
            "(500 records not read as trajectories)",
        ),
    ]


def test_a_problem_file_is_not_taken_for_free_form_replies(tmp_path: Path) -> None:
    # the efficiency lens's problems: {"id", "text", "answer"}; text is the problem
    problems = tmp_path / "problems.jsonl"
    problems.write_text(json.dumps({"id": "p0", "text": "Ann has 3.", "answer": 3}) + "\n")
    (issue,) = load_paths([problems]).issues
    assert issue.severity == "warning"  # the other lens's data, named as such
    assert issue.message.startswith("skipped: the efficiency lens's word problems as text")
    assert "`dagmath gsm solve --text " in issue.message


def test_the_app_passes_the_map_on_to_its_data_source() -> None:
    import argparse

    from dagmath_viz.cli.app import app_command
    from explorer.common import command_line

    fields = FieldMap.parse(MATH500_MAP)
    args = argparse.Namespace(extra=[], data=None, answers=None, field_map=fields)
    command = app_command(args)
    after = command[command.index("--") + 1 :]
    assert after == ["--map", MATH500_MAP]
    assert command_line(after).field_map == MATH500_MAP


def test_the_apps_corpus_reads_through_the_map(answer_checker) -> None:
    from dagmath_viz.run.corpus import load_corpus

    path = HF / "math500_shaped.json"
    corpus = load_corpus([path], checker=answer_checker, fields=FieldMap.parse(MATH500_MAP))
    assert list(corpus.scored["problem_id"]) == [row["unique_id"] for row in _rows(path)]


def test_the_map_reaches_the_pools_workers(tmp_path: Path, monkeypatch) -> None:
    import shutil

    from dagmath_viz.run import pool

    monkeypatch.setattr(pool, "IN_PROCESS_BYTES", 0)  # worker processes even for 2 files
    for name in ("a", "b"):
        (tmp_path / "data" / name).mkdir(parents=True)
        shutil.copy(HF / "math500_shaped.json", tmp_path / "data" / name / "rows.json")
    out = tmp_path / "scored.jsonl"
    cmd = ["score", str(tmp_path / "data"), "-o", str(out), "--no-cache", "-j", "2"]
    assert main([*cmd, "--map", MATH500_MAP]) == 0
    ids = [json.loads(line)["problem_id"] for line in out.read_text().splitlines()]
    assert ids == [row["unique_id"] for row in _rows(HF / "math500_shaped.json")] * 2
