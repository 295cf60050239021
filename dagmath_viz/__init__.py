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
    "AnswerChecker": "answers",
    "extract_boxed": "answers",
    "is_equivalent": "answers",
    "predicted_answer": "answers",
    "LoadResult": "loading",
    "load_answer_key": "loading",
    "load_paths": "loading",
    "load_file": "loading",
    "discover": "loading",
    "ScoredRun": "pipeline",
    "score_paths": "pipeline",
    "Fault": "validation",
    "auc_curve": "metrics",
    "pass_at_k": "metrics",
    "per_problem": "metrics",
    "summarise": "metrics",
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
    "score_corpus": "scoring",
    "score_records": "scoring",
    "score_trajectory": "scoring",
    "Corpus": "corpus",
    "load_corpus": "corpus",
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
