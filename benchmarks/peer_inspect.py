"""Our app against Inspect View (``inspect view``) on the same trajectories, side by side.

``python benchmarks/peer_inspect.py [--sizes 1000,10000,100000] [--servers 3] [--app-dir DIR]``

Issue 17 asks that the app opened on a raw folder of 100,000 trajectories draw its
Overview no slower than Inspect View, inspect_ai's log viewer, on the same content, with at
most 1 GB of server memory. For each size this:

1. takes a generated raw run (``benchmarks/generate.py``, official layout; an existing
   complete run in any ``--data-dir`` is reused read-only, else one is generated in the
   first), scores it once with ``dagmath score`` (the app's own code, ``--app-dir``) into a
   scored JSONL, and converts it into Inspect eval logs, one per model × dataset and one
   sample per trajectory, with inspect_ai's own log API (``benchmarks/peer/to_inspect.py``,
   run by the peer venv's Python). Everything is cached under
   ``benchmarks/.data/peer/<run>/`` (ignored by git);
2. starts, interleaved, ``servers`` fresh servers of each kind, each timed from the moment
   its process is started until the page is drawn in headless Chromium (Playwright,
   ``/usr/bin/chromium``), a fresh browser context each time; the best (lowest) is kept:

   - **Inspect View** (``inspect view start --log-dir LOGS``): the log list is drawn when
     it holds one row per log and every row shows its score (the headers are read);
     then the first log is opened (a click on its row) and its samples grid is drawn when
     the footer reads "<n> Samples" with that log's sample count and a row shows its
     C/I score. The headline time is server start → first log's samples grid drawn (list
     included); the all-logs "Samples" view ("<total> samples" in its footer) is timed too,
     from navigating to it;
   - **ours, raw folder** (``python serve.py -- --data RAW``, what ``dagmath app`` runs:
     ``streamlit run app.py`` with the data source loading as the server starts; ``app.py``
     in an ``--app-dir`` tree without serve.py) and **ours, scored JSONL** (``-- --data
     scored.jsonl``): server start → Overview drawn and idle, waited for by
     ``benchmarks/run.py``'s own ``_open_overview`` (the leaderboard, Table 1 and the class
     counts drawn, every chart shown, the script finished, no skeleton left). Each round
     opens the raw folder twice: first with no columnar copy of its scores nor derived
     values (:func:`forget_run_copies`: it scores the folder, as the very first time),
     then reopening it (the copy that server left);
3. records each server's peak memory: the sum of ``VmHWM`` (peak resident set) of the
   server and every process it started, read from ``/proc`` every 0.1 s while it runs (a
   sum of per-process peaks, so an upper bound of the tree's peak at any one instant) and
   its CPU seconds (user + system, children included).

The app's verdict cache (``DAGMATH_CACHE_DIR``) is the one the ``dagmath score`` step
filled, so the raw-folder app does not re-check answers with math-verify: Inspect's logs
carry their scores too. ``--cold-verdicts`` gives every raw-folder server an empty cache.

The peer venv (``benchmarks/.data/inspect-venv``) is created on first use with ``pip
install inspect_ai==INSPECT_VERSION``; nothing of it is needed by the project or its tests.
Inspect View serves its UI from the installed package; any request leaving 127.0.0.1 is
counted in the results (``non_local_requests``). Results: ``benchmarks/results/<date>-
peer-inspect.json`` and a markdown table on standard output. ``bench_peer`` is the entry
point for ``run.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]

import run  # noqa: E402 - benchmarks/run.py: its waits, so both benchmarks wait alike
from generate import VERSION, ensure_run  # noqa: E402

DATA = HERE / ".data"
PEER = DATA / "peer"
VENV = DATA / "inspect-venv"
INSPECT_VERSION = "0.3.285"  # the version measured; the venv is built with it
CONVERTER = HERE / "peer" / "to_inspect.py"
SIZES = (1_000, 10_000, 100_000)
PAGE_TIMEOUT_MS = 600_000  # 100,000 raw trajectories on a busy 2-core machine
START_TIMEOUT_S = 180.0
SAMPLE_EVERY_S = 0.1
INPUT_FIELDS = ("run", "trajectories", "logs_count", "raw_bytes", "logs_bytes", "scored_bytes")
QUIET_WAIT_S = 15.0  # run.wait_for_quiet's 90 s is too long for this many sessions
LOG_LIST_DRAWN = """(n) => {
  const rows = [...document.querySelectorAll('[role=rowgroup] a[role=row]')];
  return rows.length >= n && rows.every(r => {
    const s = r.querySelector('[data-col-id=score]');
    const t = s ? s.innerText.trim() : '';
    return t !== '' && t !== '-';
  });
}"""
SAMPLES_DRAWN = """([pattern, n]) => {
  const want = new RegExp(pattern);
  const footer = [...document.querySelectorAll('div')].some(d => {
    const m = d.children.length === 0 && d.innerText && d.innerText.trim().match(want);
    return m && Number(m[1].replace(/,/g, '')) === n;
  });
  const scored = [...document.querySelectorAll('a[role=row] [data-col-id^=score]')]
    .some(c => /^[CI]$/.test(c.innerText.trim()));
  return footer && scored;
}"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes",
        default=",".join(map(str, SIZES)),
        help="trajectory counts, comma-separated (default: %(default)s)",
    )
    parser.add_argument("--servers", type=int, default=3, help="fresh servers of each kind")
    parser.add_argument("--app-dir", type=Path, default=ROOT, help="the checkout to measure")
    parser.add_argument(
        "--data-dir",
        type=Path,
        action="append",
        help="where generated runs are looked for (repeatable; the first gets new ones; "
        "default: benchmarks/.data)",
    )
    parser.add_argument(
        "--cold-verdicts",
        action="store_true",
        help="an empty verdict cache for every raw-folder server",
    )
    parser.add_argument("--log-format", choices=("eval", "json"), default="eval")
    parser.add_argument("--out", type=Path, help="results JSON (default: benchmarks/results/)")
    parser.add_argument(
        "--prepare-only",
        action="store_true",
        help="make (or find) the inputs of every size, time nothing",
    )
    args = parser.parse_args(argv)
    # a SIGTERM (timeout, kill) unwinds like an error, so every server started is stopped
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    if args.prepare_only:
        python = ensure_venv()
        for n in sizes:
            inputs = prepare(
                n, args.data_dir or [DATA], args.app_dir.resolve(), python, args.log_format
            )
            print({k: str(v) for k, v in inputs.items() if k != "samples_per_log"}, flush=True)
        return 0
    results = bench_peer(
        sizes,
        args.servers,
        args.app_dir,
        data_dirs=args.data_dir,
        cold_verdicts=args.cold_verdicts,
        log_format=args.log_format,
    )
    out = args.out or HERE / "results" / f"{dt.date.today().isoformat()}-peer-inspect.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))
    print(markdown(results))
    print(f"\nresults: {out}")
    return 0


