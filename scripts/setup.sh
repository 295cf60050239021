#!/usr/bin/env bash
# Set up everything the app and the tests need, idempotently: a venv in .venv with the
# pinned Python packages, this package in editable mode, and (with --browser) Debian's
# Chromium and strace for the real-browser tests. Never downloads a browser build of its own.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.installed-$(cat requirements.txt requirements-dev.txt pyproject.toml | sha1sum | cut -c1-12)
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -r requirements-dev.txt
  .venv/bin/python -m pip install --quiet --no-deps -e .
  rm -f .venv/.installed-*
  touch "$stamp"
fi

# --browser: Debian's chromium (the browser tests) and strace (the loopback test traces the
# app server's connect calls, tests/app/test_loopback.py)
if [ "${1:-}" = "--browser" ]; then
  missing=""
  [ -x /usr/bin/chromium ] || missing="$missing chromium"
  command -v strace >/dev/null || missing="$missing strace"
  if [ -n "$missing" ]; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    echo "setup: installing Debian's$missing for the browser tests" >&2
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
  fi
fi
