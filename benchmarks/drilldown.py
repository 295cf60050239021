"""Opening one trajectory from a large scored JSONL (issue 17, item 5).

``python benchmarks/drilldown.py [N] [--before DIR]`` builds (under ``/tmp/drilldown`` unless
``--data-dir``) a generated 2,000-trajectory run in which one file (atlas-7b, math500,
problem 2) holds 32 samples of 300 steps, scores it with ``dagmath score`` and repeats the
records under new problem ids up to N (default 100,000) scored records
(``memory_scored.scored_jsonl``). The original records' sources stay readable, so the app
reads the 300-step trajectory back from its file on demand (``SourceReader``).

Then, for this checkout and (``--before``) another one (e.g. main, ``git archive main``):
it starts the real app on the scored file (``streamlit run app.py -- --data``) and drives
Chromium: the Overview (the corpus is loaded), the Trajectory page with nothing chosen
(the landing), the 300-step record by its link (its source read on demand), the link
``repeat`` more times, then Next ▶ ``repeat`` times (the next 300-step samples). It reads
the server's resident memory (``VmRSS``) and peak (``VmHWM``) from ``/proc`` between the
steps, and times each open until the new trajectory view has drawn its 300 nodes
(``data-drawn``), with the server's and the browser's CPU seconds. Prints one JSON line
with both checkouts side by side.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import orjson

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]

STEPS = 300
#: The record opened: a 300-step trajectory of a file of 32 such samples.
TARGET = {"model": "atlas-7b", "dataset": "math500", "problem": "2", "sample": "1"}
#: Marks the trajectory view now shown, so that :data:`DRAWN` waits for the next one.
OLD_VIEW = (
    "() => { const f = document.querySelector('iframe[data-testid=stIFrame]');"
    " if (f && f.contentWindow) f.contentWindow.__dmOld = true; }"
)
DRAWN = (
    "(n) => { const f = document.querySelector('iframe[data-testid=stIFrame]');"
    " const d = f && f.contentDocument; const r = d && d.getElementById('dm-root');"
    " return r !== null && !f.contentWindow.__dmOld && r.dataset.ready === '1'"
    " && r.dataset.drawn == n; }"
)


def long_run(data: Path, steps: int = STEPS) -> Path:
    """The 2,000-trajectory generated run with atlas-7b/math500/problem 2 made ``steps`` long."""
    from generate import _Pools, _trajectory, answer_set, ensure_run

    root, _ = ensure_run(2000, data)
    target = root / "atlas-7b" / "math500" / "problem_2_all_samples.json"

    class _Long(random.Random):  # the generator draws a length in 10..150: make it ``steps``
        def randint(self, a: int, b: int) -> int:
            return steps if (a, b) == (10, 150) else super().randint(a, b)

    pools = _Pools(0)
    prng = random.Random("0-math500-2")  # the problem's answers and text, as generate() draws
    answers, text = answer_set(prng), prng.choice(pools.problem)
    rng = _Long("long")
    recs = [_trajectory(rng, pools, 2, sid, "atlas-7b", answers, text) for sid in range(32)]
    data_bytes = orjson.dumps(recs, option=orjson.OPT_INDENT_2) + b"\n"
    if not target.exists() or target.read_bytes() != data_bytes:
        target.write_bytes(data_bytes)
        for stale in data.glob("scored-*.jsonl"):
            stale.unlink()
    return root


def proc_mb(pid: int) -> dict[str, float]:
    """Resident (VmRSS) and peak resident (VmHWM) memory of a process, in MB (2**20)."""
    from memory_scored import proc_mb as read

    return read(pid)


def cpu_s(pid: int) -> float:
    """User + system CPU seconds a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def browser_cpu_s(server_pid: int) -> float:
    """CPU seconds used so far by this process's children except the server: Playwright's
    driver and Chromium (its renderers draw the page and the trajectory view)."""
    import psutil

    total = 0.0
    for child in psutil.Process().children(recursive=True):
        try:
            if child.pid != server_pid and server_pid not in {p.pid for p in child.parents()}:
                times = child.cpu_times()
                total += times.user + times.system
        except psutil.NoSuchProcess:
            continue
    return total


