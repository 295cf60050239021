"""Hostile and malformed input through ``dagmath score``: named errors, nothing lost or hung.

The corpus is ``tests/data/bad/`` (its README lists every case) plus what is too big or too
system-specific to commit, made here at test time: a 10,000-step trajectory, a 1 MB step,
a zip bomb, links leading out of the data folder, and file and folder names that are HTML.
``dagmath score`` runs once over all of it in a subprocess (a hang guard, not a timing
test); the tests below read what it wrote.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tokenize
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from dagmath_viz.store import uploads
from dagmath_viz.store.uploads import UploadedFile, materialise_uploads

REPO = Path(__file__).resolve().parents[1]
BAD = Path(__file__).parent / "data" / "bad"
PWN = "window.top.__pwned=1;parent.__pwned=1;alert(1)"
#: HTML for names on disk: no "/" (a path separator), so no closing tags.
HOSTILE_FILE = f"46_<img src=x onerror={PWN}>.json"
HOSTILE_BROKEN_FILE = f"47_<svg onload={PWN}>.json"
HOSTILE_MODEL_DIR = f"48_m[click](javascript:{PWN})"
HOSTILE_DATASET_DIR = f"d<img src=x onerror={PWN}> $x$"
#: Where the committed zip's absolute member would land if extraction were unsafe.
ABSOLUTE_MEMBER = Path("/tmp/dagmath-hardening-30_absolute.json")
#: The CLI run's hang guard: two answer checks time out (5 s each) on a good day.
CLI_GUARD_S = 180


def _steps(final: str = r"The final answer is $\boxed{6}$.") -> list[dict]:
    return [
        {"step_id": 1, "thinking": "given", "direct_dependent_steps": None, "text": "x = 2"},
        {"step_id": 2, "thinking": "given", "direct_dependent_steps": None, "text": "y = 3"},
        {"step_id": 3, "thinking": "multiply", "direct_dependent_steps": [1, 2], "text": "xy = 6"},
        {"step_id": 4, "thinking": "so", "direct_dependent_steps": [3], "text": final},
    ]


def _record(problem_id: str, steps: list[dict] | None = None, **extra) -> dict:
    record = {"problem_id": problem_id, "sample_id": 0, "model": "bad", "answer": "6"}
    return {**record, "steps": _steps() if steps is None else steps, **extra}


def declared_bomb() -> bytes:
    """A zip whose one member claims to inflate to 4 GB (over the 2 GB cap): refused unread."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bomb/problem_31_all_samples.json", b"0" * 100_000)
    data = bytearray(buf.getvalue())
    # uncompressed size: offset 22 of the local header, offset 24 of the central entry
    central = data.rindex(b"PK\x01\x02")
    struct.pack_into("<I", data, 22, 0xF000_0000)
    struct.pack_into("<I", data, central + 24, 0xF000_0000)
    return bytes(data)


