"""``dagmath app``: open the explorer (the Streamlit app) from any directory.

Runs ``streamlit run`` on the app that ships with the package (``app.py``, ``pages/``,
``assets/`` and the bundled ``sample_data/``; from a source checkout, the checkout's own),
through its ``serve.py``, which starts loading the ``--data`` source as the server starts,
with the settings of its ``.streamlit/config.toml``: the server binds 127.0.0.1 unless
``--server.address`` says otherwise, and sends no usage statistics. Any other Streamlit
option (``--server.port 8502``, ``--theme.base dark``) is passed on. This module never
imports Streamlit: the server runs in its place (``exec``).

Examples::

    dagmath app                                   # the bundled sample data
    dagmath app --data runs/ --answers answers.json --server.port 8502
    dagmath app --server.address 0.0.0.0          # reachable from other machines: a choice
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path

from dagmath_viz.cli.common import UsageError, add_command, add_map_option
from dagmath_viz.schema import DagMathError, InputError

__all__ = [
    "app_command",
    "app_environment",
    "labels_environment",
    "app_root",
    "register",
    "run_app",
    "streamlit_flags",
]

#: The installed package that carries the app (the repository root, mapped in pyproject.toml).
APP_PACKAGE = "dagmath_viz_app"
#: Settings that hold even when the shipped config.toml cannot be found.
SAFE_DEFAULTS = {
    "server.address": "127.0.0.1",
    "server.headless": True,
    "browser.gatherUsageStats": False,
}


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``app`` to the ``dagmath`` parser."""
    app = add_command(
        subparsers,
        "app",
        help="open the explorer in a browser (Streamlit; binds 127.0.0.1)",
        description=__doc__,
        usage="dagmath app [-h] [--data PATH ...] [--answers FILE] [--sources DIR ...] "
        "[--labels FILE ...] [--map MAP] [--SECTION.OPTION VALUE ...]",
    )
    app.add_argument(
        "--data",
        metavar="PATH",
        action="append",
        help="a results file or folder (default: the sample data); give it again to load "
        "several at once, their models side by side",
    )
    app.add_argument("--answers", metavar="FILE", help="reference answers for --data")
    app.add_argument(
        "--sources",
        metavar="DIR",
        action="append",
        help="a folder a scored file's records may read their steps from, beside the --data "
        "paths (a scored file kept apart from the data it scored); give it again for more",
    )
    app.add_argument(
        "--labels",
        metavar="FILE",
        action="append",
        help="the label file labels made in the app go to (default: the sidecar beside the "
        "data); give it again for a colleague's file, shown read only with the two files' "
        "agreement",
    )
    add_map_option(app)
    app.set_defaults(func=run_app, pass_through=True)


def app_root() -> Path:
    """The folder holding ``app.py``, ``pages/``, ``assets/`` and ``sample_data/``.

    A source checkout's own first (``dagmath app`` runs what you are editing), else the
    installed ``dagmath_viz_app``.
    """
    checkout = Path(__file__).resolve().parents[2]
    if _is_app(checkout):
        return checkout
    spec = importlib.util.find_spec(APP_PACKAGE)
    for place in (spec.submodule_search_locations or []) if spec else []:
        if _is_app(Path(place)):
            return Path(place)
    raise DagMathError(
        f"the app's files are missing (neither {checkout / 'app.py'} nor an installed "
        f"{APP_PACKAGE}); reinstall dagmath-viz"
    )


def _is_app(folder: Path) -> bool:
    return all((folder / name).is_file() for name in ("app.py", "serve.py", "explorer/common.py"))


def _flag_value(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def streamlit_flags(root: Path, extra: list[str]) -> list[str]:
    """``--section.option=value`` for each shipped setting the user did not give in ``extra``.

    Streamlit reads ``.streamlit/config.toml`` only from the working directory, which for
    ``dagmath app`` is anywhere; so the app's settings travel as command-line flags.
    """
    given = {t.split("=", 1)[0][2:] for t in extra if t.startswith("--")}
    settings = dict(SAFE_DEFAULTS)
    config = root / ".streamlit" / "config.toml"
    if config.is_file():
        for section, table in tomllib.loads(config.read_text(encoding="utf-8")).items():
            settings.update({f"{section}.{key}": value for key, value in table.items()})
    return [f"--{k}={_flag_value(v)}" for k, v in settings.items() if k not in given]


def _check_extra(extra: list[str]) -> None:
    """Only Streamlit options (``--section.option [VALUE]``) may pass through."""
    if extra and not (extra[0].startswith("--") and "." in extra[0].split("=", 1)[0]):
        raise UsageError(f"unrecognized arguments: {' '.join(extra)}")
    for token in extra:
        if token.startswith("-") and not token.startswith("--"):
            raise UsageError(f"unrecognized argument {token!r} (Streamlit options are --x.y)")


def _existing(option: str, raw: str | None) -> list[str]:
    if raw is None:
        return []
    path = Path(raw).expanduser().resolve()
    if not path.exists():
        raise InputError(f"{option} {raw}: no such file or folder")
    return [option, str(path)]


def app_command(args: argparse.Namespace) -> list[str]:
    """The command line ``dagmath app`` runs: ``python serve.py`` (``streamlit run app.py``
    in that process, its ``--data`` source loading as the server starts) with the
    Streamlit options and the app's own arguments."""
    extra = list(args.extra or [])
    _check_extra(extra)
    if importlib.util.find_spec("streamlit") is None:
        raise DagMathError("dagmath app needs Streamlit: pip install dagmath-viz installs it")
    root = app_root()
    app_args = [a for raw in args.data or () for a in _existing("--data", raw)]
    app_args += _existing("--answers", args.answers)
    for raw in getattr(args, "sources", None) or ():
        app_args += _existing("--sources", raw)
    field_map = getattr(args, "field_map", None)  # (a caller may build the namespace itself)
    if field_map:
        app_args += ["--map", field_map.text]
    return [
        sys.executable,
        str(root / "serve.py"),  # streamlit run app.py, its data source loading from the start
        *streamlit_flags(root, extra),
        *extra,
        "--",
        *app_args,
    ]


def run_app(args: argparse.Namespace) -> int:
    """The ``app`` command: becomes the Streamlit server (never returns on success)."""
    command = app_command(args)
    env = app_environment(os.environ)
    env.update(labels_environment(getattr(args, "labels", None)))
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(command[0], command, env)
    return 0  # not reached


def labels_environment(files: list[str] | None) -> dict[str, str]:
    """``DAGMATH_LABELS`` for ``--labels`` (each file absolute, joined with ``os.pathsep``;
    the first is written to, and need not exist yet), or nothing when none was given.

    A folder is refused: a label file is a file.
    """
    if not files:
        return {}
    paths = [Path(f).expanduser().resolve() for f in files]
    for raw, path in zip(files, paths, strict=True):
        if path.is_dir():
            raise InputError(f"--labels {raw}: a folder, not a label file")
        if path != paths[0] and not path.is_file():
            raise InputError(f"--labels {raw}: no such file (only the first may be new)")
    return {"DAGMATH_LABELS": os.pathsep.join(str(p) for p in paths)}


def app_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The server's environment: ``env`` with glibc's ``MALLOC_ARENA_MAX=2`` unless it sets
    its own. Streamlit runs every page in a thread of its own, and glibc gives threads
    malloc arenas of their own that keep freed memory: with 100,000 scored records open,
    visiting every page twice grew the server by 55-90 MB more without this
    (``benchmarks/memory_scored.py``). Other C libraries ignore the variable."""
    return {"MALLOC_ARENA_MAX": "2", **env}
