"""Refresh the README's picture (``docs/trajectory.png``) from real data, on request only.

    python tests/app/refresh_readme_picture.py [--data PATH] [--out docs/trajectory.png]

Starts the app on ``--data`` (default: ``../shared/data/thought-anchors`` when the app can
load it, else ``../shared/data/dagmath-fewshot``), opens the Trajectory page on a readable
real trajectory (incorrect if there is one, 40 to 130 steps, the most dead ends), selects
its first dead end (else its last step) through a ``step=`` deep link, and saves the view
at 1600x1000.
Browser tests never write this file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from dagmath_viz.run.corpus import load_corpus  # noqa: E402
from tests.app.browser import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    IFRAME_SELECTOR,
    StreamlitServer,
    dag_frame,
    wait_for_app,
)

SHARED = ROOT / ".." / "shared" / "data"


def _pick(data: Path) -> dict[str, str] | None:
    """Query parameters of the trajectory to show, or None when nothing loads."""
    df = load_corpus([data]).scored
    df = df[df["class"] != "illegal"] if not df.empty else df  # a layout the app misreads
    if df.empty:
        return None
    sized = df[(df["n_nodes"] >= 40) & (df["n_nodes"] <= 130)]
    sized = sized if not sized.empty else df
    wrong = sized[sized["final_correct"] == False]  # noqa: E712 (a pandas mask)
    pool = wrong if not wrong.empty else sized
    rec = pool.loc[pool["dead_ends"].map(len).idxmax()]
    query = {
        "model": rec["model"],
        "dataset": rec["dataset"],
        "problem": str(rec["problem_id"]),
        "sample": str(rec["sample_id"]),
    }
    # Select the first dead end (or, with none, the final step) through a step= link.
    query["step"] = str(rec["dead_ends"][0] if len(rec["dead_ends"]) else rec["n_nodes"])
    return query


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "trajectory.png")
    args = parser.parse_args(argv)
    candidates = (
        [args.data] if args.data else [SHARED / "thought-anchors", SHARED / "dagmath-fewshot"]
    )
    for data in candidates:
        query = _pick(data.resolve()) if data.exists() else None
        if query:
            break
    else:
        print(f"no loadable real data in {', '.join(map(str, candidates))}", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    server = StreamlitServer(ROOT / "app.py", ("--data", str(data.resolve())))
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(f"{server.url}/trajectory?{urlencode(query)}")
            wait_for_app(page)
            dag_frame(page)
            page.locator(IFRAME_SELECTOR).first.scroll_into_view_if_needed()
            page.evaluate("() => window.scrollBy(0, -170)")  # keep the metrics in view
            page.wait_for_timeout(800)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.out))
            browser.close()
    finally:
        server.stop()
    print(f"{args.out}: {data.name} {query}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
