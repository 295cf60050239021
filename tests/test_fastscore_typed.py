"""The typed decoder of the fast path (msgspec) against orjson and the reference path.

``fastscore`` decodes a clean file with msgspec into small typed records instead of orjson's
dicts. It may only do so when that changes nothing: every file below is written byte by
byte (duplicate keys, escapes, big integers, invalid bytes inside a text that is never
read), and ``dagmath score``'s output and issues must be those of the reference path
(``assert_same``, the oracle of ``test_fastscore.py``). Each case also says, by hand, whether
the typed decoder should take the file: a test that only compared outputs would pass with
the decoder never used.
"""

from __future__ import annotations

import json
import random
import struct
from pathlib import Path

import msgspec  # a dependency (requirements.txt): no skipping when it is missing
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_fastscore import assert_same

from dagmath_viz.formats import records
from dagmath_viz.score import fast as fastscore


def _step(i: int, parents: str = "null", text: str | None = None, extra: str = "") -> str:
    text = json.dumps(text if text is not None else f"step {i}")
    return (
        f'{{"step_id": {i}, "thinking": "why {i}", '
        f'"direct_dependent_steps": {parents}, "text": {text}{extra}}}'
    )


def _steps(*steps: str) -> str:
    return "[" + ", ".join(steps) + "]"


def _record(sid: str = "0", extra: str = "", steps: str | None = None) -> str:
    if steps is None:  # three steps, the last boxing the answer
        steps = _steps(_step(1), _step(2, "[1]"), _step(3, "[1, 2]", r"so $\boxed{2}$"))
    return (
        f'{{"problem_id": 1, "sample_id": {sid}, "problem_text": "p", '
        f'"steps": {steps}, "final_answer": "2", "metadata": {{"model": "m"}}{extra}}}'
    )


def _file(*records: str) -> str:
    return "[" + ", ".join(records) + "]"


CLEAN = _record()
BIG = str(2**64)  # one past the largest integer orjson reads as an integer
ESCAPED = r"\u00e9 \ud83d\ude00"  # é and 😀 as JSON escapes (a surrogate pair)
HUGE = "1" + "0" * 400  # past a double's range: orjson refuses it

