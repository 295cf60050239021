"""This tree against an earlier commit, interleaved: is the change any slower?

``python benchmarks/interleave.py [--base REV] [--repeat N] [--n 20000] [--skip-app | --app-only]``

Issue 26 (the renovation) asks that the benchmarks be no slower after it than before,
measured in interleaved runs. This takes the tree of ``--base`` (default ``90756de``, the
last commit before the renovation's first step; ``git archive`` into
``benchmarks/.data/base-<sha>``, no worktree), and, on the same generated inputs, runs each
measurement on the base tree and on this one in turn, ``--repeat`` times, each timing only
once the CPUs are idle (``run.wait_for_quiet``):

- ``dagmath score`` on the ``--n``-trajectory run of each answer distribution (today's and
  MATH's forms), with an empty verdict cache (*cold*) and with the cache that tree's own
  earlier run left (*warm*); the outputs of both trees are compared byte for byte;
- the app (``serve.py -- --data``, what ``dagmath app`` runs) in headless Chromium, from
  server start to the Overview drawn and idle (``peer_inspect.ours_session``): on the
  scored JSONL (each tree's own cache, warmed by one session first) and on the raw folder
  of today's run opened for the very first time (an empty cache each session: it scores).

Each side's best and median wall seconds are printed with the ratio this tree / base;
results go to ``benchmarks/results/<date>-interleave.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import filecmp
import io
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT)]

import run  # noqa: E402 - its timing and quiet waits, so every benchmark measures alike
from generate import ensure_run  # noqa: E402

BASE = "90756de"  # ScoredRun.add: the last commit before "Renovation, step 1" (cd9a312)


def base_tree(rev: str, data_dir: Path) -> Path:
    """The files of commit ``rev`` under ``data_dir/base-<sha>`` (made once)."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev],
                         capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    tree = data_dir / f"base-{sha}"
    if not (tree / "app.py").is_file():
        shutil.rmtree(tree, ignore_errors=True)
        tar = subprocess.run(["git", "-C", str(ROOT), "archive", sha],
                             capture_output=True, check=True).stdout  # fmt: skip
        with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
            archive.extractall(tree, filter="data")
    return tree


