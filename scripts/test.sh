#!/usr/bin/env bash
# Set everything up, then run the whole test suite (lint and the type checker included).
#
# With no arguments the suite runs as two pytest processes at once, one per core: the
# browser tests (they mostly wait on Chromium and Streamlit servers) and the installed-wheel
# test (it mostly waits on pip) beside everything else, which takes about as long: on a
# quiet 2-core machine the browser lane took 8.7 min; the rest took 12.5 min until
# 2026-12-05 (AppTests re-loaded a corpus with stalling answers for every test, a Dask
# grace was waited in full), ~9.4 min after (10.3 min measured on a shared, loaded 2-core
# machine, where its tests with known CI times ran ~10 % slower). Moving the real-cluster
# tests (~1 min) to the first lane would leave that one the longer by more (tests in a
# lane run one after another). The two marker expressions are complements
# (tests/test_test_command.py checks it), so every test runs exactly once. The first
# lane prints as it goes; the other lane's output follows when both are done, then one
# closing line for the whole suite. DAGMATH_TEST_LANES=1 runs one plain pytest instead,
# and so does any argument (passed to pytest: -m "not slow", files).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --browser
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python -m mypy  # the library, as [tool.mypy] in pyproject.toml says
if [ "$#" -gt 0 ] || [ "${DAGMATH_TEST_LANES:-2}" = 1 ]; then
  exec .venv/bin/python -m pytest "$@"
fi

LANE_A="browser or packaging"
LANE_B="not browser and not packaging"
logs=$(mktemp -d)
trap 'kill "${lane_b:-}" 2>/dev/null || true; rm -rf "$logs"' EXIT
# the second lane writes its own cache folder, so the two never write one file at once
.venv/bin/python -m pytest -m "$LANE_B" -o cache_dir=.pytest_cache/lane-b \
  >"$logs/b.log" 2>&1 &
lane_b=$!
set +e
.venv/bin/python -m pytest -m "$LANE_A" 2>&1 | tee "$logs/a.log"
rc_a=${PIPESTATUS[0]}
wait "$lane_b"
rc_b=$?
set -e
echo
echo "---------------- the other lane: -m \"$LANE_B\" ----------------"
cat "$logs/b.log"
echo
# one closing line for both lanes, from each lane's own (failed counts errors too)
.venv/bin/python - "$logs/a.log" "$logs/b.log" <<'PY'
import re
import sys

total = {"passed": 0, "failed": 0, "skipped": 0}
for log in sys.argv[1:]:
    with open(log, errors="replace") as f:
        ends = [x for x in f if re.match(r"^=+ .* in [0-9.]+s.* =+$", x.strip())]
    if not ends:
        print(f"test.sh: no pytest summary in {log}", file=sys.stderr)
        continue
    for n, word in re.findall(r"(\d+) (passed|failed|errors?|skipped)", ends[-1]):
        total["failed" if word.startswith("error") else word] += int(n)
print(f"suite: {total['passed']} passed, {total['failed']} failed, {total['skipped']} skipped")
PY
# pytest's exit codes: 0 all passed, 5 no test selected (a lane may have none); any other
# code of either lane is the suite's
status=0
for rc in "$rc_a" "$rc_b"; do
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ]; then status=$rc; fi
done
if [ "$rc_a" -eq 5 ] && [ "$rc_b" -eq 5 ]; then status=5; fi
exit "$status"
