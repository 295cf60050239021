"""The Overview on a fresh server, two source trees side by side (issue 17 items 2 and 3).

``python benchmarks/overview_cold.py SCORED.jsonl --tree before=DIR --tree after=DIR
[--servers N] [--frame-cache DIR]`` starts ``streamlit run app.py -- --data SCORED.jsonl``
from each tree in turn (round robin, N rounds), opens the Overview in Chromium until the
leaderboard, Table 1, the class counts and every chart shown are drawn and the script has
finished (``run._open_overview``, the wait ``bench_app`` uses), then once more as a
second visitor, then opens the first chart the page folds (``open_chart_s``: click to
drawn; None when it folds none), and reads the server's resident and peak resident
memory (``VmRSS``, ``VmHWM``) and CPU seconds from ``/proc``. Each server gets
``DAGMATH_FRAME_CACHE_DIR`` (``--frame-cache``/NAME, default
``/tmp/overview-cold-frames/NAME``): a tree with the columnar cache (and the derived-value
cache beside it) fills it on its first server and reads it on the others; a tree without
it ignores it. Prints one JSON line; the load
average is in it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]


def proc_stats(pid: int) -> dict:
    """Resident and peak resident MB (``/proc/<pid>/status``) and CPU seconds (``stat``)."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            out[name] = round(int(value.split()[0]) / 1024, 1)
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    out["cpu_s"] = round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 2)
    return out


class Server:
    """What ``dagmath app`` serves in one tree (its serve.py, else app.py), on a free port, in
    its own process group."""

    def __init__(self, tree: Path, scored: Path, frame_cache: Path, log: Path):
        from tests.app.browser import free_port, launch_prefix, server_script

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cmd = [*launch_prefix(server_script(tree)),  # what dagmath app runs in that tree
               "--server.headless", "true", "--server.address", "127.0.0.1",
               "--server.port", str(self.port), "--browser.gatherUsageStats", "false",
               "--server.fileWatcherType", "none", "--", "--data", str(scored)]  # fmt: skip
        env = dict(os.environ, PYTHONPATH=str(tree), DAGMATH_FRAME_CACHE_DIR=str(frame_cache))
        self._log = open(log, "wb")
        self.proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"server of {tree} did not come up (log: {log})")

    def stop(self) -> None:
        import signal

        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self._log.close()


def one_server(browser, tree: Path, scored: Path, frame_cache: Path, log: Path) -> dict:
    from run import _open_overview

    from tests.app.browser import wait_for_app

    start = time.perf_counter()
    server = Server(tree, scored, frame_cache, log)
    out = {"server_ready_s": round(time.perf_counter() - start, 2)}
    try:
        out["server_idle"] = proc_stats(server.proc.pid)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(600_000)
        board, cold = _open_overview(page, server.url, wait_for_app)
        out["leaderboard_s"], out["cold_s"] = round(board, 2), round(cold, 2)
        out["after_cold"] = proc_stats(server.proc.pid)
        out["warm_s"] = round(_open_overview(page, server.url, wait_for_app)[1], 2)
        out["after_warm"] = proc_stats(server.proc.pid)
        out["open_chart_s"] = open_folded_chart(page, wait_for_app)
        context.close()
    finally:
        server.stop()
    return out


def open_folded_chart(page, wait_for_app) -> float | None:
    """Seconds from a click on the first folded chart (an expander "Chart: …") until its
    chart is drawn and the script has finished; None when the page folds no chart."""
    folded = page.locator("[data-testid=stExpander] summary", has_text="Chart:")
    if not folded.count():
        return None
    drawn = "[...document.querySelectorAll('[data-testid=stPlotlyChart] .main-svg')].length"
    before = page.evaluate(f"() => {drawn}")
    start = time.perf_counter()
    folded.first.click()
    page.wait_for_function(f"(n) => {drawn} > n", arg=before)
    wait_for_app(page, 180_000)
    return round(time.perf_counter() - start, 2)


def main(argv: list[str] | None = None) -> int:
    import argparse

    from playwright.sync_api import sync_playwright

    from tests.app.browser import CHROMIUM, CHROMIUM_ARGS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scored", type=Path)
    parser.add_argument("--tree", action="append", required=True, metavar="NAME=DIR")
    parser.add_argument("--servers", type=int, default=3)
    parser.add_argument("--frame-cache", type=Path, default=Path("/tmp/overview-cold-frames"))
    args = parser.parse_args(argv)
    trees = {name: Path(d).resolve() for name, _, d in (t.partition("=") for t in args.tree)}
    logs = Path("/tmp/overview-cold-logs")
    logs.mkdir(exist_ok=True)
    result = {"scored": str(args.scored), "mib": round(args.scored.stat().st_size / 2**20, 1),
              "load_before": [round(x, 2) for x in os.getloadavg()], "runs": {}}  # fmt: skip
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for i in range(args.servers):
                for name, tree in trees.items():
                    log = logs / f"{name}-{i}.log"
                    frames = args.frame_cache / name  # two trees' caches never evict each other
                    run = one_server(browser, tree, args.scored, frames, log)
                    run["load"] = round(os.getloadavg()[0], 2)
                    result["runs"].setdefault(name, []).append(run)
                    print(name, i, orjson.dumps(run).decode(), file=sys.stderr, flush=True)
        finally:
            browser.close()
    result["load_after"] = [round(x, 2) for x in os.getloadavg()]
    print(orjson.dumps(result).decode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
