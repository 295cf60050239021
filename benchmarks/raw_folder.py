"""Opening a raw results folder: ``load_corpus`` in memory vs streamed (issue 17, item 4).

``python benchmarks/raw_folder.py RUN [RUN ...] [--repeat K]`` loads each raw folder (the
official ``<model>/<dataset>/problem_<id>_all_samples.json`` layout, e.g. a generated
``benchmarks/.data/run-20000-seed0-v2``) the way the app's ``corpus_for`` does, once by the
old in-memory path (every Trajectory built and kept: ``stream_bytes`` above the data's
size) and once streamed (``stream_bytes=0``: scored by the pool of ``dagmath score``, no
steps kept), each in a fresh interpreter, alternating, ``K`` times. It reports per load:
wall seconds, CPU seconds of the process and of its pool workers, peak resident memory of
the process (VmHWM) and of its largest worker, resident memory after the load with the
corpus still held, rows, and the load average before and after. Prints JSON lines, then
the new/old ratios. With ``--app`` each load is followed by the real server on the same
folder (``$DAGMATH_STREAM_BYTES`` picks the path) and Chromium opening the Overview
(:func:`measure_app`). It only reads the folders.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]

_CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, {root!r})
from pathlib import Path

def proc_mb():
    out = {{}}
    for line in Path("/proc/self/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            out[name] = round(int(value.split()[0]) / 1024, 1)
    return out

if __name__ == "__main__":
    from dagmath_viz.run.corpus import load_corpus
    path, mode = sys.argv[1], sys.argv[2]
    stream = 0 if mode == "streamed" else 1 << 62
    t0, c0 = time.perf_counter(), time.process_time()
    corpus = load_corpus([path], stream_bytes=stream)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    mem = proc_mb()
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({{
        "mode": mode, "rows": len(corpus), "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
        "workers_cpu_s": round(kids.ru_utime + kids.ru_stime, 2),
        "peak_mb": mem["VmHWM"], "held_mb": mem["VmRSS"],
        "worker_peak_mb": round(kids.ru_maxrss / 1024, 1),
        "steps_kept": sum(t is not None for t in corpus.trajectories),
    }}))
"""


def measure(path: Path, mode: str) -> dict:
    """One load of ``path`` in a fresh interpreter (``mode``: ``in-memory`` or ``streamed``)."""
    load_before = os.getloadavg()
    out = subprocess.run(
        [sys.executable, "-c", _CHILD.format(root=str(ROOT)), str(path), mode],
        capture_output=True,
        text=True,
        check=True,
    )
    row = json.loads(out.stdout.strip().splitlines()[-1])
    row["load_before"] = [round(x, 1) for x in load_before]
    row["load_after"] = [round(x, 1) for x in os.getloadavg()]
    row["run"] = path.name
    return row


def measure_app(path: Path, mode: str) -> dict:
    """The real app (``streamlit run app.py -- --data path``) opened in Chromium: seconds
    until the Overview's leaderboard shows and until the whole Overview is drawn (the load
    and scoring included), the Overview again (warm), the server's memory (its peak
    resident, VmHWM, and after the Overview its resident memory and its children's) and
    CPU seconds (its own, its reaped children's and its live children's: the pool's
    workers are reaped by the forkserver, so theirs are not all counted)."""
    import psutil
    from playwright.sync_api import sync_playwright
    from run import _open_overview  # the lead's Overview timing, reused as it is

    from tests.app.browser import (
        CHROMIUM,
        CHROMIUM_ARGS,
        StreamlitServer,
        server_script,
        wait_for_app,
    )

    os.environ["DAGMATH_STREAM_BYTES"] = "0" if mode == "streamed" else str(1 << 62)
    load_before = os.getloadavg()
    server = StreamlitServer(server_script(ROOT), ("--data", str(path)), timeout=120)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.set_default_timeout(900_000)
                leaderboard, cold = _open_overview(page, server.url, wait_for_app)
                warm = _open_overview(page, server.url, wait_for_app)[1]
            finally:
                browser.close()
        status = dict(
            line.split(":", 1)
            for line in Path(f"/proc/{server.proc.pid}/status").read_text().splitlines()
        )
        proc = psutil.Process(server.proc.pid)
        kids = proc.children(recursive=True)
        children = sum(p.memory_info().rss for p in kids)
        times = proc.cpu_times()
        cpu = times.user + times.system + times.children_user + times.children_system
        cpu += sum(sum(p.cpu_times()[:2]) for p in kids)  # live ones (the forkserver's pool)
    finally:
        server.stop()
        del os.environ["DAGMATH_STREAM_BYTES"]
    mb = lambda v: round(int(v.split()[0]) / 1024, 1)  # noqa: E731
    return {
        "mode": mode, "run": path.name, "app": True,
        "leaderboard_cold_s": round(leaderboard, 2), "overview_cold_s": round(cold, 2),
        "overview_warm_s": round(warm, 2),
        "server_peak_mb": mb(status["VmHWM"]), "server_rss_mb": mb(status["VmRSS"]),
        "children_rss_mb": round(children / 2**20, 1), "server_cpu_s": round(cpu, 1),
        "load_before": [round(x, 1) for x in load_before],
        "load_after": [round(x, 1) for x in os.getloadavg()],
    }  # fmt: skip


def main(argv: list[str]) -> None:
    repeat = 1
    if "--repeat" in argv:
        at = argv.index("--repeat")
        repeat = int(argv[at + 1])
        del argv[at : at + 2]
    app = "--app" in argv
    argv = [a for a in argv if a != "--app"]
    for run in map(Path, argv):
        rows: dict[str, list[dict]] = {"in-memory": [], "streamed": []}
        for _ in range(repeat):
            for mode in ("in-memory", "streamed"):
                row = measure(run, mode)
                if app:
                    row = {**row, **{f"app_{k}": v for k, v in measure_app(run, mode).items()}}
                rows[mode].append(row)
                print(json.dumps(row), flush=True)
        old, new = rows["in-memory"], rows["streamed"]

        def best(rs: list[dict], key: str) -> float:
            return min(r[key] for r in rs)

        print(
            json.dumps(
                {
                    "run": run.name,
                    "wall_new_over_old": round(best(new, "wall_s") / best(old, "wall_s"), 2),
                    "peak_new_over_old": round(best(new, "peak_mb") / best(old, "peak_mb"), 2),
                    "cpu_all_new_over_old": round(
                        (best(new, "cpu_s") + best(new, "workers_cpu_s"))
                        / (best(old, "cpu_s") + best(old, "workers_cpu_s")),
                        2,
                    ),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1:])
