"""The README's "Use from Python" example runs exactly as written, and says true things.

The ```python block of that section is extracted and run as a script in a fresh process
(working folder: a temporary one holding a link to ``sample_data``); its printed numbers
are checked against the sample files read here with plain ``json``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import dagmath_viz

ROOT = Path(__file__).parents[1]
RUN = ROOT / "sample_data" / "runs" / "sim-focus-2.4"


def _example() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Use from Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, "the section holds one Python example"
    return blocks[0]


def test_fast_scorer_and_corpus_are_exported():
    for name in ("score_paths", "load_corpus", "Corpus", "ScoredRun", "summarise", "auc_curve"):
        assert name in dagmath_viz.__all__
        assert getattr(dagmath_viz, name) is not None


def test_readme_example_runs(tmp_path):
    script = tmp_path / "example.py"
    script.write_text(_example(), encoding="utf-8")
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data", target_is_directory=True)
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout

    # the trajectories: every sample of every problem file, counted with plain json
    files = sorted(RUN.rglob("problem_*_all_samples.json"))
    samples = [(f.parent.name, s) for f in files for s in json.loads(f.read_text())]
    assert f"{len(samples)} trajectories, 0 load issues" in out

    # PASS@1 by hand (DEFINITIONS.md: mean over problems of c/n) from the answer key and
    # each sample's last \boxed{} of its final step (the sample data always box there)
    key = {
        (e["dataset"], str(e["problem_id"])): str(e["answer"])
        for e in json.loads((RUN.parent / "answers.json").read_text())
    }
    by_problem: dict[tuple, list[bool]] = defaultdict(list)
    for dataset, s in samples:
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", s["steps"][-1]["text"])
        ref = key[(dataset, str(s["problem_id"]))]
        by_problem[(dataset, str(s["problem_id"]))].append(bool(boxed) and boxed[-1] == ref)
    per_dataset: dict[str, list[float]] = defaultdict(list)
    for (dataset, _), hits in by_problem.items():
        per_dataset[dataset].append(sum(hits) / len(hits))
    for dataset, fractions in per_dataset.items():
        assert f"{dataset} PASS@1={sum(fractions) / len(fractions):.3f}" in out

    assert f"Figure with {len(per_dataset)} curves" in out  # one model, one panel per dataset
    html = (tmp_path / "dag.html").read_text(encoding="utf-8")
    first = samples[0][1]  # row 0 is the first sample of the first file
    assert f"dag.html: {len(first['steps'])} steps of problem {first['problem_id']}" in out
    assert f'data-nodes="{len(first["steps"])}"' in html
    assert "https://" not in html and "http://" not in html  # offline: no CDN