# name -> (the file's text, whether the typed decoder takes it)
CASES: dict[str, tuple[str, bool]] = {
    "clean": (_file(CLEAN, _record("1")), True),
    "empty-array": ("[]", True),
    "pretty-printed": (json.dumps(json.loads(_file(CLEAN)), indent=2), True),
    # a faulty record in a clean file: typed, and handed to the reference path as parsed
    "forward-parent": (_file(CLEAN, _record("1", steps=_steps(_step(1, "[2]"), _step(2)))), True),
    "missing-parent": (_file(_record(steps=_steps(_step(1), _step(2, "[7]")))), True),
    "self-parent": (_file(_record(steps=_steps(_step(1), _step(2, "[2]")))), True),
    "duplicate-id": (_file(_record(steps=_steps(_step(1), _step(1)))), True),
    "duplicate-parents": (_file(_record(steps=_steps(_step(1), _step(2, "[1, 1]")))), True),
    "no-steps": (_file(_record(steps="[]")), True),
    "final-text-blank": (_file(_record(steps=_steps(_step(1), _step(2, "[1]", "  ")))), True),
    "null-sample-id": (_file(_record("null")), True),
    "sample-id-beyond-63-bits": (_file(_record(str(2**63))), True),
    "sample-id-missing": (_file(CLEAN.replace('"sample_id": 0, ', "")), True),
    "step-fields-missing": (
        _file(_record(steps=_steps('{"step_id": 1}', '{"step_id": 2, "text": "t"}'))),
        True,
    ),
    "ids-not-from-one": (
        _file(_record(steps=_steps(_step(10), _step(20, "[10]"), _step(5, "[20, 10]")))),
        True,
    ),
    "negative-ids": (_file(_record(steps=_steps(_step(-1), _step(-2, "[-1]")))), True),
    "duplicate-key-last-wins": (_file(CLEAN[:-1] + ', "sample_id": 5}'), True),
    "escaped-key": (_file(CLEAN.replace("problem_text", r"problem\u005ftext")), True),
    "unicode-text": (
        _file(_record(steps=_steps(_step(1, text="é ✓ 😀"), _step(2, "[1]", ESCAPED)))),
        True,
    ),
    "huge-thinking": (_file(CLEAN.replace("why 1", "x" * 3_000_000)), True),
    "record-answer-and-difficulty": (
        _file(_record(extra=', "answer": 0.5, "difficulty": 3, "domain": "algebra"')),
        True,
    ),
    "float-difficulty": (_file(_record(extra=', "difficulty": 2.7182818284590451')), True),
    "metadata-with-numbers": (
        _file(CLEAN.replace('{"model": "m"}', '{"model": "m", "t": 0.7, "k": 3}')),
        True,
    ),
    "hostile-model-name": (_file(CLEAN.replace('"model": "m"', '"model": "<b>x</b>"')), True),
    # integers orjson reads as floats: typed, then the file (or the step) goes to orjson
    "step-id-beyond-64-bits": (_file(_record(steps=_steps(_step(1), _step(2**64, "[1]")))), True),
    "sample-id-beyond-64-bits": (_file(_record(BIG)), True),
    "parent-beyond-64-bits": (
        _file(_record(steps=_steps(_step(1), _step(2, f"[1, {-(2**63) - 1}]")))),
        True,
    ),
    "answer-beyond-a-double": (_file(_record(extra=f', "answer": {HUGE}')), True),
    "metadata-int-beyond-64-bits": (
        _file(CLEAN.replace('{"model": "m"}', '{"model": "m", "n": ' + BIG + "}")),
        True,
    ),
    "metadata-int-beyond-a-double": (
        _file(CLEAN.replace('{"model": "m"}', '{"model": "m", "n": ' + HUGE + "}")),
        True,
    ),
    # shapes the typed decoder refuses: parsed by orjson, read as before
    "extra-record-field": (_file(_record(extra=', "temperature": 0.6')), False),
    "extra-step-field": (_file(_record(steps=_steps(_step(1, extra=', "tags": []')))), False),
    "gold-spelling": (
        _file(_record(steps=_steps('{"step_id": 1, "node": "n", "edge": "e"}'))),
        False,
    ),
    "float-step-id": (_file(_record(steps=_steps('{"step_id": 1.0, "text": "t"}'))), False),
    "bool-step-id": (_file(_record(steps=_steps('{"step_id": true, "text": "t"}'))), False),
    "string-parent": (_file(_record(steps=_steps(_step(1), _step(2, '["1"]')))), False),
    "float-parent": (_file(_record(steps=_steps(_step(1), _step(2, "[1.0]")))), False),
    "parents-a-number": (_file(_record(steps=_steps(_step(1), _step(2, "1")))), False),
    "null-text": (_file(_record(steps=_steps(_step(1), '{"step_id": 2, "text": null}'))), False),
    "text-a-number": (_file(_record(steps=_steps('{"step_id": 1, "text": 5}'))), False),
    "thinking-a-list": (_file(_record(steps=_steps('{"step_id": 1, "thinking": ["x"]}'))), False),
    "step-a-string": (_file(_record(steps=_steps(_step(1), '"step"'))), False),
    "steps-missing": (_file(CLEAN.replace('"steps"', '"stepz"')), False),
    "steps-an-object": (_file(_record(steps='{"1": 1}')), False),
    "record-a-string": (_file(CLEAN, '"not a record"'), False),
    "problem-id-a-float": (_file(CLEAN.replace('"problem_id": 1', '"problem_id": 1.5')), False),
    "sample-id-a-string": (_file(_record('"a"')), False),
    "metadata-nested": (_file(CLEAN.replace('{"model": "m"}', '{"model": {"name": "m"}}')), False),
    "one-object": (CLEAN, False),
    "pre-scored": (
        '[{"model": "p", "dataset": "d", "problem_id": "1", "sample_id": 0, "n_nodes": 1, '
        '"n_edges": 0, "density": 0, "max_in_degree": 0, "max_out_degree": 0, '
        '"dead_ends": [], "closeness_rate": 1.0, "closed": true, "class": "perfect"}]',
        False,
    ),
    # invalid JSON where no field is read: the file stays unreadable, with the same message
    "thinking-beyond-a-double": (
        _file(_record(steps=_steps('{"step_id": 1, "thinking": 1e999}'))),
        False,
    ),
    "lone-surrogate-in-thinking": (_file(CLEAN.replace("why 1", r"why \ud800")), False),
    "control-character-in-thinking": (_file(CLEAN.replace("why 1", "why \x01")), False),
    "trailing-garbage": (_file(CLEAN) + " x", False),
    "truncated": (_file(CLEAN)[:-40], False),
    "nan": (_file(CLEAN.replace('"sample_id": 0', '"sample_id": NaN')), False),
}

