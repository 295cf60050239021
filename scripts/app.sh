#!/usr/bin/env bash
# Set everything up, then open the explorer (on the bundled sample data unless told
# otherwise): `bash scripts/app.sh [--data PATH] [--answers FILE] [--server.port 8502 ...]`.
# Every argument goes to `dagmath app`, which passes Streamlit options on and binds
# 127.0.0.1 unless `--server.address` says otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m dagmath_viz app "$@"
