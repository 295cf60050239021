"""Issue 33's hostile inputs in one results folder beside good files, made at test time.

``build(base)`` writes, under ``base/data``, what the red team met in someone else's
results folder (items 1, 2, 3, 5, 8, 9 and 10; item 4's directory-bomb zip too, which no
command but the app's upload opens) and two good files, and returns where each one is.
``dagmath score`` (``tests/test_redteam_33_done.py``) and every page of the app
(``tests/app/test_redteam_33_pages.py``) are run over the same folder. Nothing here is a
committed bomb: every input is small on disk, and the long JSONL line is long only against
the 1 MB line cap the tests set (``LINE_CAP``).
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

#: the JSON Lines line cap the tests set (DAGMATH_MAX_LINE_BYTES), so 3 MB is "too long"
LINE_CAP = 2**20
#: 3,000 nested parentheses (RecursionError in the old exact reader)
NESTED = "(" * 3000 + "6" + ")" * 3000
#: pi to the 4096th beside a decimal (OverflowError)
PI_TOWER = "{" * 4 + r"\pi" + "^8}" * 4
#: 5,000 digits: past int()'s 4,300-digit limit (ValueError)
LONG_DIGITS = "7" * 5000
#: 2^(8^11): an integer of about 1 GB, once built in the server process
POWER_TOWER = "{" * 11 + "2" + "^8}" * 11
ZWSP, RLO = "\u200b", "\u202e"
#: three model names that displayed as the same "good-model"
LOOK_ALIKES = ("good-model", f"good-model{ZWSP}", f"{RLO}ledom-doog")
#: how many scored records each carry a key of their own (item 2)
WIDE_RECORDS = 3000


def steps(final: str = r"The final answer is $\boxed{6}$.") -> list[dict]:
    return [
        {"step_id": 1, "thinking": "given", "direct_dependent_steps": None, "text": "x = 2"},
        {"step_id": 2, "thinking": "so", "direct_dependent_steps": [1], "text": final},
    ]


def record(problem_id: str, final: str | None = None, answer: str = "6", **extra) -> dict:
    rec = {"problem_id": problem_id, "sample_id": 0, "model": "m", "answer": answer}
    return {**rec, "steps": steps() if final is None else steps(final), **extra}


#: one scored record as `dagmath score` writes it (every field of RECORD_FIELDS)
SCORED = {
    "model": "scored-m", "dataset": "d", "problem_id": "1", "sample_id": 0,
    "difficulty": None, "domain": None, "n_nodes": 2, "n_edges": 1, "density": 1.0,
    "max_in_degree": 1, "max_out_degree": 1, "dead_ends": [], "closeness_rate": 1.0,
    "closed": True, "ancestor_share": 1.0, "predicted_answer": "6", "reference_answer": "6",
    "final_correct": True, "perfect": True, "class": "perfect", "answer_check": "equal",
    "errors": [], "source": "good.json:item 1", "answer_step": 2,
}  # fmt: skip


@dataclass(frozen=True)
class Inputs:
    root: Path  # the folder given to dagmath score / the app
    outside: Path  # a sibling folder a link points into
    good: tuple[str, ...]  # problem ids of the good raw records (model "m", all perfect)
    crafted: tuple[str, ...]  # problem ids whose answer is item 1's crafted text
    long_line: Path  # item 9
    fifo: Path  # a FIFO as a data file
    companions: dict[str, Path]  # item 3: problem.json as a link to /dev/zero, a FIFO, a link out
    depends_on: str  # item 5: the Thought Anchors problem whose parent has 5,000 digits
    long_id: str  # item 5: a problem id of 5,000 digits
    scored: Path  # item 2 and 8: scored records, wide and with hostile sources


def _zip(names: list[str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name in names:
            z.writestr(name, b"")
    return buf.getvalue()


def _thought_anchors(root: Path, problem: str, chunks: list[dict]) -> Path:
    folder = root / "ta-model" / "correct_base_solution" / f"problem_{problem}"
    folder.mkdir(parents=True)
    (folder / "chunks_labeled.json").write_text(json.dumps(chunks))
    (folder / "base_solution.json").write_text('{"answer": "3", "is_correct": true}')
    return folder


def build(base: Path) -> Inputs:
    root, outside = base / "data", base / "outside"
    root.mkdir(parents=True)
    outside.mkdir()
    good = ("1", "2")
    (root / "good.json").write_text(json.dumps([record(p) for p in good]))
    # item 1: one crafted answer each; the reference 0.5 beside pi's tower (a decimal)
    crafted = {"11": (NESTED, "6"), "12": (PI_TOWER, "0.5"), "13": (LONG_DIGITS, "6"),
               "14": (POWER_TOWER, "6")}  # fmt: skip
    (root / "crafted.json").write_text(
        json.dumps([record(p, rf"$\boxed{{{a}}}$", ref) for p, (a, ref) in crafted.items()])
    )
    # item 5: a problem id of 5,000 digits; item 10: look-alike names and a boxed 4 + ZWSP
    long_id = "9" * 5000
    others = [record(long_id)]
    others += [{**record("30"), "model": name} for name in LOOK_ALIKES]
    others.append(record("31", rf"so $\boxed{{4{ZWSP}}}$", answer="4"))
    (root / "look_alikes.json").write_text(json.dumps(others))
    # item 9: line 2 is 3 MB, past the 1 MB cap
    long_line = root / "long.jsonl"
    with long_line.open("wb") as out:
        out.write(json.dumps(record("40")).encode() + b"\n")
        out.write(b'{"problem_id": "41", "steps": "' + b"a" * (3 * LINE_CAP) + b'"}\n')
    fifo = root / "fifo.jsonl"
    os.mkfifo(fifo)  # opening it to read would wait for a writer for ever
    # item 4: empty members 900 folders deep (score never opens a zip; the app's upload does)
    deep = "/".join(["d"] * 900)
    (root / "deep.zip").write_bytes(_zip([f"{deep}/{i}.json" for i in range(50)]))
    # item 3: Thought Anchors companions that are not regular files of the folder
    chunks = [
        {"chunk": "let x = 2", "chunk_idx": 0, "depends_on": []},
        {"chunk": r"so \boxed{3}", "chunk_idx": 1, "depends_on": ["0"]},
    ]
    secret = outside / "problem.json"
    secret.write_text(json.dumps({"problem": "SECRET-TEXT", "gt_answer": "SECRET"}))
    companions = {}
    folder = _thought_anchors(root, "50", chunks)
    (folder / "problem.json").symlink_to("/dev/zero")
    companions["/dev/zero"] = folder / "problem.json"
    folder = _thought_anchors(root, "51", chunks)
    os.mkfifo(folder / "problem.json")
    companions["fifo"] = folder / "problem.json"
    folder = _thought_anchors(root, "52", chunks)
    (folder / "problem.json").symlink_to(secret)
    companions["link out"] = folder / "problem.json"
    # item 5: a depends_on entry of 5,000 digits
    bad_parent = [chunks[0], {**chunks[1], "depends_on": [LONG_DIGITS]}]
    folder = _thought_anchors(root, "53", bad_parent)
    (folder / "problem.json").write_text('{"problem": "p", "gt_answer": "3"}')
    # items 2 and 8 (and 5): scored records, each with a key of its own, and sources that
    # point at /etc/passwd, outside, and at a position of 5,000 digits
    scored = root / "scored.jsonl"
    with scored.open("w") as out:
        hostile = ["/etc/passwd", f"{secret}", f"good.json[{LONG_DIGITS}]",
                   f"good.json:item {LONG_DIGITS}"]  # fmt: skip
        for i, source in enumerate(hostile):
            out.write(json.dumps({**SCORED, "problem_id": f"s{i}", "source": source}) + "\n")
        for i in range(WIDE_RECORDS):
            rec = {**SCORED, "problem_id": f"w{i}", f"own_key_{i}": i}
            out.write(json.dumps(rec) + "\n")
    return Inputs(
        root=root,
        outside=outside,
        good=good,
        crafted=tuple(crafted),
        long_line=long_line,
        fifo=fifo,
        companions=companions,
        depends_on="53",
        long_id=long_id,
        scored=scored,
    )
