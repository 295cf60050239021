"""CSV downloads: text that a spreadsheet would run as a formula is neutralised (OWASP)."""

from __future__ import annotations

import csv
import io

import pandas as pd

from dagmath_viz.export import csv_bytes, neutralise_formulas


def _rows(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"))))


def test_formula_cells_get_a_quote_prefix():
    df = pd.DataFrame(
        {
            "model": ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)", "plain", "a=b"],
            "n": [1, 2, 3, 4, 5, 6],
        }
    )
    rows = _rows(csv_bytes(df))
    assert rows[0] == ["model", "n"]
    assert [r[0] for r in rows[1:]] == [
        '\'=HYPERLINK("http://x","y")',
        "'+1+1",
        "'-2+3",
        "'@SUM(A1)",
        "plain",  # untouched: does not start with a formula character
        "a=b",
    ]


def test_tab_and_carriage_return_prefixes_are_neutralised():
    df = pd.DataFrame({"t": ["\t=1", "\r=1"]})
    assert list(neutralise_formulas(df)["t"]) == ["'\t=1", "'\r=1"]


def test_numbers_stay_numbers_and_the_input_is_untouched():
    df = pd.DataFrame({"x": [-0.5, 2.0], "k": [-3, 4], "s": ["-x", None]})
    out = neutralise_formulas(df)
    assert list(out["x"]) == [-0.5, 2.0] and list(out["k"]) == [-3, 4]
    # a missing cell stays missing (None under pandas 2, NaN in pandas 3's str dtype)
    assert out["s"].iloc[0] == "'-x" and pd.isna(out["s"].iloc[1])
    assert df["s"].iloc[0] == "-x"  # a copy was changed, not the caller's frame
    assert _rows(csv_bytes(df))[1][:2] == ["-0.5", "-3"]


def test_column_names_are_neutralised_too():
    df = pd.DataFrame({"=cmd": [1]})
    assert _rows(csv_bytes(df))[0] == ["'=cmd"]
