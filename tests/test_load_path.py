"""Following the app's data source from the page to the scored frame (issue 26).

The page's load thread calls :func:`dagmath_viz.run.corpus.load_corpus` (explorer/common.py,
``start_loading``: its one call). From there a call tracer records, for four real loads
(the bundled sample in memory, the same streamed, a scored JSONL file, and the sample
read through a field map), every call from one library module into another, and holds
the path's shape:

- **no call back up**: no call goes from a module into one of a higher layer (the layers
  of tests/test_architecture.py), and the modules' call graph has no cycle;
- **each stage entered once**: the modules that run the load (corpus, discovery,
  streamed, pool, the frame store) are each entered from one module only;
- any other module entered from several is one of :data:`SERVICES`, asked by design from
  several stages (each with why). A new one fails here: move the call, or list it.

Protocol calls on objects handed down (``__len__``, ``__getitem__`` of a sequence view
the fast scorer gives the reference scorer's answer reader, a data class made or copied,
its ``__repr__`` in a cache key) and the page's own callbacks are not entries.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections import defaultdict
from pathlib import Path

import networkx as nx
import pytest

from dagmath_viz.formats.fieldmap import FieldMap
from dagmath_viz.run.corpus import load_corpus
from tests.test_architecture import MODULES, _rank

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_data"
MAP = FieldMap.parse("problem_text=question")

#: The modules that run the load, in the order the path enters them.
STAGES = (
    "dagmath_viz.run.corpus",
    "dagmath_viz.formats.discovery",
    "dagmath_viz.run.streamed",
    "dagmath_viz.store.frames",
    "dagmath_viz.run.pool",
)
#: Modules several stages ask, by design, and why.
SERVICES = {
    "dagmath_viz.formats.registry": "what each file is (discovery), how it holds records "
    "and where it sits (the fast scorer), its reader (the pool), a field map's warnings "
    "said once per field at the end of a load (load_paths, the pool)",
    "dagmath_viz.formats.fieldmap": "a field map: applied and checked by the record "
    "readers, its per-file warnings summed up by the registry at the end of a load",
    "dagmath_viz.formats.scored": "the scored-record parse: discovery's first-line look, "
    "streamed's slices, the record readers, the fast scorer",
    "dagmath_viz.formats.answer_keys": "the reference answers covering a file",
    "dagmath_viz.formats.records": "a JSON record -> Trajectory, for the readers and the "
    "fast scorer",
    "dagmath_viz.formats.common": "what the format readers share",
    "dagmath_viz.score.reference": "the reference scorer: the pool's in-memory files, the "
    "fast scorer's answer reading",
    "dagmath_viz.score.record": "the scored-record contract: built by the scorers, framed "
    "by streamed",
    "dagmath_viz.score.graph": "the graph statistics both scorers compute",
    "dagmath_viz.answers.check": "the answer checker: the pool's verdicts, the scorer's "
    "boxed answer",
    "dagmath_viz.store.uploads": "is this an uploaded file (never kept)",
    "dagmath_viz.schema": "core data types",
    "dagmath_viz.text": "core text helpers",
    "dagmath_viz.jsonio": "the one JSON reader",
    "dagmath_viz.places": "the cache folder",
}


def _module(frame) -> str:
    return frame.f_globals.get("__name__", "")


def traced(load) -> dict[tuple[str, str], set[str]]:
    """``{(caller module, callee module): {callee functions}}`` of the library's calls
    between modules while ``load()`` runs (threads it starts included)."""
    edges: dict[tuple[str, str], set[str]] = defaultdict(set)

    def profile(frame, event, _arg):
        if event != "call":
            return
        callee = _module(frame)
        if callee not in MODULES:
            return
        name = frame.f_code.co_name
        if name.startswith("__") and name.endswith("__"):
            return  # a protocol call on an object handed down, or a data class made
        back = frame.f_back
        while back is not None and _module(back) not in MODULES and _module(back) != __name__:
            back = back.f_back  # through the standard library and other packages
        if back is None or _module(back) == __name__:
            if back is not None:
                edges[("page", callee)].add(name)
            return
        if _module(back) != callee:
            edges[(_module(back), callee)].add(name)

    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        load()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return edges


@pytest.fixture(scope="module")
def loads(tmp_path_factory) -> dict[str, dict]:
    """The three loads' traced calls (an empty cache each: nothing read back)."""
    out = {}
    scored = tmp_path_factory.mktemp("scored") / "scored.jsonl"
    cache = tmp_path_factory.mktemp("score-cache")
    subprocess.run(
        [sys.executable, "-m", "dagmath_viz", "score", str(SAMPLE / "runs"), "-o", str(scored),
         "--cache-dir", str(cache)],
        check=True, cwd=REPO, capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    cases = {
        "in memory": lambda: load_corpus([SAMPLE], progress=lambda *_: None),
        "streamed": lambda: load_corpus([SAMPLE], stream_bytes=0, progress=lambda *_: None),
        "scored JSONL": lambda: load_corpus([scored], progress=lambda *_: None),
        # a column no sample file has: each file warns, the load says it once
        "mapped": lambda: load_corpus([SAMPLE], progress=lambda *_: None, fields=MAP),
    }
    mp = pytest.MonkeyPatch()
    try:
        for name, load in cases.items():
            mp.setenv("DAGMATH_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
            mp.setenv("DAGMATH_FRAME_CACHE_DIR", str(tmp_path_factory.mktemp("frames")))
            out[name] = traced(load)
    finally:
        mp.undo()
    return out


CASES = ("in memory", "streamed", "scored JSONL", "mapped")


@pytest.mark.parametrize("case", CASES)
def test_the_page_enters_the_library_once(loads, case):
    assert {callee for caller, callee in loads[case] if caller == "page"} == {
        "dagmath_viz.run.corpus"
    }


@pytest.mark.parametrize("case", CASES)
def test_no_call_back_up(loads, case):
    edges = [(a, b) for a, b in loads[case] if a != "page"]
    upward = [f"{a} -> {b} ({sorted(loads[case][a, b])})" for a, b in edges
              if _rank(b) > _rank(a)]  # fmt: skip
    assert upward == []
    graph = nx.DiGraph(edges)
    assert list(nx.simple_cycles(graph)) == []


@pytest.mark.parametrize("case", CASES)
def test_each_stage_entered_from_one_module(loads, case):
    callers = defaultdict(set)
    for a, b in loads[case]:
        callers[b].add(a)
    many = {m: sorted(c) for m, c in callers.items() if len(c) > 1}
    assert {m: c for m, c in many.items() if m in STAGES} == {}
    assert {m: c for m, c in many.items() if m not in SERVICES} == {}


def test_the_stages_are_on_the_path(loads):
    """The trace sees the load at all: each stage is entered by one of the loads."""
    entered = {b for case in loads.values() for _, b in case}
    assert set(STAGES) <= entered
    streamed = {b for _, b in loads["streamed"]}
    assert "dagmath_viz.run.pool" in streamed and "dagmath_viz.store.frames" in streamed