def score(tree: Path, root: Path, out: Path, cache: Path) -> dict:
    """``dagmath score`` of the source tree ``tree`` (its own package first on the path)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [run.PY, "-m", "dagmath_viz", "score", str(root), "-o", str(out),
           "--cache-dir", str(cache)]  # fmt: skip
    return run.run_timed(cmd, env=env)


def summary(walls: list[float]) -> dict:
    return {"best_s": min(walls), "median_s": round(statistics.median(walls), 3), "all_s": walls}


def bench_scoring(trees: dict[str, Path], root: Path, scratch: Path, repeat: int) -> dict:
    run.warm_page_cache(root)
    warm = {side: scratch / f"cache-{side}" for side in trees}
    outs = {side: scratch / f"scored-{side}.jsonl" for side in trees}
    for side, tree in trees.items():  # each tree's warm cache, from its own first run
        shutil.rmtree(warm[side], ignore_errors=True)
        score(tree, root, outs[side], warm[side])
    walls: dict[str, list[float]] = {f"{s}_{k}": [] for s in trees for k in ("cold", "warm")}
    for _ in range(repeat):
        for side, tree in trees.items():
            with tempfile.TemporaryDirectory(dir=scratch) as cold:
                walls[f"{side}_cold"].append(score(tree, root, outs[side], Path(cold))["wall_s"])
            walls[f"{side}_warm"].append(score(tree, root, outs[side], warm[side])["wall_s"])
    result = {key: summary(v) for key, v in walls.items()}
    result["identical_output"] = filecmp.cmp(outs["base"], outs["head"], shallow=False)
    return result


def bench_app(trees: dict[str, Path], scored: Path, raw: Path, scratch: Path, repeat: int) -> dict:
    from peer_inspect import ours_session
    from playwright.sync_api import sync_playwright

    from tests.app.browser import CHROMIUM, CHROMIUM_ARGS

    caches = {side: scratch / f"app-cache-{side}" for side in trees}
    walls: dict[str, list[float]] = {f"{s}_{k}": [] for s in trees for k in ("scored", "raw")}
    run.warm_page_cache(raw)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for side, tree in trees.items():  # the scored file's columnar copy, once each
                shutil.rmtree(caches[side], ignore_errors=True)
                ours_session(browser, tree, scored, {"verdicts": caches[side]}, cold=False)
            for _ in range(repeat):
                for side, tree in trees.items():
                    inputs = {"verdicts": caches[side]}
                    walls[f"{side}_scored"].append(
                        ours_session(browser, tree, scored, inputs, cold=False)["drawn_s"]
                    )
                    walls[f"{side}_raw"].append(  # an empty cache: scored as the first time
                        ours_session(browser, tree, raw, inputs, cold=True)["drawn_s"]
                    )
        finally:
            browser.close()
    return {key: summary(v) for key, v in walls.items()}


def ratios(section: dict) -> dict:
    """This tree's best / the base's best, per measurement (below 1: faster now)."""
    kinds = {key.split("_", 1)[1] for key in section if key.startswith("head_")}
    return {k: round(section[f"head_{k}"]["best_s"] / section[f"base_{k}"]["best_s"], 3)
            for k in sorted(kinds)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", default=BASE, help=f"the commit to compare with ({BASE})")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--n", type=int, default=20_000, help="trajectories per scored run")
    parser.add_argument("--data-dir", type=Path, default=HERE / ".data")
    parser.add_argument("--skip-app", action="store_true", help="no browser measurements")
    parser.add_argument("--app-only", action="store_true", help="only the browser measurements")
    args = parser.parse_args(argv)
    trees = {"base": base_tree(args.base, args.data_dir), "head": ROOT}
    scratch = args.data_dir / "scratch" / "interleave"
    scratch.mkdir(parents=True, exist_ok=True)
    results = {
        "date": dt.date.today().isoformat(),
        "base": args.base,
        "head": subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip(),  # fmt: skip
        "repeat": args.repeat,
        "machine": run.machine(),
        "load_before": [round(x, 2) for x in os.getloadavg()],
    }
    for distribution in () if args.app_only else ("default", "math"):
        root, _ = ensure_run(args.n, args.data_dir, distribution=distribution)
        print(f"scoring, {distribution} answers ...", flush=True)
        section = bench_scoring(trees, root, scratch / distribution, args.repeat)
        results[f"scoring_{distribution}"] = {**section, "ratio": ratios(section)}
    if not args.skip_app:
        print("app ...", flush=True)
        raw, _ = ensure_run(args.n, args.data_dir)
        scored = scratch / "default" / "scored-head.jsonl"
        if not scored.is_file():  # written by the scoring section of an earlier run
            score(ROOT, raw, scored, scratch / "cache-app-input")
        section = bench_app(trees, scored, raw, scratch, args.repeat)
        results["app"] = {**section, "ratio": ratios(section)}
    results["load_after"] = [round(x, 2) for x in os.getloadavg()]
    results["timings_taken_while_busy"] = list(run.NOISY)
    out = HERE / "results" / f"{results['date']}-interleave{'-app' if args.app_only else ''}.json"
    out.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))
    for key in [k for k in results if k.startswith(("scoring_", "app"))]:
        section = results[key]
        print(f"\n{key}: this tree / base (best wall), below 1 is faster now")
        for kind, value in section["ratio"].items():
            base, head = section[f"base_{kind}"], section[f"head_{kind}"]
            print(f"  {kind}: {value}  (base {base['best_s']} s, median {base['median_s']}; "
                  f"this {head['best_s']} s, median {head['median_s']})")  # fmt: skip
        if "identical_output" in section:
            print(f"  scored output byte-identical: {section['identical_output']}")
    print(f"\nresults: {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