def bench_peer(
    sizes,
    servers: int = 3,
    app_dir: Path | str = ROOT,
    *,
    data_dirs: list[Path] | None = None,
    cold_verdicts: bool = False,
    log_format: str = "eval",
) -> dict:
    """Inspect View vs our app (raw folder, scored JSONL) at each size; see the module doc."""
    from playwright.sync_api import sync_playwright

    from tests.app.browser import CHROMIUM, CHROMIUM_ARGS

    app_dir = Path(app_dir).resolve()
    data_dirs = [Path(d) for d in (data_dirs or [DATA])]
    python = ensure_venv()
    results = {
        "date": dt.date.today().isoformat(),
        "app_dir": _shown(app_dir),
        "app_commit": _git_head(app_dir),
        "inspect_ai": INSPECT_VERSION,
        "log_format": log_format,
        "servers": servers,
        "verdict_cache": "cold" if cold_verdicts else "warm",
        "machine": run.machine(),
        "load_before": _load(),
        "sizes": {},
    }
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for n in sizes:
                print(f"{n:,} trajectories: preparing ...", flush=True)
                inputs = prepare(n, data_dirs, app_dir, python, log_format)
                for path in (inputs["raw"], inputs["scored"], inputs["logs"]):
                    _warm(path)
                rows = {"inspect": [], "ours_raw_first": [], "ours_raw": [], "ours_scored": []}
                for i in range(servers):  # interleaved: a busy spell hits every side
                    print(f"  server {i + 1}/{servers}", flush=True)
                    rows["inspect"].append(inspect_session(browser, inputs))
                    # opened as a user does the first time (scoring it), then reopened (the
                    # columnar copy and derived values the first one left)
                    forget_run_copies(inputs["verdicts"] / "frames")
                    rows["ours_raw_first"].append(
                        ours_session(browser, app_dir, inputs["raw"], inputs, cold_verdicts)
                    )
                    rows["ours_raw"].append(
                        ours_session(browser, app_dir, inputs["raw"], inputs, cold_verdicts)
                    )
                    rows["ours_scored"].append(
                        ours_session(browser, app_dir, inputs["scored"], inputs, False)
                    )
                entry = {k: _best(v) for k, v in rows.items()}
                entry["input"] = {k: inputs[k] for k in INPUT_FIELDS}
                entry["ratio_raw_vs_inspect"] = _ratio(entry["ours_raw"], entry["inspect"])
                entry["ratio_scored_vs_inspect"] = _ratio(entry["ours_scored"], entry["inspect"])
                entry["load_after"] = _load()
                results["sizes"][str(n)] = entry
                print(
                    f"  drawn: Inspect {entry['inspect']['drawn_s']} s, ours raw "
                    f"{entry['ours_raw']['drawn_s']} s, scored {entry['ours_scored']['drawn_s']} s",
                    flush=True,
                )
        finally:
            browser.close()
    results["load_after"] = _load()
    results["timings_taken_while_busy"] = list(run.NOISY)
    return results