# bytes that are not UTF-8 (or the UTF-8 of a surrogate), in fields the fast path never reads
BYTE_CASES: dict[str, tuple[bytes, bool]] = {
    "invalid-utf8-in-thinking": (_file(CLEAN).encode().replace(b"why 1", b"why \xff"), False),
    "invalid-utf8-in-problem-text": (_file(CLEAN).encode().replace(b'"p"', b'"\xc3"'), False),
    "utf8-encoded-surrogate": (
        _file(CLEAN).encode().replace(b"why 1", b"why \xed\xa0\x80"),
        False,
    ),
    "raw-utf8-text": (_file(CLEAN).replace("step 1", "étape ✓").encode(), True),
}


def _all_cases() -> dict[str, tuple[bytes, bool]]:
    cases = {name: (text.encode(), typed) for name, (text, typed) in CASES.items()}
    return {**cases, **BYTE_CASES}


@pytest.mark.parametrize("name", list(_all_cases()))
def test_typed_decoder_takes_only_what_orjson_reads_alike(name, answer_checker, tmp_path):
    data, typed = _all_cases()[name]
    folder = tmp_path / "run" / "m" / "d"
    folder.mkdir(parents=True)
    (folder / "problem_1_all_samples.json").write_bytes(data)
    (tmp_path / "run" / "answers.json").write_text('{"1": "2"}')
    assert (fastscore._typed_records(data) is not None) is typed
    assert_same([tmp_path / "run"], answer_checker, workers=1)


def test_cases_are_what_they_say() -> None:
    # the hand-written files: valid JSON exactly where orjson says so
    for name in ("clean", "huge-thinking", "duplicate-key-last-wins", "unicode-text"):
        orjson.loads(CASES[name][0])
    for name in ("thinking-beyond-a-double", "lone-surrogate-in-thinking", "trailing-garbage"):
        with pytest.raises(orjson.JSONDecodeError):
            orjson.loads(CASES[name][0])
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(BYTE_CASES["invalid-utf8-in-thinking"][0])
    assert orjson.loads(CASES["duplicate-key-last-wins"][0])[0]["sample_id"] == 5
    assert type(orjson.loads(CASES["sample-id-beyond-64-bits"][0])[0]["sample_id"]) is float


def test_a_clean_record_reads_as_orjson_reads_it() -> None:
    (record,) = fastscore._typed_records(CASES["duplicate-key-last-wins"][0].encode())
    assert record.sample_id == 5  # the last of the two, as orjson reads them
    assert record.fields() == {
        "steps": [],
        "problem_id": 1,
        "sample_id": 5,
        "problem_text": "p",
        "final_answer": "2",
        "metadata": {"model": "m"},
    }
    parsed = record.as_parsed()
    assert parsed["steps"][2] == {
        "step_id": 3,
        "thinking": "why 3",
        "direct_dependent_steps": [1, 2],
        "text": r"so $\boxed{2}$",
    }
    # and loading reads the two alike (a text left out reads as "", any other field as null)
    (typed,) = fastscore._typed_records(CASES["step-fields-missing"][0].encode())
    (plain,) = orjson.loads(CASES["step-fields-missing"][0])
    assert typed.as_parsed()["steps"][0] == {
        "step_id": 1, "direct_dependent_steps": None, "text": "", "thinking": None,
    }  # fmt: skip
    assert plain["steps"][0] == {"step_id": 1}
    args = ("f.json", "item 1", 0)
    assert records.parse_record(typed.as_parsed(), *args) == records.parse_record(plain, *args)


def test_integers_orjson_reads_as_floats_send_the_file_to_orjson() -> None:
    for name in ("sample-id-beyond-64-bits", "answer-beyond-a-double", "parent-beyond-64-bits"):
        (record,) = fastscore._typed_records(CASES[name][0].encode())
        with pytest.raises(fastscore._Untyped):
            record.as_parsed()


def test_without_msgspec_every_file_is_parsed_by_orjson(answer_checker, tmp_path, monkeypatch):
    monkeypatch.setattr(fastscore, "_DECODER", None)
    folder = tmp_path / "run" / "m" / "d"
    folder.mkdir(parents=True)
    (folder / "problem_1_all_samples.json").write_text(CASES["forward-parent"][0])
    (tmp_path / "run" / "answers.json").write_text('{"1": "2"}')
    assert fastscore._typed_records(b"[]") is None
    assert_same([tmp_path / "run"], answer_checker, workers=1)


def test_real_data_takes_the_typed_decoder(data_dir: Path) -> None:
    # the bundled simulated runs are the shape the decoder is for (the GSM exports carry a
    # field of their own, proof_depth, which the untyped path reads)
    runs = data_dir.parent.parent / "sample_data" / "runs"
    files = sorted(runs.glob("sim-*/*/*_all_samples.json"))
    assert len(files) == 6 * 60
    assert all(fastscore._typed_records(f.read_bytes()) is not None for f in files)


