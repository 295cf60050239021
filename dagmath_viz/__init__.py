"""dagmath-viz: score and explore DAG-MATH reasoning trajectories.

The library never imports Streamlit; the app in ``app.py`` and ``pages/`` only wires
widgets to these functions. The names below are loaded on first use (PEP 562), so
``dagmath score`` does not pay for pandas at start-up.

The fast way in is :func:`score_paths` (scored records, streamed) or :func:`load_corpus`
(the same scoring, as a pandas table with the trajectories behind its rows); the README's
"Use from Python" shows both.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "AnswerChecker": "answers.check",
    "extract_boxed": "answers.check",
    "is_equivalent": "answers.check",
    "predicted_answer": "answers.check",
    "LoadResult": "formats.discovery",
    "load_answer_key": "formats.answer_keys",
    "load_paths": "formats.discovery",
    "load_file": "formats.registry",
    "discover": "formats.discovery",
    "FieldMap": "formats.fieldmap",
    "ScoredRun": "run.pool",
    "score_paths": "run.pool",
    "Fault": "score.validation",
    "auc_curve": "analysis.metrics",
    "pass_at_k": "analysis.metrics",
    "per_problem": "analysis.metrics",
    "summarise": "analysis.metrics",
    "CLASSES": "schema",
    "COHORTS": "schema",
    "DagMathError": "schema",
    "InputError": "schema",
    "LoadIssue": "schema",
    "Score": "schema",
    "Step": "schema",
    "StructureError": "schema",
    "Trajectory": "schema",
    "UnsafePathError": "schema",
    "score_corpus": "score.reference",
    "score_records": "score.reference",
    "score_trajectory": "score.reference",
    "read_scored": "store.results",
    "Corpus": "run.corpus",
    "load_corpus": "run.corpus",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dagmath_viz' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"dagmath_viz.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