def forget_run_copies(frames: Path) -> None:
    """Remove the columnar copies of raw runs under ``frames`` and the derived values kept
    beside them (``derived/run*``, named like the copy): the next server opens the folder
    as the very first time. The copies of scored JSONL files are kept."""
    for stale in frames.glob("run*.parquet"):
        stale.unlink()
    for stale in (frames / "derived").glob("run*"):
        shutil.rmtree(stale)


def ensure_venv() -> Path:
    """The peer venv's Python, with inspect_ai INSPECT_VERSION (created on first use)."""
    python = VENV / "bin" / "python"
    if python.exists():
        found = subprocess.run(
            [python, "-c", "import importlib.metadata as m; print(m.version('inspect_ai'))"],
            capture_output=True,
            text=True,
        )
        if found.returncode == 0 and found.stdout.strip() == INSPECT_VERSION:
            return python
    print(f"creating {VENV} with inspect_ai=={INSPECT_VERSION} ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", VENV], check=True)
    subprocess.run(
        [python, "-m", "pip", "install", "-q", f"inspect_ai=={INSPECT_VERSION}"], check=True
    )
    return python


def prepare(n: int, data_dirs: list[Path], app_dir: Path, python: Path, log_format: str) -> dict:
    """The raw run, its scored JSONL and its Inspect logs (each made once, then cached)."""
    raw = _find_run(n, data_dirs)
    cache = PEER / raw.name
    cache.mkdir(parents=True, exist_ok=True)
    verdicts = cache / "verdict-cache"
    # scored by the measured checkout's own code (its format may change); the verdicts and
    # the Inspect logs made from them do not depend on it, and are shared
    scored = cache / f"scored-{_git_head(app_dir)}.jsonl"
    if not scored.exists():
        tmp = scored.with_suffix(".tmp")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "dagmath_viz",
                "score",
                str(raw),
                "-o",
                str(tmp),
                "--cache-dir",
                str(verdicts),
                "-q",
            ],
            cwd=app_dir,
            env=_app_env(app_dir),
            check=True,
        )
        tmp.rename(scored)
    logs = cache / f"inspect-{INSPECT_VERSION}-{log_format}"
    manifest = logs / "manifest.json"
    if not manifest.exists():
        subprocess.run(
            [python, str(CONVERTER), str(raw), str(scored), str(logs), "--format", log_format],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        counts = _log_counts(python, logs)
        manifest.write_bytes(orjson.dumps(counts))
    counts = orjson.loads(manifest.read_bytes())
    log_files = sorted(p for p in logs.iterdir() if p.suffix == f".{log_format}")
    return {
        "run": raw.name,
        "raw": raw,
        "scored": scored,
        "logs": logs,
        "verdicts": verdicts,
        "samples_per_log": counts,
        "trajectories": sum(counts.values()),
        "logs_count": len(log_files),
        "raw_bytes": sum(f.stat().st_size for f in raw.rglob("*") if f.is_file()),
        "logs_bytes": sum(f.stat().st_size for f in log_files),
        "scored_bytes": scored.stat().st_size,
    }


def _find_run(n: int, data_dirs: list[Path]) -> Path:
    """A complete generated run of ``n`` in any data dir, else a new one in the first.

    A run without its ``.complete.json`` marker is never touched (``ensure_run`` would
    delete it as an interrupted generation: it may be being written by someone else).
    """
    name = f"run-{n}-seed0-v{VERSION}"
    data_dirs = [Path(d).resolve() for d in data_dirs]  # the scorer runs in the app's dir
    for d in data_dirs:
        if (d / f"{name}.complete.json").exists():
            return d / name
    if any((d / name).exists() for d in data_dirs[1:]):
        raise RuntimeError(f"{name} exists without its .complete.json marker; not touching it")
    return ensure_run(n, data_dirs[0])[0]


def _log_counts(python: Path, logs: Path) -> dict[str, int]:
    """Samples per log file, read back with inspect_ai (what Inspect View will show)."""
    script = (
        "import json, sys\n"
        "from inspect_ai.log import list_eval_logs, read_eval_log\n"
        "out = {}\n"
        "for info in list_eval_logs(sys.argv[1], recursive=False):\n"
        "    log = read_eval_log(info, header_only=True)\n"
        "    out[info.name.rsplit('/', 1)[-1]] = log.results.total_samples\n"
        "print(json.dumps(out))\n"
    )
    out = subprocess.run(
        [python, "-c", script, str(logs)], capture_output=True, text=True, check=True
    )
    return orjson.loads(out.stdout)


def _app_env(app_dir: Path, cache_dir: Path | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(app_dir), env.get("PYTHONPATH")]))
    if cache_dir is not None:
        env["DAGMATH_CACHE_DIR"] = str(cache_dir)
    return env


