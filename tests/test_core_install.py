"""The scoring-only install (issue 31: every Dask worker had to install Streamlit and the
app's whole stack to score): ``pip install --no-deps dagmath-viz`` plus
``requirements-core.txt``.

The fast tests check the file against ``requirements.txt``; the slow one builds the wheel,
installs it that way into a clean venv (from the wheelhouse of
``tests/app/test_installed_app.py``, so without the network once it is filled) and scores
the bundled sample with it, to the checkout's own bytes.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).parents[1]
APP_ONLY = {"streamlit", "plotly", "pyvis", "openai", "networkx"}


def _ranges(name: str) -> dict[str, tuple[str, set]]:
    lines = (REPO / name).read_text(encoding="utf-8").splitlines()
    reqs = [Requirement(x.split("#")[0].strip()) for x in lines if x.split("#")[0].strip()]
    return {r.name.lower(): (str(r.specifier), r.extras) for r in reqs}


def test_core_requirements_are_the_runtime_ranges_without_the_app():
    core, runtime = _ranges("requirements-core.txt"), _ranges("requirements.txt")
    assert core.items() <= runtime.items()  # the same ranges, so no second truth to drift
    assert set(runtime) - set(core) == APP_ONLY
    assert {"pandas", "math-verify", "orjson", "msgspec", "pyarrow"} <= set(core)


@pytest.mark.packaging
@pytest.mark.slow
def test_a_no_deps_install_with_the_core_requirements_scores():
    # a folder of our own, as test_installed_app's (pytest prunes old tmp_path folders)
    tmp = Path(tempfile.mkdtemp(prefix="dagmath-core-"))
    try:
        _install_and_score(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _install_and_score(tmp: Path) -> None:
    from tests.app.test_installed_app import WHEELHOUSE, _build, _clean_env, _run, _unavailable

    _, wheel = _build(tmp)
    venv = tmp / "venv"
    assert _run([sys.executable, "-m", "venv", "--without-pip", venv]).returncode == 0
    pip = [sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "-q"]
    local = ["--no-compile", "--no-index", "--find-links", WHEELHOUSE]
    core = [*pip, *local, "-r", REPO / "requirements-core.txt"]
    if _run(core, env=_clean_env()).returncode != 0:
        fetched = _run(
            [sys.executable, "-m", "pip", "download", "-q", "-d", WHEELHOUSE, "-r",
             REPO / "requirements-core.txt"],
            env=_clean_env(),
        )  # fmt: skip
        if fetched.returncode != 0:
            _unavailable(f"pip could not fetch the core requirements: {fetched.stderr[-500:]}")
        again = _run(core, env=_clean_env())
        assert again.returncode == 0, again.stderr[-3000:]
    done = _run([*pip, "--no-deps", "--no-index", wheel], env=_clean_env())
    assert done.returncode == 0 and done.stderr == "", done.stderr  # no conflict warning
    listed = _run([venv / "bin" / "python", "-m", "pip", "list"], env=_clean_env())
    names = _run(
        [sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "list",
         "--format", "freeze"],
        env=_clean_env(),
    ).stdout.lower()  # fmt: skip
    for app_only in APP_ONLY:
        assert f"{app_only}==" not in names, (app_only, listed.stdout)
    sample = REPO / "sample_data" / "runs" / "sim-focus-2.4"
    out = tmp / "scored.parquet"
    scored = _run(
        [venv / "bin" / "dagmath", "score", sample, "--no-cache", "-o", out],
        cwd=tmp, env=_clean_env(),
    )  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    assert "720 trajectories loaded, 0 illegal" in scored.stderr
    jsonl = _run(
        [venv / "bin" / "dagmath", "score", sample, "--no-cache", "-q"], cwd=tmp, env=_clean_env()
    )
    mine = subprocess.run(
        [sys.executable, "-m", "dagmath_viz", "score", sample, "--no-cache", "-q"],
        cwd=tmp, capture_output=True, timeout=600,
    )  # fmt: skip
    assert jsonl.stdout.encode() == mine.stdout and mine.stdout.count(b"\n") == 720
    read = _run(
        [venv / "bin" / "python", "-c",
         "import sys, dagmath_viz as d; t = d.read_scored(sys.argv[1]); "
         "print(len(t), t['problem_id'].dtype)", out],
        cwd=tmp, env=_clean_env(),
    )  # fmt: skip
    assert read.stdout.split() == ["720", "string"], read.stderr
    problems = tmp / "problems.jsonl"
    problems.write_text('{"problem_id": 1, "problem": "1 + 1?"}\n')
    generate = _run(
        [venv / "bin" / "dagmath", "generate", problems, "--base-url", "http://127.0.0.1:9/v1",
         "--model", "m", "-o", tmp / "gen"],
        cwd=tmp, env=_clean_env(),
    )  # fmt: skip
    assert generate.returncode == 1 and generate.stderr.count("\n") == 1, generate.stderr
    assert "needs the Python package 'openai'" in generate.stderr
    app = _run([venv / "bin" / "dagmath", "app"], cwd=tmp, env=_clean_env())
    assert app.returncode == 1 and "needs Streamlit" in app.stderr  # one line, no traceback
    assert "Traceback" not in app.stderr
