"""Labels on steps (dagmath_viz.store.labels) and ``dagmath labels``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from dagmath_viz.cli import main
from dagmath_viz.schema import InputError
from dagmath_viz.store import labels as lb

REPO = Path(__file__).resolve().parents[1]
GSM_BFS = REPO / "sample_data" / "runs" / "gsm-bfs"


def lab(step, name, problem="1", sample=0, note=""):
    return lb.make_label("m", "d", problem, sample, name, step_id=step, note=note)


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


# --------------------------------------------------------------------------- making


@pytest.mark.parametrize(
    "kwargs, message",
    [
        # bad labels
        ({"label": ""}, "1 to 40 printable"),
        ({"label": "x" * 41}, "1 to 40 printable"),
        ({"label": "bad\x1b[31m"}, "printable"),
        ({"label": 3}, "printable"),
        # bad keys
        ({"sample_id": "0"}, "sample_id must be an integer"),
        ({"sample_id": True}, "sample_id must be an integer"),
        ({"model": ""}, "model must be"),
        ({"problem_id": None}, "problem_id must be"),
        ({"step_id": 1.5}, "step_id must be"),
        ({"step_id": ""}, "step_id must be"),
        # bad notes
        ({"note": "n" * 2001}, "at most 2,000"),
        ({"note": 5}, "a note is text"),
    ],
    ids=lambda v: str(v)[:30],
)
def test_make_label_refuses(kwargs, message):
    args = {"model": "m", "dataset": "d", "problem_id": "1", "sample_id": 0, "label": "ok"}
    step = kwargs.pop("step_id", None)
    note = kwargs.pop("note", "")
    args.update(kwargs)
    with pytest.raises(InputError, match=message):
        lb.make_label(*args.values(), step_id=step, note=note)


def test_a_label_name_is_trimmed_and_ids_kept():
    got = lb.make_label("m", "d", 12, 3, "  wrong step ", step_id="4a")
    assert (got.item, got.label) == (("m", "d", "12", 3, "4a"), "wrong step")


# --------------------------------------------------------------------------- writing, reading


def test_add_then_read_back_with_a_header_and_removals(tmp_path):
    path = tmp_path / "labels.jsonl"
    lb.add_label(path, lab(3, "wrong step", note="sign error"))
    lb.add_label(path, lab(None, "interesting"))
    lb.add_label(path, lab(5, "verification"))
    lb.remove_label(path, lab(5, "verification"))
    written = lines(path)
    assert written[0] == lb.HEADER and len(written) == 5
    assert written[4]["removed"] is True and written[1]["note"] == "sign error"
    found = lb.read_labels(path)
    assert found.issues == () and found.has_header and found.lines == 5
    assert [(x.step_id, x.label, x.note) for x in found.labels] == [
        (3, "wrong step", "sign error"),
        (None, "interesting", ""),
    ]
    rec = {"model": "m", "dataset": "d", "problem_id": 1, "sample_id": 0}
    assert found.for_trajectory(rec) == ((3, "wrong step", "sign error"), (None, "interesting", ""))
    assert found.for_trajectory({**rec, "sample_id": 1}) == ()


def test_bad_lines_are_reported_and_never_lose_labels(tmp_path):
    path = tmp_path / "labels.jsonl"
    lb.add_label(path, lab(1, "ok"))
    with path.open("ab") as handle:  # a user's edits: junk, a foreign record, a cut-short line
        handle.write(b"not json\n")
        handle.write(b'{"model": "m", "n_nodes": 4}\n')
        handle.write(b'[1, 2]\n{"model": "m", "dataset": "d", "probl')
    before = path.read_bytes()
    found = lb.read_labels(path)
    assert [x.label for x in found.labels] == ["ok"]
    where = [(i.file, i.location) for i in found.issues]
    assert where == [(str(path), f"line {n}") for n in (3, 4, 5, 6)]
    assert "not JSON" in found.issues[0].message
    assert "missing dataset, problem_id, sample_id, label" in found.issues[1].message
    assert "JSON object, got list" in found.issues[2].message
    assert path.read_bytes() == before  # reading never rewrites

    lb.add_label(path, lab(2, "later"))  # after a cut-short line: a newline first
    after = path.read_bytes()
    assert after.startswith(before) and after[len(before) : len(before) + 1] == b"\n"
    again = lb.read_labels(path)
    assert [x.label for x in again.labels] == ["ok", "later"] and len(again.issues) == 4


def test_labels_are_never_written_into_a_data_file(tmp_path):
    data = tmp_path / "scored.jsonl"
    data.write_bytes(b'{"model": "m", "n_nodes": 3}\n')
    with pytest.raises(InputError, match="not a label file"):
        lb.add_label(data, lab(1, "ok"))
    assert data.read_bytes() == b'{"model": "m", "n_nodes": 3}\n'
    found = lb.read_labels(data)  # read anyway: reported, nothing taken for a label
    assert found.labels == () and found.issues[0].message == "no label-file header"


def test_an_empty_file_becomes_a_label_file(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    lb.add_label(path, lab(1, "ok"))
    assert lines(path)[0] == lb.HEADER
    with pytest.raises(InputError, match="no such file"):
        lb.read_labels(tmp_path / "missing.jsonl")
    assert lb.read_labels(tmp_path / "missing.jsonl", missing_ok=True).labels == ()


# --------------------------------------------------------------------------- counting


def test_label_counts_hand_worked(tmp_path):
    # A: problem 1 S3 wrong step, problem 1 S4 wrong step, problem 2 whole trajectory
    # wrong step, problem 1 S3 interesting. B: problem 1 S3 wrong step again (same step).
    a = lb.LabelFile(
        "a",
        (lab(3, "wrong step"), lab(4, "wrong step"), lab(None, "wrong step", problem="2"),
         lab(3, "interesting")),
    )  # fmt: skip
    b = lb.LabelFile("b", (lab(3, "wrong step"),))
    table = lb.label_counts([a, b])
    assert table.to_dict("records") == [
        {"label": "interesting", "labels": 1, "trajectories": 1, "steps": 1},
        {"label": "wrong step", "labels": 4, "trajectories": 2, "steps": 2},
    ]
    by_problem = lb.label_counts([a], by=["problem_id"])
    assert by_problem[["problem_id", "label", "labels"]].values.tolist() == [
        ["1", "interesting", 1],
        ["1", "wrong step", 2],
        ["2", "wrong step", 1],
    ]
    assert lb.label_counts([]).empty


def test_label_counts_by_a_scored_column():
    scored = pd.DataFrame(
        {"model": ["m", "m"], "dataset": ["d", "d"], "problem_id": ["1", "2"],
         "sample_id": [0, 0], "class": ["incorrect", "perfect"]}
    )  # fmt: skip
    f = lb.LabelFile("a", (lab(3, "wrong step"), lab(None, "fine", problem="2")))
    table = lb.label_counts([f], by=["class"], scored=scored)
    assert table[["class", "label", "labels"]].values.tolist() == [
        ["incorrect", "wrong step", 1],
        ["perfect", "fine", 1],
    ]
    with pytest.raises(InputError, match="cannot group labels by class"):
        lb.label_counts([f], by=["class"])


# --------------------------------------------------------------------------- agreement


def test_agreement_hand_worked():
    # 4 shared steps: A says x x y y, B says x y y y -> p_o = 3/4;
    # p_e = (2·1 + 2·3) / 16 = 1/2 -> kappa = (3/4 − 1/2) / (1 − 1/2) = 1/2.
    a = lb.LabelFile("a", tuple(lab(s, c) for s, c in zip((1, 2, 3, 4), "xxyy", strict=True)))
    b = lb.LabelFile("b", tuple(lab(s, c) for s, c in zip((1, 2, 3, 4), "xyyy", strict=True)))
    b = lb.LabelFile("b", (*b.labels, lab(9, "x")))  # one item only B labelled
    got = lb.agreement(a, b)
    assert (got.both, got.only_a, got.only_b, got.agreed) == (4, 0, 1, 3)
    assert got.percent == pytest.approx(0.75) and got.kappa == pytest.approx(0.5)


def test_agreement_edge_cases():
    same = lb.LabelFile("a", (lab(1, "x"), lab(2, "x")))
    assert lb.agreement(same, same).kappa is None  # p_e = 1: nothing to correct for
    assert lb.agreement(same, same).percent == 1.0
    assert lb.agreement(same, lb.LabelFile("b")).both == 0
    # a set of two labels is its own category
    two = lb.LabelFile("b", (lab(1, "x"), lab(1, "y"), lab(2, "x")))
    assert lb.agreement(same, two).agreed == 1


# --------------------------------------------------------------------------- the command


def test_labels_command_add_count_agree(tmp_path, capsys):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    key = ["--model", "gsm-bfs", "--dataset", "gsm-logic", "--problem", "10", "--sample", "0"]
    assert main(["labels", "add", str(a), *key, "--step", "5", "--label", "unused given"]) == 0
    assert main(["labels", "add", str(a), *key, "--label", "interesting", "--note", "n"]) == 0
    assert main(["labels", "add", str(b), *key, "--step", "5", "--label", "unused given"]) == 0
    assert main(["labels", "add", str(b), *key, "--sample", "x", "--label", "y"]) == 2
    capsys.readouterr()

    assert main(["labels", "count", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "interesting" in out and "unused given" in out
    assert main(["labels", "count", str(a), "--by", "class", "--data", str(GSM_BFS),
                 "--format", "json"]) == 0  # fmt: skip
    rows = json.loads(capsys.readouterr().out)
    # problem 10 sample 0 of gsm-bfs is correct with dead ends S5, S8: class imperfect
    assert {(r["class"], r["label"]) for r in rows} == {
        ("imperfect", "interesting"),
        ("imperfect", "unused given"),
    }

    assert main(["labels", "agree", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "items labelled in both: 1 (only in A: 1, only in B: 0)" in out
    assert "1 of 1 = 100.0%" in out

    with a.open("ab") as handle:
        handle.write(b"{oops\n")
    assert main(["labels", "count", str(a)]) == 4
    assert f"{a}: line 4: not JSON" in capsys.readouterr().err
    assert main(["labels", "count", str(tmp_path / "none.jsonl")]) == 1


def test_export_html_shows_the_labels(tmp_path):
    labels = tmp_path / "l.jsonl"
    lb.add_label(labels, lb.make_label("gsm-bfs", "gsm-logic", "10", 0, "<b>odd</b>", step_id=5))
    out = tmp_path / "t.html"
    args = ["export-html", str(GSM_BFS), "--problem", "10", "--labels", str(labels), "-o", str(out)]
    assert main([*args, "-q"]) == 0
    page = out.read_text(encoding="utf-8")
    assert 'data-table="labels"' in page and "<td>S5</td><td>&lt;b&gt;odd&lt;/b&gt;</td>" in page


def test_labels_of_rows_for_trajectories_and_for_steps():
    f = lb.LabelFile(
        "a", (lab(3, "wrong step"), lab(None, "interesting"), lab(4, "verification", problem="2"))
    )
    trajectories = pd.DataFrame(
        {"model": ["m", "m", "m"], "dataset": ["d", "d", "d"], "problem": ["1", "2", "3"],
         "sample": [0, 0, 0]}
    )  # fmt: skip
    assert lb.labels_of_rows(trajectories, f) == [
        ("interesting", "wrong step"),  # a step's label marks its trajectory too
        ("verification",),
        (),
    ]
    steps = pd.DataFrame(
        {"model": ["m", "m", "m"], "dataset": ["d", "d", "d"], "problem_id": ["1", "1", "2"],
         "sample_id": [0, 0, 0], "step_id": [3, 5, 3]}
    )  # fmt: skip
    keys = ("model", "dataset", "problem_id", "sample_id")
    assert lb.labels_of_rows(steps, f, keys, "step_id") == [
        ("interesting", "wrong step"),  # its own label and the whole trajectory's
        ("interesting",),
        (),  # problem 2's label is on step 4, not 3
    ]


# --------------------------------------------------------------------------- report --by label

#: A label file written by hand: (model, problem, step, label, extra fields) a line.
_HAND_ROWS = [
    ("gsm-bfs", "10", 5, "unused given", ""),
    ("gsm-bfs", "10", 8, "unused given", ""),
    ("gsm-bfs", "10", None, "interesting", ""),
    ("gsm-dfs", "10", 5, "unused given", ""),
    ("gsm-bfs", "11", 2, "unused given", ""),
    ("gsm-bfs", "11", 2, "unused given", ', "removed": true'),
    ("gsm-bfs", "999", 1, "interesting", ""),
]
HAND_MADE = '{"dagmath_labels": 1}\n' + "".join(
    f'{{"model": "{m}", "dataset": "gsm-logic", "problem_id": "{p}", "sample_id": 0, '
    f'"step_id": {"null" if s is None else s}, "label": "{name}"{extra}}}\n'
    for m, p, s, name, extra in _HAND_ROWS
)


@pytest.fixture
def two_models(tmp_path):
    """gsm-bfs and gsm-dfs copied into one run folder, with a hand-written sidecar."""
    import shutil

    run = tmp_path / "run"
    for name in ("gsm-bfs", "gsm-dfs"):
        shutil.copytree(GSM_BFS.parent / name, run / name)
    (run / lb.SIDECAR_NAME).write_text(HAND_MADE, encoding="utf-8")
    return run


def test_report_by_label_counts_the_sidecar(two_models, capsys):
    assert main(["report", str(two_models), "--by", "label", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    # problem 11's label was removed; problem 999 is not in the data (named on stderr)
    got = {r["label"]: (r["labels"], r["trajectories"], r["steps"]) for r in rows}
    assert got == {"interesting": (1, 1, 0), "unused given": (3, 2, 3)}


def test_report_by_label_and_model_from_a_named_file(two_models, tmp_path, capsys):
    named = tmp_path / "mine.jsonl"
    named.write_text(HAND_MADE + "{oops\n", encoding="utf-8")
    args = ["report", str(two_models), "--by", "label,model", "--labels", str(named)]
    assert main([*args, "--format", "csv"]) == 4  # a line lost: said, and exit 4
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "model,label,labels,trajectories,steps",
        "gsm-bfs,interesting,1,1,0",
        "gsm-bfs,unused given,2,1,2",
        "gsm-dfs,unused given,1,1,1",
    ]
    assert f"{named}: line 9: not JSON" in err
    assert "1 label(s) in" in err and "not counted" in err
    assert main(args) == 4
    table = capsys.readouterr().out
    assert "gsm-dfs" in table and "unused given" in table


def test_report_by_label_without_a_label_file(tmp_path, capsys):
    assert main(["report", str(GSM_BFS), "--by", "label", "--labels", str(tmp_path / "x")]) == 1
    assert "x: no such label file" in capsys.readouterr().err
    assert main(["report", str(GSM_BFS), "--by", "label,nonsense", "--labels", str(tmp_path)]) == 2


def test_a_sidecar_in_a_data_folder_is_never_read_as_data(two_models, tmp_path):
    from dagmath_viz.formats.discovery import discover

    beside = tmp_path / "run" / "gsm-bfs" / "scored.jsonl.labels.jsonl"
    beside.write_text(HAND_MADE, encoding="utf-8")
    found = discover([two_models])
    names = {p.name for p in found.data_files}
    assert lb.SIDECAR_NAME not in names and beside.name not in names
    assert len(found.data_files) == 52  # 26 problem files of each model