# --------------------------------------------------------------------------- sessions


def inspect_session(browser, inputs: dict) -> dict:
    """One fresh Inspect View server: list, first log's samples grid, all-samples view."""
    run.wait_for_quiet(QUIET_WAIT_S)
    port = _free_port()
    cmd = [
        str(VENV / "bin" / "inspect"),
        "view",
        "start",
        "--log-dir",
        str(inputs["logs"]),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    server = Server(cmd, f"http://127.0.0.1:{port}", "/", cwd=inputs["logs"])
    try:
        out = {"server_ready_s": server.ready_s}
        browser_cpu = _browser_cpu()
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(PAGE_TIMEOUT_MS)
        outside = []
        page.on("request", lambda r: outside.append(r.url) if not _local(r.url) else None)
        page.goto(server.url + "/")
        page.wait_for_function(LOG_LIST_DRAWN, arg=inputs["logs_count"])
        out["list_s"] = server.elapsed()
        first = page.locator("[role=rowgroup] a[role=row]").first
        name = first.get_attribute("href").rsplit("/", 1)[-1]
        name = urllib.request.unquote(name)
        t = time.perf_counter()
        first.click()
        page.wait_for_function(
            SAMPLES_DRAWN, arg=[r"^([\d,]+) Samples$", inputs["samples_per_log"][name]]
        )
        out["first_log_s"] = round(time.perf_counter() - t, 3)
        out["drawn_s"] = server.elapsed()  # the headline: start -> first log's grid
        out["browser_cpu_s"] = round(_browser_cpu() - browser_cpu, 2)
        out["cpu_at_drawn_s"] = server.memory.cpu_now()  # cpu_s also has the all-samples view
        t = time.perf_counter()
        page.goto(server.url + "/#/samples/")
        page.wait_for_function(SAMPLES_DRAWN, arg=[r"^([\d,]+) samples$", inputs["trajectories"]])
        out["all_samples_s"] = round(time.perf_counter() - t, 3)
        out["everything_s"] = server.elapsed()  # start -> every sample listed
        out["non_local_requests"] = len(outside)
        context.close()
    finally:
        out.update(server.stop())
    return out


#: Records in ``window.__soFarAt`` (ms since the page was opened) when the app first shows
#: "Results so far", the leaderboard of a raw folder's files scored so far.
SO_FAR_WATCH = """
new MutationObserver((records, observer) => {
  for (const r of records) {
    for (const n of r.addedNodes) {  // only what was added: no layout, no whole-page text
      if ((n.textContent || "").includes("Results so far")) {
        window.__soFarAt = performance.now();
        observer.disconnect();
        return;
      }
    }
  }
}).observe(document, {subtree: true, childList: true});
"""


def ours_session(browser, app_dir: Path, data: Path, inputs: dict, cold: bool) -> dict:
    """One fresh server of our app on ``data``: start -> Overview drawn and idle."""
    from tests.app.browser import launch_prefix, server_script, wait_for_app

    run.wait_for_quiet(QUIET_WAIT_S)
    port = _free_port()
    cmd = [
        *launch_prefix(server_script(app_dir)),  # what dagmath app runs in that tree
        "--server.headless",
        "true",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--",
        "--data",
        str(data),
    ]
    with contextlib.ExitStack() as stack:
        cache = inputs["verdicts"]
        if cold:
            cache = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="verdicts-")))
        server = Server(
            cmd,
            f"http://127.0.0.1:{port}",
            "/_stcore/health",
            cwd=app_dir,
            env=_app_env(app_dir, cache),
        )
        try:
            out = {"server_ready_s": server.ready_s}
            browser_cpu = _browser_cpu()
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.set_default_timeout(PAGE_TIMEOUT_MS)
            page.add_init_script(SO_FAR_WATCH)
            leaderboard, overview = run._open_overview(page, server.url, wait_for_app)
            out["drawn_s"] = server.elapsed()
            so_far_ms = page.evaluate("() => window.__soFarAt ?? null")
            if so_far_ms is not None:  # the app showed the results scored so far
                opened_at = out["drawn_s"] - overview  # server start -> the URL opened
                out["so_far_s"] = round(opened_at + so_far_ms / 1000, 3)
            out["browser_cpu_s"] = round(_browser_cpu() - browser_cpu, 2)
            out["leaderboard_s"] = round(leaderboard, 3)  # from opening the URL
            out["overview_s"] = round(overview, 3)
            context.close()
        finally:
            out.update(server.stop())
    return out


