"""The product as a pip user gets it: build the sdist, build the wheel from the sdist, install
the wheel alone into a clean venv, then use it from a folder outside the source tree.

- ``dagmath --help``, ``dagmath score`` and ``dagmath report`` on the bundled sample data;
- ``dagmath app``: healthy, on 127.0.0.1 only, and a page renders in Chromium;
- the sdist's own tests collect (its conftest.py ships).

What does not need the venv runs beside the install, and the installed app starts as soon
as the venv is ready (its cold start overlaps the other tests): the checkout's own ``score``
to compare with, and the sdist's ``pytest --collect-only``. Each is checked by its test.

Dependencies come from a local wheelhouse (``$DAGMATH_WHEELHOUSE``, else
``~/.cache/dagmath-viz/wheelhouse``), filled by ``pip download`` from the configured index
on first use; later runs install without the network. Skipped when no index answers,
unless ``DAGMATH_REQUIRE_PACKAGING=1`` (CI) makes that a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.browser import REPO_ROOT, free_port, wait_for_app
from tests.app.test_loopback import listening_addresses

pytestmark = [pytest.mark.packaging, pytest.mark.slow]

REQUIRE = "DAGMATH_REQUIRE_PACKAGING"
WHEELHOUSE = Path(
    os.environ.get("DAGMATH_WHEELHOUSE", Path.home() / ".cache" / "dagmath-viz" / "wheelhouse")
)


def _unavailable(reason: str) -> None:
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"{reason} and {REQUIRE}=1", pytrace=False)
    pytest.skip(f"{reason} (set {REQUIRE}=1 to make this a failure)")


def _run(argv, **kwargs) -> subprocess.CompletedProcess:
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    kwargs.setdefault("timeout", 600)
    return subprocess.run([str(a) for a in argv], **kwargs)


def _clean_env() -> dict[str, str]:
    """No PYTHONPATH, no virtualenv of ours: only what the venv itself provides."""
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "DAGMATH_", "STREAMLIT_")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


class _Job:
    """A command started now and checked later by a test; its output goes to files (a pipe
    nobody reads yet could fill and stall it)."""

    def __init__(self, argv, folder: Path, name: str, merge: bool = False, **kwargs) -> None:
        self.out, self.err = folder / f"{name}.out", folder / f"{name}.err"
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen(
                [str(a) for a in argv],
                stdout=out,
                stderr=subprocess.STDOUT if merge else err,
                start_new_session=True,  # stop() ends it and whatever it started
                **kwargs,
            )

    def result(self, timeout: float = 600) -> subprocess.CompletedProcess:
        self.proc.wait(timeout=timeout)
        read = {"errors": "replace"}
        return subprocess.CompletedProcess(
            self.proc.args,
            self.proc.returncode,
            self.out.read_text(**read),
            self.err.read_text(**read),
        )

    def stop(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if self.proc.poll() is not None:
                return
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=15)


def _build(tmp: Path) -> tuple[Path, Path]:
    """(sdist, wheel): the wheel built from the unpacked sdist, as ``python -m build`` does."""
    out = tmp / "dist"
    out.mkdir()
    code = "import sys; from setuptools import build_meta as b; print(b.{}(sys.argv[1]))"
    egg_info = REPO_ROOT / "dagmath_viz.egg-info"
    existed = egg_info.exists()
    try:
        sdist = _run([sys.executable, "-c", code.format("build_sdist"), out], cwd=REPO_ROOT)
    finally:  # setuptools writes its egg-info into the checkout: a later pip would see it
        if not existed:
            shutil.rmtree(egg_info, ignore_errors=True)
    assert sdist.returncode == 0, sdist.stderr[-3000:]
    with tarfile.open(out / sdist.stdout.split()[-1]) as tar:
        tar.extractall(tmp / "sdist", filter="data")
    (source,) = (tmp / "sdist").iterdir()
    wheel = _run([sys.executable, "-c", code.format("build_wheel"), out], cwd=source)
    assert wheel.returncode == 0, wheel.stderr[-3000:]
    return source, out / wheel.stdout.split()[-1]


def _install(wheel: Path, venv: Path) -> None:
    """The wheel and its dependencies into a fresh venv, from the wheelhouse when it can."""
    made = _run([sys.executable, "-m", "venv", "--without-pip", venv])
    assert made.returncode == 0, made.stderr
    # a clean environment: with our PYTHONPATH, pip would take the checkout for an install
    pip = [sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "-q"]
    local = [*pip, "--no-compile", "--no-index", "--find-links", WHEELHOUSE, wheel]
    if _run(local, env=_clean_env()).returncode != 0:
        WHEELHOUSE.mkdir(parents=True, exist_ok=True)
        # the wheel's requirements by name: given the wheel file alone, pip download kept
        # the dependencies of an earlier wheel with the same name and version
        fetch = [sys.executable, "-m", "pip", "download", "-q", "-d", WHEELHOUSE]
        fetch += [*_requires(wheel), wheel]
        fetched = _run(fetch, env=_clean_env())
        if fetched.returncode != 0:
            _unavailable(f"pip could not fetch the dependencies: {fetched.stderr[-500:]}")
        again = _run(local, env=_clean_env())
        assert again.returncode == 0, again.stderr[-3000:]
    listed = _run([venv / "bin" / "python", "-m", "pip", "--version"], env=_clean_env())
    assert (venv / "bin" / "dagmath").is_file(), listed.stderr


def _requires(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        lines = z.read(meta).decode().splitlines()
    reqs = [x.split(":", 1)[1].strip() for x in lines if x.startswith("Requires-Dist:")]
    return [r for r in reqs if "extra ==" not in r]


@pytest.fixture(scope="module")
def installed() -> Iterator[dict]:
    # A folder of our own, not pytest's tmp_path: pytest removes old basetemp folders of the
    # same user, and another session's start could remove this venv while it is in use.
    tmp = Path(tempfile.mkdtemp(prefix="dagmath-wheel-"))
    jobs: list[_Job] = []
    try:
        # the checkout's own scores, to compare the installed command's with
        mine = _Job(
            [sys.executable, "-m", "dagmath_viz", "score", REPO_ROOT / "sample_data" / "runs"],
            tmp,
            "checkout-score",
            cwd=REPO_ROOT,
        )
        jobs.append(mine)
        source, wheel = _build(tmp)
        collect = _Job(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
            tmp,
            "sdist-collect",
            cwd=source,
            env=dict(os.environ, PYTHONPATH=str(source)),
        )
        jobs.append(collect)
        venv = tmp / "venv"
        _install(wheel, venv)
        elsewhere = tmp / "elsewhere"
        elsewhere.mkdir()
        port = free_port()
        app = _Job(
            [venv / "bin" / "dagmath", "app", "--server.port", port],
            elsewhere,
            "app",
            merge=True,
            cwd=elsewhere,
            env=_clean_env(),
        )
        jobs.append(app)
        yield {
            "sdist": source,
            "wheel": wheel,
            "venv": venv,
            "cwd": elsewhere,
            "checkout_score": mine,
            "sdist_collect": collect,
            "app": app,
            "app_port": port,
        }
    finally:  # removing the ~750 MB venv takes a minute on a busy disk: not the test's time
        for job in jobs:
            job.stop()
        subprocess.Popen(["rm", "-rf", "--", str(tmp)], start_new_session=True)


def _dagmath(installed, *args, **kwargs) -> subprocess.CompletedProcess:
    bin_dir = installed["venv"] / "bin"
    return _run([bin_dir / "dagmath", *args], cwd=installed["cwd"], env=_clean_env(), **kwargs)


def _sample_models() -> list[str]:
    """The bundled sample data's model folders (the checkout's: the wheel ships the same)."""
    runs = REPO_ROOT / "sample_data" / "runs"
    return sorted(d.name for d in runs.iterdir() if d.is_dir())


def _site_app(installed) -> Path:
    probe = "import dagmath_viz_app, sys; print(list(dagmath_viz_app.__path__)[0])"
    proc = _run(
        [installed["venv"] / "bin" / "python", "-c", probe], cwd=installed["cwd"], env=_clean_env()
    )
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip())


def test_the_wheel_holds_the_whole_product(installed) -> None:
    names = set(zipfile.ZipFile(installed["wheel"]).namelist())
    for name in (
        "dagmath_viz/py.typed",
        "dagmath_viz/cli/__init__.py",
        "dagmath_viz_app/app.py",
        "dagmath_viz_app/serve.py",
        "dagmath_viz_app/explorer/common.py",
        "dagmath_viz_app/pages/overview.py",
        "dagmath_viz_app/assets/favicon.png",
        "dagmath_viz_app/.streamlit/config.toml",
        "dagmath_viz_app/sample_data/runs/answers.json",
        "dagmath_viz_app/sample_data/gsm/proofs.jsonl",
    ):
        assert name in names, name
    assert not any(n.startswith(("tests/", "benchmarks/")) for n in names)
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(installed["wheel"]).read(meta).decode()
    assert "License-Expression: MIT" in text and "Project-URL: Source" in text


def test_the_installed_library_is_the_venvs_and_imports_no_streamlit(installed) -> None:
    code = (
        "import sys, dagmath_viz, dagmath_viz.cli, dagmath_viz.run.corpus, "
        "dagmath_viz.draw.figures; "
        "print(dagmath_viz.__file__); print('streamlit' in sys.modules)"
    )
    proc = _run(
        [installed["venv"] / "bin" / "python", "-c", code], cwd=installed["cwd"], env=_clean_env()
    )
    assert proc.returncode == 0, proc.stderr
    where, streamlit_loaded = proc.stdout.split()
    assert Path(where).is_relative_to(installed["venv"]) and streamlit_loaded == "False"


def test_help_score_and_report_outside_the_source_tree(installed) -> None:
    assert "app" in _dagmath(installed, "--help").stdout
    runs = _site_app(installed) / "sample_data" / "runs"
    out = installed["cwd"] / "scored.jsonl"
    scored = _dagmath(installed, "score", runs, "-o", out, "--no-cache")
    assert scored.returncode == 0, scored.stderr
    mine = installed["checkout_score"].result()
    assert mine.returncode == 0, mine.stderr[-3000:]

    def classes(lines):
        rows = [json.loads(x) for x in lines]
        return sorted(
            (r["model"], r["dataset"], r["problem_id"], r["sample_id"], r["class"]) for r in rows
        )

    assert classes(out.read_text().splitlines()) == classes(mine.stdout.splitlines())
    report = _dagmath(installed, "report", out, "--format", "json", "--bootstrap", "0")
    assert report.returncode == 0, report.stderr
    assert {g["model"] for g in json.loads(report.stdout)} == set(_sample_models())


def test_the_installed_sdist_tests_collect(installed) -> None:
    """The sdist ships tests/ with its conftest.py and data: collecting them errors nowhere."""
    source = installed["sdist"]
    assert (source / "tests" / "conftest.py").is_file() and (source / "LICENSE").is_file()
    proc = installed["sdist_collect"].result()  # started by the fixture, in `source`
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "error" not in proc.stdout.splitlines()[-1]


def test_dagmath_app_serves_the_bundled_data_from_anywhere(installed, chromium_browser) -> None:
    app, port = installed["app"], installed["app_port"]  # started by the fixture, elsewhere
    log = app.out
    url = f"http://127.0.0.1:{port}"
    print(f"dagmath app log: {log}")
    _wait_healthy(url, app.proc, log)
    assert listening_addresses(port) == {"127.0.0.1"}
    with urllib.request.urlopen(url, timeout=10) as resp:
        assert resp.status == 200 and b"<title>" in resp.read()
    page = chromium_browser.new_page()
    try:
        page.goto(url)
        # a cold start: first imports, the answer-check worker, scoring the sample data
        wait_for_app(page, timeout_ms=180_000)
        assert page.locator("[data-testid=stException]").count() == 0
        text = page.locator("[data-testid=stMain]").inner_text()
        shown = [m for m in _sample_models() if m in text]  # the sample data's leaderboard
        assert shown, text[:2000]
    finally:
        page.close()


def _wait_healthy(url: str, proc: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text(errors="replace")[-3000:]
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as resp:
                if resp.read() == b"ok":
                    return
        time.sleep(0.25)
    raise TimeoutError(log.read_text(errors="replace")[-3000:])
