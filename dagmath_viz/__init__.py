"""dagmath-viz: score and explore DAG-MATH reasoning trajectories.

The library never imports Streamlit; the app in ``app.py`` and ``pages/`` only wires
widgets to these functions.
"""

from dagmath_viz.answers import AnswerChecker, extract_boxed, is_equivalent, predicted_answer
from dagmath_viz.loading import LoadResult, load_answer_key, load_paths
from dagmath_viz.metrics import auc_curve, pass_at_k, per_problem, summarise
from dagmath_viz.schema import (
    CLASSES,
    COHORTS,
    DagMathError,
    InputError,
    LoadIssue,
    Score,
    Step,
    StructureError,
    Trajectory,
    UnsafePathError,
)
from dagmath_viz.scoring import score_corpus, score_records, score_trajectory

__version__ = "0.1.0"

__all__ = [
    "CLASSES",
    "COHORTS",
    "AnswerChecker",
    "DagMathError",
    "InputError",
    "LoadIssue",
    "LoadResult",
    "Score",
    "Step",
    "StructureError",
    "Trajectory",
    "UnsafePathError",
    "auc_curve",
    "extract_boxed",
    "is_equivalent",
    "load_answer_key",
    "load_paths",
    "pass_at_k",
    "per_problem",
    "predicted_answer",
    "score_corpus",
    "score_records",
    "score_trajectory",
    "summarise",
]