class Server:
    """A server process (own session) timed from its start, with its tree's peak memory."""

    def __init__(self, cmd, url: str, probe: str, *, cwd: Path, env: dict | None = None):
        self.url = url
        self._log = tempfile.TemporaryFile()
        self.start = time.perf_counter()
        self.proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.memory = TreeMemory(self.proc.pid)
        try:
            self._wait(url + probe)
        except BaseException:
            self.stop()
            raise
        self.ready_s = self.elapsed()

    def elapsed(self) -> float:
        return round(time.perf_counter() - self.start, 3)

    def _wait(self, probe: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited {self.proc.returncode}:\n{self._tail()}")
            try:
                with urllib.request.urlopen(probe, timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(0.05)
        raise TimeoutError(f"{probe} did not answer within {START_TIMEOUT_S:.0f}s:\n{self._tail()}")

    def _tail(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-3000:]

    def stop(self) -> dict:
        """Stop the server's process group; its peak memory and CPU seconds."""
        usage = self.memory.stop()
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=15)
        self._log.close()
        return usage


class TreeMemory:
    """Peak RSS (``VmHWM``) of a process and its descendants, summed over every process
    seen, and their CPU seconds; read from ``/proc`` every SAMPLE_EVERY_S."""

    TICKS = os.sysconf("SC_CLK_TCK")

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.hwm: dict[int, int] = {}  # pid -> peak kB
        self.cpu: dict[int, float] = {}  # pid -> seconds (its own and its reaped children)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(SAMPLE_EVERY_S)

    def sample(self) -> None:
        for pid in _tree(self.pid):
            try:
                status = Path(f"/proc/{pid}/status").read_text()
                stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            match = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
            if match:
                self.hwm[pid] = max(self.hwm.get(pid, 0), int(match.group(1)))
            ticks = sum(int(x) for x in stat[11:15])  # utime stime cutime cstime
            self.cpu[pid] = max(self.cpu.get(pid, 0.0), ticks / self.TICKS)

    def cpu_now(self) -> float:
        """CPU seconds of the tree so far (a reaped child's time is in its parent's cutime,
        so besides the root only live processes count)."""
        self.sample()
        live = sum(v for p, v in self.cpu.items() if p != self.pid and _alive(p))
        return round(self.cpu.get(self.pid, 0.0) + live, 2)

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        cpu = self.cpu_now()
        return {
            "peak_rss_mb": round(sum(self.hwm.values()) / 1024, 1),
            "processes": len(self.hwm),
            "peak_rss_by_process_mb": sorted(
                (round(v / 1024, 1) for v in self.hwm.values()), reverse=True
            ),
            "cpu_s": cpu,
        }


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants now (``/proc/<pid>/task/<tid>/children``)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for children in Path(f"/proc/{p}/task").glob("*/children"):
            with contextlib.suppress(OSError):
                todo += [int(c) for c in children.read_text().split()]
    return out


def _browser_cpu() -> float:
    """CPU seconds (user + system) of the live Chromium processes this benchmark started.

    Inspect View does much of its work in the page (unzipping, parsing JSON in workers), our
    app in the server: the CPU of both sides is server + browser. Only live processes are
    counted (a renderer reaped later would otherwise count again in its parent's cutime).
    """
    total = 0
    for pid in _tree(os.getpid())[1:]:
        try:
            if not Path(f"/proc/{pid}/comm").read_text().startswith("chrom"):
                continue
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(stat[11]) + int(stat[12])
    return total / TreeMemory.TICKS


def _alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


# --------------------------------------------------------------------------- helpers


def _best(runs: list[dict]) -> dict:
    """The fastest session (by time to drawn), plus every time and the highest peak memory."""
    top = min(runs, key=lambda r: r["drawn_s"])
    out = {
        **top,
        "drawn_all_s": [r["drawn_s"] for r in runs],
        "peak_rss_max_mb": max(r["peak_rss_mb"] for r in runs),
    }
    for key in ("so_far_s", "everything_s"):  # each side's best of these, whichever session
        seen = [r[key] for r in runs if key in r]
        if seen:
            out[key.removesuffix("_s") + "_all_s"] = seen
    return out


def _ratio(a: dict, b: dict) -> dict:
    """Ours / Inspect: wall time to drawn, and CPU seconds of server + browser."""
    return {
        "wall": round(a["drawn_s"] / b["drawn_s"], 2),
        "cpu": round(_cpu(a) / max(_cpu(b), 0.01), 2),
    }


def _cpu(r: dict) -> float:
    return r.get("cpu_at_drawn_s", r["cpu_s"]) + r.get("browser_cpu_s", 0.0)


def _warm(path: Path) -> None:
    if path.is_file():
        path.read_bytes()
    else:
        run.warm_page_cache(path)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _local(url: str) -> bool:
    from tests.app.browser import is_local_url

    return is_local_url(url)


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _shown(path: Path) -> str:
    """``path`` relative to this checkout when inside it (results are committed: no
    machine's absolute paths in them), else as given."""
    try:
        return path.relative_to(ROOT).as_posix() or "."
    except ValueError:
        return str(path)


def _git_head(path: Path) -> str:
    out = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return out.stdout.strip() or "unknown"


def markdown(results: dict) -> str:
    lines = [
        f"inspect_ai {results['inspect_ai']} ({results['log_format']} logs) vs the app at "
        f"`{results['app_dir']}` ({results['app_commit']}), best of {results['servers']} "
        "fresh servers each, interleaved. Each cell: seconds from server start to drawn / "
        "peak server memory, MB (VmHWM summed over the server's process tree, highest of "
        "the sessions) / CPU seconds to drawn, server + browser. Verdict cache "
        f"{results['verdict_cache']}; load average {results['load_before']} before, "
        f"{results.get('load_after', '?')} after.",
        "",
        "| Trajectories | Inspect View | ours, raw folder | ours, scored JSONL | "
        "ours raw / Inspect (wall, CPU) |",
        "|---|---|---|---|---|",
    ]
    for n, e in results["sizes"].items():
        ratio = e["ratio_raw_vs_inspect"]
        lines.append(
            f"| {int(n):,} | {_cell(e['inspect'])} | {_cell(e['ours_raw'])} | "
            f"{_cell(e['ours_scored'])} | {ratio['wall']}×, {ratio['cpu']}× |"
        )
    lines += ["", "Every session's time to drawn, and the parts of the best one:", ""]
    for n, e in results["sizes"].items():
        i, raw, scored = e["inspect"], e["ours_raw"], e["ours_scored"]
        lines.append(
            f"- {int(n):,}: Inspect {i['drawn_all_s']} s (server up {i['server_ready_s']} s, "
            f"log list at {i['list_s']} s, first log's grid +{i['first_log_s']} s; the "
            f"all-samples view {i['all_samples_s']} s after it; "
            f"{i['non_local_requests']} non-local requests); ours raw {raw['drawn_all_s']} s "
            f"(server up {raw['server_ready_s']} s, Overview {raw['overview_s']} s after "
            f"opening); ours scored {scored['drawn_all_s']} s; load after {e['load_after']}"
        )
    return "\n".join(lines)


def _cell(r: dict) -> str:
    return f"{r['drawn_s']:.1f} s / {r['peak_rss_max_mb']:,.0f} MB / {_cpu(r):.1f} s"


if __name__ == "__main__":
    sys.exit(main())
