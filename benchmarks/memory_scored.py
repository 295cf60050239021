"""The app's memory with 100,000 scored records open (issue 11, item 6).

``python benchmarks/memory_scored.py [N] [--app]`` builds N (default 100,000) scored records
in the real ``dagmath score`` format: it scores a generated 2,000-trajectory run
(``generate.py``) with ``dagmath score`` and repeats its records under new problem ids
(``<id>-c<k>``, sources renamed alike) until there are N, so every field is one the scorer
wrote. Then, in a fresh interpreter, it opens them the way the app does (``load_corpus``,
the call ``explorer/common.py``'s ``corpus_for`` makes, then every table the Overview and the
Table page derive) and reports the resident memory after each step and its peak. With
``--app`` it also starts the real app on them (``streamlit run app.py -- --data``), opens
the Overview and then every other page that reads scored records (Trajectories, Trajectory,
Compare, Distributions, Dead ends) in Chromium, and reads the server's resident memory
(and its peak) from ``/proc`` after each, then opens every page a second time. Prints one JSON line.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]

SEED_RUN = 2_000
#: The pages opened after the Overview, in order (URL, heading), as a user might.
PAGES = (
    ("/trajectories", "Trajectories"),
    ("/trajectory", "Trajectory"),
    ("/compare", "Compare models"),
    ("/distributions", "Distributions of graph statistics"),
    ("/dead_ends", "Dead ends"),
)


def proc_mb(pid: int | str = "self") -> dict[str, float]:
    """Resident (VmRSS) and peak resident (VmHWM) memory of a process, in MB (2**20)."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            out[name] = round(int(value.split()[0]) / 1024, 1)
    return out


def scored_jsonl(n: int, data: Path) -> Path:
    """``data/scored-<n>.jsonl``: N records copied from ``dagmath score`` of a seed run."""
    out = data / f"scored-{n}.jsonl"
    if out.exists():
        return out
    from generate import ensure_run

    root, _ = ensure_run(SEED_RUN, data)
    seed = data / f"scored-seed-{SEED_RUN}.jsonl"
    if not seed.exists():
        cmd = [sys.executable, "-m", "dagmath_viz", "score", str(root), "-o", str(seed),
               "--cache-dir", str(data / "cache-memory")]  # fmt: skip
        subprocess.run(cmd, check=True, cwd=ROOT)
    records = [orjson.loads(line) for line in seed.read_bytes().splitlines() if line.strip()]
    tmp = out.with_suffix(".part")
    with tmp.open("wb") as handle:
        written, copy = 0, 0
        while written < n:
            for rec in records:
                if written == n:
                    break
                rec = dict(rec)
                if copy:
                    rec["problem_id"] = f"{rec['problem_id']}-c{copy}"
                    if rec.get("source"):
                        path, sep, item = rec["source"].rpartition(":item ")
                        name = Path(path)
                        rec["source"] = f"{name.parent / f'copy{copy}' / name.name}{sep}{item}"
                handle.write(orjson.dumps(rec) + b"\n")
                written += 1
            copy += 1
    tmp.replace(out)
    return out


def measure_library(path: Path) -> dict:
    """In this process: open ``path`` as the app does and derive the pages' tables."""
    steps: dict[str, dict] = {"start": proc_mb()}
    from dagmath_viz.analysis import metrics, tables
    from dagmath_viz.analysis.trajectory_table import search_text, trajectory_table
    from dagmath_viz.draw import figures
    from dagmath_viz.run.corpus import load_corpus

    steps["imports"] = proc_mb()
    t = time.perf_counter()
    corpus = load_corpus([str(path)], label=str(path))
    load_s = time.perf_counter() - t
    steps["corpus"] = proc_mb()
    df = corpus.scored
    kept = [
        tables.leaderboard(df, n_boot=1000),
        tables.answers_before_final_step(df, corpus.trajectories),
        tables.model_spread(df),
        tables.by_difficulty(df),
        metrics.auc_curve(df),
        tables.table1(df),
        tables.class_counts_table(df),
        figures.assign_model_colours(df["model"].unique()),
    ]
    steps["overview"] = proc_mb()
    kept += [trajectory_table(df), search_text(corpus.trajectories, df)]
    steps["table_page"] = proc_mb()
    return {
        "records": len(corpus),
        "load_s": round(load_s, 2),
        "frame_mb": round(float(df.memory_usage(deep=True).sum()) / 2**20, 1),
        "steps": steps,
        "kept": len(kept),
    }


def measure_app(path: Path) -> dict:
    """The real server on ``path``: its RSS once the Overview, then the Table, is drawn."""
    from playwright.sync_api import sync_playwright

    from tests.app.browser import (
        CHROMIUM,
        CHROMIUM_ARGS,
        StreamlitServer,
        server_script,
        wait_for_app,
    )

    out: dict = {}
    server = StreamlitServer(server_script(ROOT), ("--data", str(path)), timeout=120)
    try:
        out["server_idle"] = proc_mb(server.proc.pid)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.set_default_timeout(300_000)
                page.goto(server.url)
                page.get_by_text("Leaderboard", exact=True).wait_for(state="visible")
                page.wait_for_function(
                    "() => document.querySelectorAll('[data-testid=stPlotlyChart]').length >= 2"
                )
                wait_for_app(page, 300_000)
                out["overview"] = proc_mb(server.proc.pid)
                for url, heading in PAGES:
                    page.goto(server.url + url)
                    page.get_by_role("heading", name=heading).first.wait_for(state="visible")
                    wait_for_app(page, 300_000)
                    out[url.strip("/")] = proc_mb(server.proc.pid)
                # every page once more: a flat process stays where the first round left it
                again = []
                for url, heading in [("/", "Overview"), *PAGES]:
                    page.goto(server.url + url)
                    page.get_by_role("heading", name=heading).first.wait_for(state="visible")
                    wait_for_app(page, 300_000)
                    again.append(proc_mb(server.proc.pid)["VmRSS"])
                out["second_round_rss"] = again
            finally:
                browser.close()
    finally:
        server.stop()
    return out


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    app = "--app" in args
    if "--measure" in args:  # the child: one fresh interpreter per measurement
        print(orjson.dumps(measure_library(Path(args[args.index("--measure") + 1]))).decode())
        return 0
    numbers = [a for a in args if a.isdigit()]
    n = int(numbers[0]) if numbers else 100_000
    data = HERE / ".data"
    data.mkdir(exist_ok=True)
    path = scored_jsonl(n, data)
    result = {"n": n, "scored_mib": round(path.stat().st_size / 2**20, 1),
              "load_before": [round(x, 2) for x in os.getloadavg()]}  # fmt: skip
    paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, paths)))
    child = subprocess.run(
        [sys.executable, __file__, "--measure", str(path)],
        check=True, capture_output=True, env=env, cwd=ROOT,
    )  # fmt: skip
    result["library"] = orjson.loads(child.stdout.splitlines()[-1])
    if app:
        result["app"] = measure_app(path)
    result["load_after"] = [round(x, 2) for x in os.getloadavg()]
    print(orjson.dumps(result).decode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