def bench_drilldown(
    scored_jsonl: Path | str, app_root: Path | str = ROOT, *, repeat: int = 3
) -> dict:
    """The server of ``app_root/app.py`` on ``scored_jsonl``: memory before and after opening
    the 300-step trajectory, and seconds from its link to its view drawn.

    Returns ``rss_loaded`` (after the Overview), ``rss_trajectory`` (after the trajectory is
    drawn), ``added_mb`` (VmRSS difference), ``first_drawn_s`` (first open: its source
    file is read), ``warm_drawn_s`` (median of ``repeat`` more), ``neighbour_drawn_s`` (another
    sample of the same file) and the server's CPU seconds for the first open.
    """
    from playwright.sync_api import sync_playwright

    from tests.app.browser import (
        CHROMIUM,
        CHROMIUM_ARGS,
        StreamlitServer,
        server_script,
        wait_for_app,
    )

    app = server_script(Path(app_root))  # what dagmath app runs
    out: dict = {"app": _shown(app)}
    server = StreamlitServer(app, ("--data", str(scored_jsonl)), timeout=120)
    pid = server.proc.pid
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.set_default_timeout(300_000)
                page.goto(server.url)
                page.get_by_text("Leaderboard", exact=True).wait_for(state="visible")
                wait_for_app(page, 300_000)
                time.sleep(1)
                out["rss_loaded"] = proc_mb(pid)

                def drawn(action) -> tuple[float, float, float]:
                    """Seconds, server CPU seconds and browser CPU seconds from ``action()``
                    until a new trajectory view has drawn its 300 nodes."""
                    page.evaluate(OLD_VIEW)
                    cpu, browser_cpu = cpu_s(pid), browser_cpu_s(pid)
                    start = time.perf_counter()
                    action()
                    page.wait_for_function(DRAWN, arg=STEPS, polling=20)
                    seconds = time.perf_counter() - start
                    server, browser = cpu_s(pid) - cpu, browser_cpu_s(pid) - browser_cpu
                    wait_for_app(page, 300_000)
                    return round(seconds, 3), round(server, 3), round(browser, 3)

                def link(query: dict):
                    return lambda: page.goto(f"{server.url}/trajectory?{urlencode(query)}")

                page.goto(server.url + "/trajectory")  # the landing: no record chosen
                page.get_by_role("heading", name="Trajectory").first.wait_for(state="visible")
                wait_for_app(page, 300_000)
                time.sleep(1)
                out["rss_landing"] = proc_mb(pid)
                first = drawn(link(TARGET))
                out["first_drawn_s"], out["first_server_cpu_s"], out["first_browser_cpu_s"] = first
                time.sleep(1)
                out["rss_trajectory"] = proc_mb(pid)
                out["added_mb"] = round(
                    out["rss_trajectory"]["VmRSS"] - out["rss_loaded"]["VmRSS"], 1
                )
                for name, runs in (
                    ("link", [drawn(link(TARGET)) for _ in range(repeat)]),
                    ("next", [drawn(page.get_by_role("button", name="Next ▶").click)
                              for _ in range(repeat)]),
                ):  # fmt: skip
                    for i, what in enumerate(("drawn_s", "server_cpu_s", "browser_cpu_s")):
                        out[f"{name}_{what}"] = round(statistics.median(r[i] for r in runs), 3)
                out["rss_end"] = proc_mb(pid)
            finally:
                browser.close()
    finally:
        server.stop()
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse

    from memory_scored import scored_jsonl

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=100_000)
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/drilldown"))
    parser.add_argument("--before", type=Path, help="another checkout to measure first")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--no-post-script-gc",
        action="store_true",
        help="also measure this checkout with Streamlit's collection after every run off",
    )
    args = parser.parse_args(argv)
    args.data_dir.mkdir(parents=True, exist_ok=True)
    long_run(args.data_dir)
    path = scored_jsonl(args.n, args.data_dir)
    result: dict = {"n": args.n, "load_before": [round(x, 2) for x in os.getloadavg()]}
    if args.before:
        result["before"] = bench_drilldown(path, args.before, repeat=args.repeat)
    result["after"] = bench_drilldown(path, ROOT, repeat=args.repeat)
    if args.no_post_script_gc:
        # Streamlit calls gc.collect() after every script run; with 100,000 records loaded
        # that walks ~300,000 objects each time.
        os.environ["STREAMLIT_RUNNER_POST_SCRIPT_GC"] = "false"
        try:
            result["after_no_post_script_gc"] = bench_drilldown(path, ROOT, repeat=args.repeat)
        finally:
            del os.environ["STREAMLIT_RUNNER_POST_SCRIPT_GC"]
    result["load_after"] = [round(x, 2) for x in os.getloadavg()]
    print(orjson.dumps(result).decode())
    return 0


def _shown(path: Path) -> str:
    """``path`` relative to this checkout when inside it (results are committed: no
    machine's absolute paths in them), else as given."""
    root = Path(__file__).resolve().parent.parent
    try:
        return Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


if __name__ == "__main__":
    sys.exit(main())
