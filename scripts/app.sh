#!/usr/bin/env bash
# Set everything up, then open the explorer (on the bundled sample data unless told
# otherwise: `bash scripts/app.sh --data PATH [--answers FILE]`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/streamlit run app.py --browser.gatherUsageStats false -- "$@"
