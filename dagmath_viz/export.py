"""Tables written for other programs: CSV that a spreadsheet opens as text, not formulas.

A cell beginning with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return, which some
spreadsheets skip before looking) is run as a formula by Excel, LibreOffice and Google
Sheets, so model-written text such as ``=HYPERLINK("http://…")`` would become a live link
or worse. As OWASP advises ("CSV Injection"), such cells are prefixed with a single quote.
Numbers are left as numbers (``-0.5`` stays a number: only text cells are prefixed).
"""

from __future__ import annotations

import pandas as pd

__all__ = ["FORMULA_PREFIXES", "csv_bytes", "neutralise_formulas"]

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def _safe(value: object) -> object:
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def neutralise_formulas(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose text cells (and column names) cannot start a formula."""
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object or pd.api.types.is_string_dtype(out[col].dtype):
            out[col] = out[col].map(_safe)
    out.columns = [_safe(str(c)) for c in out.columns]
    return out


def csv_bytes(df: pd.DataFrame) -> bytes:
    """UTF-8 CSV of ``df`` (no index) with formula-looking text cells neutralised."""
    return neutralise_formulas(df).to_csv(index=False).encode("utf-8")