def test_both_parsers_read_every_number_alike() -> None:
    # difficulty, answers and metadata may be floats: msgspec must round each decimal text
    # to the double orjson reads (both promise the nearest one); ints stay ints in both
    rng = random.Random(3)
    texts = [
        "0.1",
        "-0.0",
        "1e-320",
        "4.9e-324",
        "1.7976931348623157e308",
        "2.2250738585072011e-308",
    ]
    texts += [repr(rng.uniform(-1e6, 1e6)) for _ in range(500)]
    texts += [repr(struct.unpack("<d", rng.randbytes(8))[0]) for _ in range(500)]
    texts += [
        f"{rng.randint(0, 10**25)}.{rng.randint(0, 10**25)}e{rng.randint(-330, 300)}"
        for _ in range(1000)
    ]
    texts += [str(rng.randint(-(2**63), 2**64 - 1)) for _ in range(200)]
    texts = [t for t in texts if t not in ("nan", "inf", "-inf")]
    decoder = msgspec.json.Decoder(float | int)
    for text in texts:
        try:
            expected = orjson.loads(text)
        except orjson.JSONDecodeError:
            with pytest.raises(msgspec.ValidationError):
                decoder.decode(text)
            continue
        got = decoder.decode(text)
        assert (type(got), repr(got)) == (type(expected), repr(expected)), text


def _random_record(rng: random.Random, sid: int) -> dict:
    """Steps numbered 1..n with random parents: mostly earlier steps, some listed twice,
    now and then a parent that is missing, the step itself or a later one."""
    n = rng.randint(1, 30)
    steps = []
    for i in range(1, n + 1):
        k = rng.choice([0, 1, 1, 2, 3])
        parents = [rng.randint(1, i - 1) for _ in range(k)] if i > 1 else []
        if rng.random() < 0.02:
            parents.append(rng.choice([0, i, i + 1, n + 5, -1]))
        text = rf"\boxed{{{rng.randint(1, 3)}}}" if rng.random() < 0.3 else f"step {i}"
        steps.append({"step_id": i, "direct_dependent_steps": parents or None, "text": text})
    if rng.random() < 0.05:
        steps[-1]["text"] = " "
    return {"problem_id": 1, "sample_id": sid, "steps": steps}


def test_random_numbered_steps_measure_as_the_reference_path(answer_checker, tmp_path):
    # the one-pass measuring of steps numbered 1..n against loading + validation + scoring
    rng = random.Random(11)
    folder = tmp_path / "run" / "m" / "d"
    folder.mkdir(parents=True)
    records = [_random_record(rng, sid) for sid in range(300)]
    data = orjson.dumps(records)
    (folder / "problem_1_all_samples.json").write_bytes(data)
    (tmp_path / "run" / "answers.json").write_text('{"1": "2"}')
    typed = fastscore._typed_records(data)
    measured = [fastscore._measure_typed(r.steps) for r in typed]
    assert 0 < sum(m is None for m in measured) < len(measured) / 2  # both kinds are met
    assert_same([tmp_path / "run"], answer_checker, workers=1)


_scalars = (
    st.none()
    | st.booleans()
    | st.integers()  # beyond 64 bits too: orjson reads those as floats, or refuses them
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
_RECORD_NAMES = [*fastscore._RECORD_FIELDS, "steps", "temperature"]
_STEP_NAMES = ["step_id", "direct_dependent_steps", "text", "thinking", "node", "edge", "tags"]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    where=st.sampled_from(["record", "step"]),
    name=st.sampled_from(_RECORD_NAMES + _STEP_NAMES),
    value=_values,
    ascii_only=st.booleans(),
)
def test_any_value_in_any_field_scores_as_the_reference_path(
    answer_checker, tmp_path_factory, where, name, value, ascii_only
):
    # one field of a clean record (or of its second step) set to any JSON value: whatever
    # the decoder makes of the file, dagmath score writes what the reference path writes
    record = json.loads(CLEAN)
    target = record if where == "record" else record["steps"][1]
    target[name] = value
    root = tmp_path_factory.mktemp("any")
    folder = root / "m" / "d"
    folder.mkdir(parents=True)
    text = json.dumps([json.loads(CLEAN), record], ensure_ascii=ascii_only)
    (folder / "problem_1_all_samples.json").write_text(text, encoding="utf-8")
    assert_same([root], answer_checker, workers=1)