def ratio_bomb(size: int) -> bytes:
    """A real bomb: ``size`` zero bytes deflated about a thousandfold."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bomb.json", b"0" * size)
    return buf.getvalue()


@dataclass(frozen=True)
class BadCorpus:
    """A copy of the bad corpus with the cases made at test time."""

    root: Path  # the data folder given to dagmath score / the app
    outside: Path  # a sibling folder the links point into

    def path(self, name: str) -> Path:
        return self.root / name


def build_bad_corpus(base: Path) -> BadCorpus:
    """Copy ``tests/data/bad`` to ``base/bad`` and add the generated cases."""
    root, outside = base / "bad", base / "outside"
    shutil.copytree(BAD, root)
    (outside / "folder").mkdir(parents=True)
    secret = [_record("secret", model="outside")]
    (outside / "secret.json").write_text(json.dumps(secret), encoding="utf-8")
    (outside / "folder" / "problem_9_all_samples.json").write_text(json.dumps(secret))
    (root / "31_zip_bomb.zip").write_bytes(declared_bomb())
    (root / "32_link_outside.json").symlink_to(outside / "secret.json")
    (root / "45_linked_folder").symlink_to(outside / "folder", target_is_directory=True)
    (root / "49_link_loop.json").symlink_to(root / "49_link_loop.json")
    big = [
        {"step_id": i, "thinking": "next", "direct_dependent_steps": [i - 1] if i > 1 else None,
         "text": f"s{i}"}
        for i in range(1, 10_001)
    ]  # fmt: skip
    big[-1]["text"] = r"The final answer is $\boxed{6}$."
    (root / "43_ten_thousand_steps.json").write_text(json.dumps(_record("43", big)))
    steps = _steps()
    steps[2]["text"] = "x y = 6 " + "because " * 131_072  # 1 MB of text in one step
    steps[3]["text"] = "$" + "\\frac{" * 1000 + r"$ and then $\boxed{6}$."
    (root / "44_one_megabyte_step.json").write_text(json.dumps(_record("44", steps)))
    (root / HOSTILE_FILE).write_text(json.dumps([_record("46")]), encoding="utf-8")
    (root / HOSTILE_BROKEN_FILE).write_text('[{"problem_id": "47", "steps": [', encoding="utf-8")
    official = root / HOSTILE_MODEL_DIR / HOSTILE_DATASET_DIR
    official.mkdir(parents=True)
    sample = {k: v for k, v in _record("48").items() if k not in ("model", "problem_id")}
    (official / "problem_48_all_samples.json").write_text(json.dumps([sample]))
    return BadCorpus(root=root, outside=outside)


# --- what each case must give -----------------------------------------------------------------

#: Refused whole, or at one place, with the reason: (file, "location: message" fragment).
ISSUES = [
    ("01_truncated.json", "file: line 1, column 67: invalid JSON (unexpected end of data)"),
    ("02_top_level_string.json", "top level: JSON str found, expected a list of samples"),
    ("03_top_level_null.json", "top level: JSON null found, expected a list of samples"),
    ("21_deeply_nested.json", "file: line 1, column 1026: invalid JSON (depth limit exceeded)"),
    ("22_deeply_nested_fields.json", "record 1: sample_id [[[[...]]]] is not an integer"),
    ("23_invalid_utf8.json", "file: line 1, column 59: invalid JSON (not UTF-8: byte 0xe9)"),
    ("25_nan.json", "file: line 1, column 36: invalid JSON (unexpected character"),
    ("26_infinity.json", "file: line 1, column 36: invalid JSON (unexpected character"),
    ("32_link_outside.json", "file: refused: a link leading outside the data folder"),
    ("34_bad_jsonl_lines.jsonl", "line 2: column 34: invalid JSON (unexpected end of data)"),
    ("34_bad_jsonl_lines.jsonl", "line 3: JSON int found, expected a list of samples"),
    ("34_bad_jsonl_lines.jsonl", "line 4: column 1: invalid JSON (not UTF-8: byte 0xff)"),
    ("35_scored_record_wrong_types.jsonl", "line 2: scored record: 'closeness_rate' is 'high'"),
    ("35_scored_record_wrong_types.jsonl", "line 3: scored record: unknown class '<script>"),
    ("36_empty_file.json", "file: line 1, column 1: invalid JSON (Input is a zero-length"),
    ("37_binary.json", "file: line 2, column 118: invalid JSON (not UTF-8: byte 0x80)"),
    ("38_answers_broken/answers.json", "file: line 1, column 13: invalid JSON"),
    ("39_wrong_record_fields.json", "record 1: sample_id 'zero' is not an integer"),
    ("40_lone_surrogate.json", "file: line 1, column 56: invalid JSON (no low surrogate"),
    ("45_linked_folder", "file: refused: a link leading outside the data folder"),
    ("49_link_loop.json", "file: refused: a link that loops"),
    (HOSTILE_BROKEN_FILE, "file: line 1, column 33: invalid JSON (unexpected end of data)"),
    # given by name
    (
        "30_zip_traversal.zip",
        "file: skipped: not a .json, .jsonl, .eval, .ndjson, .jsonl.gz or .parquet file",
    ),
]

#: Loaded and scored as illegal; the fault names the file, the record and the step.
ILLEGAL = {
    "04_steps_not_a_list.json": "field 'steps' is str, expected a list",
    "05_step_not_an_object.json": "step at position 3: is int, expected an object",
    "06_parents_not_a_list.json": "step 3: direct_dependent_steps is str, expected a list",
    "07_text_not_a_string.json": "step 2: field 'text' is dict, expected text",
    "08_step_id_string.json": "step at position 1: step_id '1' is not an integer",
    "09_step_id_float.json": "step at position 2: step_id 2.5 is not an integer",
    "11_step_id_huge.json": "step at position 4: step_id 1e+30 is not an integer",
    "12_step_id_boolean.json": "step at position 1: step_id True is not an integer",
    "13_duplicate_ids.json": "step 2: duplicate step_id (first at position 2)",
    "14_self_loop.json": "step 3: cites itself",
    "15_forward_reference.json": "step 2: parent 3 is not an earlier step",
    "16_unknown_parent.json": "step 3: parent 99 does not exist",
    "17_cycle.json": "cycle: 1 -> 2 -> 3 -> 1",
    "18_empty_steps.json": "no steps",
    "19_missing_steps.json": "field 'steps' is missing",
    "20_missing_final_step.json": "step 4: final step has no answer text",
    "22_deeply_nested_fields.json": "step at position 1: step_id '[[[[...]]]]' is not an integer",
    "41_bad_parent_values.json": "step 3: parent '1' is not an integer step id",
}

#: Loaded and scored: the classes of the file's trajectories (sorted).
SCORED = {
    "00_good.json": ["imperfect", "perfect"],
    "10_step_id_negative.json": ["perfect"],  # ids need only be unique integers
    "24_byte_order_mark.json": ["perfect"],
    "27_power_tower.json": ["incorrect"],
    "28_factorial.json": ["incorrect"],
    "29_huge_factorial.json": ["incorrect"],
    "33_hostile_text.json": ["illegal", "perfect", "perfect"],  # 33i: its step id is markup
    "34_bad_jsonl_lines.jsonl": ["perfect", "perfect"],  # lines 1 and 5
    "38_answers_broken/38_data.json": ["unscored"],
    "39_wrong_record_fields.json": ["unscored"],  # the answer is a list: no reference
    "43_ten_thousand_steps.json": ["perfect"],
    "44_one_megabyte_step.json": ["perfect"],
    HOSTILE_FILE: ["perfect"],
    f"{HOSTILE_MODEL_DIR}/{HOSTILE_DATASET_DIR}/problem_48_all_samples.json": ["perfect"],
}


# --- one run of dagmath score over everything ---------------------------------------------------


def _tree(base: Path, skip: tuple[str, ...]) -> dict[str, tuple]:
    """Every entry under ``base`` (links not followed): kind, size and modification time."""
    found = {}
    for folder, dirs, files in os.walk(base):
        for name in dirs + files:
            path = Path(folder) / name
            rel = path.relative_to(base).as_posix()
            if rel.split("/")[0] in skip:
                continue
            st = path.lstat()
            found[rel] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return found


@dataclass(frozen=True)
class CliRun:
    corpus: BadCorpus
    base: Path
    out: Path
    returncode: int
    stderr: str
    stdout: str
    errors: list[str]
    records: list[dict]
    before: dict
    after: dict

    def lines_for(self, name: str) -> list[str]:
        return [e for e in self.errors if e.startswith(f"{self.corpus.path(name)}: ")]

    def records_of(self, name: str) -> list[dict]:
        prefix = str(self.corpus.path(name))
        return [r for r in self.records if r["source"].startswith((prefix + "[", prefix + ":"))]


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory) -> CliRun:
    base = tmp_path_factory.mktemp("hardening")
    corpus = build_bad_corpus(base)
    for name in ("home", "tmp", "cwd"):
        (base / name).mkdir()
    out = base / "out"
    before = _tree(base, skip=("out",))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DAGMATH_", "XDG_"))}
    env.update(HOME=str(base / "home"), TMPDIR=str(base / "tmp"), PYTHONPATH=str(REPO))
    argv = [sys.executable, "-m", "dagmath_viz", "score", str(corpus.root)]
    argv += [str(corpus.path("30_zip_traversal.zip")), "-o", str(out / "scored.jsonl")]
    argv += ["--errors", str(out / "errors.txt")]
    proc = subprocess.run(  # the timeout is the hang guard
        argv, cwd=base / "cwd", env=env, capture_output=True, text=True, timeout=CLI_GUARD_S
    )
    after = _tree(base, skip=("out",))
    errors_file = out / "errors.txt"
    scored_file = out / "scored.jsonl"
    return CliRun(
        corpus=corpus,
        base=base,
        out=out,
        returncode=proc.returncode,
        stderr=proc.stderr,
        stdout=proc.stdout,
        errors=errors_file.read_text().splitlines() if errors_file.exists() else [],
        records=[json.loads(x) for x in scored_file.read_text().splitlines()]
        if scored_file.exists()
        else [],
        before=before,
        after=after,
    )


def test_cli_finishes_without_a_traceback(cli_run):
    # 4: the good files were scored and written, the unreadable ones named (README exit codes)
    assert cli_run.returncode == 4, cli_run.stderr[-3000:]
    assert "Traceback" not in cli_run.stderr + cli_run.stdout
    assert re.search(r"dagmath: \d+ files read, \d+ trajectories loaded", cli_run.stderr)
    assert cli_run.stdout == ""  # the records went to the output file


@pytest.mark.parametrize(
    ("name", "where_and_what"),
    ISSUES,
    ids=[f"{n[:2]}-{w.split(':')[0].replace(' ', '')}" for n, w in ISSUES],
)
def test_refused_input_is_named_with_its_place(cli_run, name, where_and_what):
    lines = cli_run.lines_for(name)
    assert any(line.removeprefix(f"{cli_run.corpus.path(name)}: ").startswith(where_and_what)
               for line in lines), (name, lines)  # fmt: skip


@pytest.mark.parametrize(("name", "fault"), ILLEGAL.items())
def test_structural_faults_are_named_and_the_trajectory_kept(cli_run, name, fault):
    (record,) = cli_run.records_of(name)
    assert record["class"] == "illegal"
    source = record["source"]
    assert source == f"{cli_run.corpus.path(name)}[0]"  # the file and the record's place
    expected = f"{source}: problem {record['problem_id']} sample {record['sample_id']}: {fault}"
    assert any(e.startswith(expected) for e in record["errors"]), record["errors"]
    assert record["closed"] is False


def test_every_trajectory_is_accounted_for(cli_run):
    """Every good trajectory is scored, every bad one is illegal, nothing else appears."""
    expected = {name: sorted(classes) for name, classes in SCORED.items()}
    expected.update({name: ["illegal"] for name in ILLEGAL})
    got: dict[str, list[str]] = {}
    scored_passthrough = []
    for record in cli_run.records:
        if record["source"] == "elsewhere":  # a record already scored (case 35, line 1)
            scored_passthrough.append(record["problem_id"])
            continue
        name = next(n for n in expected if cli_run.records_of(n).count(record))
        got.setdefault(name, []).append(record["class"])
    assert {k: sorted(v) for k, v in got.items()} == expected
    assert scored_passthrough == ["35-1"]


def test_good_records_keep_their_numbers(cli_run):
    (big,) = cli_run.records_of("43_ten_thousand_steps.json")
    assert (big["n_nodes"], big["n_edges"], big["dead_ends"]) == (10_000, 9_999, [])
    good = {r["sample_id"]: r for r in cli_run.records_of("00_good.json")}
    assert good[1]["dead_ends"] == [5] and good[1]["closeness_rate"] == pytest.approx(4 / 5)
    (negative,) = cli_run.records_of("10_step_id_negative.json")
    assert negative["dead_ends"] == [] and negative["n_edges"] == 3


def test_answers_that_stall_a_cas_are_cut_off(cli_run):
    # math-verify never returns on these; the checker's deadline makes them "not equivalent"
    for name in ("27_power_tower.json", "29_huge_factorial.json"):
        (record,) = cli_run.records_of(name)
        assert (record["final_correct"], record["answer_check"]) == (False, "timeout"), name
    (factorial,) = cli_run.records_of("28_factorial.json")
    assert factorial["answer_check"] in ("different", "timeout")
    assert factorial["predicted_answer"] == "100000!"


def test_links_out_of_the_folder_are_not_read(cli_run):
    assert not [r for r in cli_run.records if r["model"] == "outside"]
    assert not [r for r in cli_run.records if str(cli_run.corpus.outside) in r["source"]]


def test_nothing_is_written_outside_the_output(cli_run):
    assert sorted(p.name for p in cli_run.out.iterdir()) == ["errors.txt", "scored.jsonl"]
    changed = {
        rel
        for rel in cli_run.before.keys() | cli_run.after.keys()
        if cli_run.before.get(rel) != cli_run.after.get(rel)
    }
    # The one exception: `dagmath score` keeps answer verdicts between runs in
    # ~/.cache/dagmath-viz (--no-cache turns it off); its file name is fixed, never from input.
    cache = re.compile(r"home(/\.cache(/dagmath-viz(/verdicts-[\w.-]+\.jsonl)?)?)?")
    assert {rel for rel in changed if not cache.fullmatch(rel)} == set()
    assert not ABSOLUTE_MEMBER.exists()
    assert not list(cli_run.base.rglob("30_escaped*"))


def test_hostile_text_reaches_the_output_as_data(cli_run):
    records = cli_run.records_of("33_hostile_text.json")
    assert any(r["model"] == f"m<script>{PWN}</script>" for r in records)
    (named,) = cli_run.records_of(HOSTILE_FILE)
    assert named["source"].endswith(f"{HOSTILE_FILE}:item 1")
    (official,) = cli_run.records_of(
        f"{HOSTILE_MODEL_DIR}/{HOSTILE_DATASET_DIR}/problem_48_all_samples.json"
    )
    assert (official["model"], official["dataset"]) == (HOSTILE_MODEL_DIR, HOSTILE_DATASET_DIR)


def test_links_inside_the_folder_add_nothing_and_loops_end(tmp_path):
    from dagmath_viz.formats.discovery import load_paths

    (tmp_path / "run" / "sub").mkdir(parents=True)
    (tmp_path / "run" / "sub" / "a.json").write_text(json.dumps([_record("1")]))
    (tmp_path / "run" / "alias").symlink_to(tmp_path / "run" / "sub", target_is_directory=True)
    (tmp_path / "run" / "sub" / "loop").symlink_to(tmp_path / "run", target_is_directory=True)
    (tmp_path / "run" / "same.json").symlink_to(tmp_path / "run" / "sub" / "a.json")
    result = load_paths([tmp_path / "run"])
    # the real file, once: links inside the folder (to a file or a folder) add nothing
    # (issue 16 item 10: a file link used to load its target twice)
    assert sorted(t.source for t in result.trajectories) == [
        f"{tmp_path}/run/sub/a.json:item 1",
    ]
    assert result.issues == ()


def test_a_very_deep_graph_is_laid_out_in_reading_order():
    """A 2,800-step chain (vis-network's recursive layout used to overflow Chromium's stack on
    it) is laid out here, one row per step in reading order, every node placed."""
    from dagmath_viz.draw.layout import ROW_STEP
    from dagmath_viz.draw.render import render_dag_html
    from dagmath_viz.schema import Step, Trajectory

    n = 2_802
    steps = tuple(Step(i, (i - 1,) if i > 1 else (), f"s{i}") for i in range(1, n + 1))
    page = render_dag_html(Trajectory("m", "d", "1", 0, steps))
    block = re.search(r'id="dm-data">(.*?)</script>', page, re.S).group(1)
    data = json.loads(block)
    assert data["view"]["layout"] == "reading" and f'data-nodes="{n}"' in page
    boxes = data["layouts"]["reading"]["boxes"]
    assert [b[1] for b in boxes[:3]] == [0, ROW_STEP, 2 * ROW_STEP]
    assert boxes[-1][1] == (n - 1) * ROW_STEP


# --- uploads: the corpus's zips through the app's extraction ------------------------------------


def _written(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_uploaded_traversal_zip_keeps_its_good_member_only(tmp_path):
    dest = tmp_path / "uploads"
    data = (BAD / "30_zip_traversal.zip").read_bytes()
    issues = materialise_uploads([UploadedFile("30_zip_traversal.zip", data)], dest)
    refused = sorted(i.location for i in issues if i.message.startswith("refused"))
    assert refused == [
        "member '../30_escaped.json'",
        "member '/tmp/dagmath-hardening-30_absolute.json'",
        "member 'run/../../30_escaped_nested.json'",
    ]
    assert all(i.file == "30_zip_traversal.zip" for i in issues)
    assert _written(tmp_path) == {
        "uploads/000_30_zip_traversal/run/bad/problem_30_all_samples.json"
    }
    assert not ABSOLUTE_MEMBER.exists()


def test_uploaded_bombs_are_refused_before_anything_is_written(tmp_path, monkeypatch):
    issues = materialise_uploads([UploadedFile("31_zip_bomb.zip", declared_bomb())], tmp_path)
    assert [(i.file, i.location) for i in issues] == [("31_zip_bomb.zip", "file")]
    assert "would inflate to 4026531840 bytes" in issues[0].message
    monkeypatch.setattr(uploads, "MAX_TOTAL_BYTES", 1_000_000)
    bomb = ratio_bomb(20_000_000)
    assert len(bomb) < 40_000  # a 500-fold bomb
    issues = materialise_uploads([UploadedFile("ratio.zip", bomb)], tmp_path / "b")
    assert "cap" in issues[0].message
    assert _written(tmp_path) == set()


def _zip_with(members: dict[str, bytes]) -> bytearray:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return bytearray(buf.getvalue())


def test_members_that_cannot_be_extracted_are_skipped_and_named(tmp_path):
    good = json.dumps([_record("ok")]).encode()
    # a file where a folder is needed, and a name longer than the file system allows
    clash = _zip_with({"a.json": good, "a.json/b.json": good, "x" * 300 + ".json": good})
    # a member whose bytes no longer match its CRC
    corrupt = _zip_with({"c.json": b"[" + b"1," * 5000 + b"1]", "ok.json": good})
    start = corrupt.index(b"c.json") + len("c.json")
    corrupt[start + 10] ^= 0xFF
    # a member flagged as encrypted (zipfile refuses it without a password)
    encrypted = _zip_with({"e.json": good, "ok.json": good})
    struct.pack_into("<H", encrypted, 6, 1)
    central = encrypted.index(b"PK\x01\x02")
    struct.pack_into("<H", encrypted, central + 8, 1)
    zips = {"clash.zip": clash, "corrupt.zip": corrupt, "encrypted.zip": encrypted}
    files = [UploadedFile(name, bytes(data)) for name, data in zips.items()]
    issues = materialise_uploads(files, tmp_path)
    skipped = sorted((i.file, i.location[:16]) for i in issues)
    assert skipped == [
        ("clash.zip", "member 'a.json/b"),
        ("clash.zip", "member 'xxxxxxxx"),
        ("corrupt.zip", "member 'c.json'"),
        ("encrypted.zip", "member 'e.json'"),
    ]
    assert all(i.message.startswith("skipped: cannot extract") for i in issues)
    assert _written(tmp_path) == {
        "000_clash/a.json", "001_corrupt/ok.json", "002_encrypted/ok.json",
    }  # fmt: skip


def test_loose_upload_with_an_impossible_name_is_skipped(tmp_path):
    issues = materialise_uploads([UploadedFile("y" * 300 + ".json", b"[]")], tmp_path)
    assert [i.message[:25] for i in issues] == ["skipped: cannot be stored"]


# --- limits and code hygiene -------------------------------------------------------------------


def test_streamlit_reads_the_upload_limits_from_the_repository_config():
    config_file = REPO / ".streamlit" / "config.toml"
    wanted = tomllib.loads(config_file.read_text())["server"]
    probe = (
        "from streamlit import config; config.get_config_options(force_reparse=True); "
        "print(*[f'{config.get_option(o)}|{config.get_where_defined(o)}' for o in "
        "('server.maxUploadSize', 'server.maxMessageSize', 'client.showErrorDetails')], sep='\\n')"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    upload, message, details = proc.stdout.split()
    assert upload == f"{wanted['maxUploadSize']}|{config_file}"
    assert message == f"{wanted['maxMessageSize']}|{config_file}"
    assert details == f"none|{config_file}"  # no traceback is shown to a user
    assert 0 < wanted["maxUploadSize"] <= 1024


#: Calls that run or unpickle data: forbidden in the package and the app.
FORBIDDEN = {"eval", "exec", "compile", "pickle", "cPickle", "marshal", "shelve", "dill",
             "cloudpickle", "jsonpickle", "read_pickle", "__import__"}  # fmt: skip
#: Documented safe uses: (file, name, line text) -- none today.
ALLOWED: set[tuple[str, str, str]] = set()


def unsafe_calls(root: Path) -> list[tuple[str, str, str]]:
    """(file, name, line) of every forbidden name in ``root``'s package, pages, app.py and
    serve.py.

    Tokens, not text: a comment or docstring saying "pickle" is fine, ``re.compile`` is
    fine, ``eval``/``exec``/``pickle``/``yaml.load``/... as code are not.
    """
    files = sorted([*(root / "dagmath_viz").rglob("*.py"), *(root / "pages").glob("*.py")])
    found = []
    serve = root / "serve.py"  # the self-test below makes a tree with app.py alone
    entry = [root / "app.py", *([serve] if serve.is_file() else [])]
    for path in [*files, *entry]:
        with path.open("rb") as handle:
            tokens = list(tokenize.tokenize(handle.readline))
        for i, tok in enumerate(tokens):
            if tok.type != tokenize.NAME:
                continue
            after_dot = i > 0 and tokens[i - 1].string == "."
            risky = tok.string in FORBIDDEN and not (tok.string == "compile" and after_dot)
            yaml_load = tok.string == "load" and after_dot and tokens[i - 2].string == "yaml"
            if risky or yaml_load:
                found.append((path.relative_to(root).as_posix(), tok.string, tok.line.strip()))
    return found


def test_no_eval_exec_or_unpickling_of_data():
    assert [f for f in unsafe_calls(REPO) if f not in ALLOWED] == []
    assert len(list((REPO / "dagmath_viz").rglob("*.py"))) > 10  # the scan saw the package


def test_the_scan_would_catch_them(tmp_path):
    """The token scan is not vacuous: it flags each form, and not the harmless look-alikes."""
    (tmp_path / "dagmath_viz").mkdir()
    (tmp_path / "pages").mkdir()
    (tmp_path / "app.py").write_text("import pickle\n")
    (tmp_path / "dagmath_viz" / "x.py").write_text(
        '"""pickle and eval in a docstring are fine."""\n'
        "yaml.load(s)\neval(s)\nre.compile('x')\nexec(code)  # eval\n"
    )
    assert [(f, name) for f, name, _ in unsafe_calls(tmp_path)] == [
        ("dagmath_viz/x.py", "load"),
        ("dagmath_viz/x.py", "eval"),
        ("dagmath_viz/x.py", "exec"),
        ("app.py", "pickle"),
    ]


# --- answers: a megabyte of boxes ------------------------------------------------------------


def test_a_megabyte_of_boxes_is_read_in_linear_time():
    """The last box of a 1 MB final step of ``\\boxed{1}`` x 110,000. Searching for the next
    ``\\fbox`` from each box to the end of the text made this quadratic (about a minute);
    the subprocess's timeout is the hang guard."""
    code = (
        "from dagmath_viz.answers.check import predicted_answer; "
        "assert predicted_answer(r'\\boxed{1}' * 110_000) == '1'"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, timeout=10)
    assert proc.returncode == 0, proc.stderr


# ------------------------------------------------------------------ every command reads alike


def _dagmath(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(  # the timeout is the hang guard
        [sys.executable, "-m", "dagmath_viz", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def test_deep_json_is_one_line_in_score_and_simulate(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_bytes(b"[" * 3000 + b"]" * 3000)
    what = "line 1, column 1026: invalid JSON (depth limit exceeded)"
    scored = _dagmath("score", str(deep), "-o", str(tmp_path / "o.jsonl"), "--no-cache")
    assert f"dagmath: error: {deep}: file: {what}" in scored.stderr.splitlines()
    simulated = _dagmath("simulate", str(deep), "--policy", "uniform", "--exact")
    assert simulated.returncode == 1 and "Traceback" not in simulated.stderr
    assert simulated.stderr.splitlines() == [f"dagmath: error: {deep}: {what}"]


def test_gsm_solve_accepts_a_byte_order_mark(tmp_path):
    problems = REPO / "sample_data" / "gsm" / "problems.jsonl"
    first = problems.read_bytes().split(b"\n", 1)[0]
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + first + b"\n")
    out = tmp_path / "solved.jsonl"
    proc = _dagmath("gsm", "solve", str(bom), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 0
