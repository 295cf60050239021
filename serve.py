"""The explorer's server: ``streamlit run app.py``, its data source loading from the start.

``python serve.py [STREAMLIT OPTIONS] [-- --data PATH [--answers FILE]]`` is ``streamlit run
app.py`` with the same options, except that the data source a first visit shows starts
loading as the server starts (:func:`explorer.common.preload`), not when the first browser
connects. ``dagmath app`` runs this, and so does ``bash scripts/app.sh``.

A scored run's copy is read, and a raw folder is being scored, while the browser is still
being opened: on 100,000 scored records the first Overview is drawn 0.6 s sooner from its
URL, and a raw folder's results so far show ~2 s sooner from the server's start
(``benchmarks/README.md``, issue 17). Plain ``streamlit run app.py`` still works; it
loads on the first visit.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
#: Seconds between two lines of progress in the terminal while the data source loads.
PROGRESS_EVERY = 10.0


def _preload(common, app_args: list[str]) -> None:
    """Load the data source (in its own load thread) and say in the terminal how far it
    is, every :data:`PROGRESS_EVERY` seconds, and when it is ready; a fault is the page's
    to report (the first visit tries again)."""
    from dagmath_viz.progress import Progress

    start = time.monotonic()
    # plain lines even on a terminal: the server shares it with Streamlit's own log
    progress = Progress(
        "reading", unit="files", bar=False, prefix="dagmath app: ", interval=PROGRESS_EVERY
    )
    try:
        started = common.preload(app_args)
        if started is None:
            return
        label, load = started
        print(f"dagmath app: loading {label} before the first visit", file=sys.stderr)
        corpus = load.wait(progress)
    except Exception as exc:  # noqa: BLE001 - never a traceback: the page says why
        print(f"dagmath app: not preloaded ({type(exc).__name__}: {exc}); "
              "the page will say why", file=sys.stderr)  # fmt: skip
        return
    print(f"dagmath app: {common.loaded_summary(corpus)} ready in "
          f"{time.monotonic() - start:.1f} s", file=sys.stderr)  # fmt: skip


def main(argv: list[str]) -> int:
    """Import what the pages need, start the preload, then become ``streamlit run app.py
    ARGV`` in this process.

    The imports come first, in this thread: importing one module in two threads at once
    can hand one of them the module half made (plotly looks pandas up in ``sys.modules``),
    and the first visit needs them all the same.
    """
    app_args = argv[argv.index("--") + 1 :] if "--" in argv else []
    sys.path.insert(0, str(ROOT))  # as streamlit run does for app.py: `pages` is importable
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    from explorer import common

    # Streamlit reads a pages/ folder beside app.py as its legacy multipage mode until
    # st.navigation first runs in the process: a first visit straight to a deep link would
    # run the page alone (or, for a name with no file of its own, say "Page not found").
    # app.py always navigates, so the legacy mode is off from the start.
    PagesManager.uses_pages_directory = False

    threading.Thread(
        target=_preload, args=(common, app_args), name="dagmath-preload", daemon=True
    ).start()
    sys.argv = ["streamlit", "run", str(ROOT / "app.py"), *argv]
    try:
        code = cli.main()
    except SystemExit as stop:
        code = stop.code
    return _stopped(code, common.LOAD_THREAD)


def _stopped(code: object, load_thread: str) -> object:
    """The server has stopped: ``code`` to exit with, at once if a load is still running
    (a thread named ``load_thread``).

    A stop mid-load (a SIGTERM to the whole process group: systemd, ``timeout``) kills the
    scoring pool's workers too, and ``multiprocessing.Pool``'s finaliser at exit can then
    block for ever on their task queue (about one such stop in six). Nothing of an
    unfinished load is kept, so the process kills the processes it started and leaves
    without the finalisers; the fork server and resource tracker end as their pipes close.
    The one exit handler that matters, removing the upload store's folder from the
    temporary folder, is run first.
    """
    if any(t.name == load_thread and t.is_alive() for t in threading.enumerate()):
        import multiprocessing

        from dagmath_viz.store.uploads import remove_stores

        for child in multiprocessing.active_children():  # the workers, the checker's
            child.kill()
        remove_stores()  # os._exit runs no exit handler: the uploads would stay behind
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code if isinstance(code, int) else 0 if code is None else 1)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
