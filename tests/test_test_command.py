"""The test command holds together: CI runs exactly the README's command, the README names
the two pytest lanes ``scripts/test.sh`` runs, and those lanes split the suite in two
(every test in exactly one lane, whatever its markers)."""

from __future__ import annotations

import itertools
import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TEST_SH = (REPO / "scripts" / "test.sh").read_text()


def _lane(name: str) -> str:
    (expression,) = re.findall(rf'^{name}="([^"]+)"$', TEST_SH, flags=re.M)
    return expression


def _matches(expression: str, marks: set[str]) -> bool:
    """pytest's ``-m`` on a test with ``marks`` (its grammar: names, and, or, not, brackets)."""
    names = set(re.findall(r"[A-Za-z_]\w*", expression)) - {"and", "or", "not"}
    return bool(eval(expression, {"__builtins__": {}}, {n: n in marks for n in names}))  # noqa: S307


def test_ci_runs_the_readmes_test_command():
    readme = (REPO / "README.md").read_text()
    assert "```bash\nbash scripts/test.sh\n```" in readme
    ci = [line for line in (REPO / ".ci" / "run").read_text().splitlines() if line.strip()]
    assert ci[-1] == "bash scripts/test.sh"


def test_the_readme_names_both_lanes():
    readme = " ".join((REPO / "README.md").read_text().split())
    for lane in ("LANE_A", "LANE_B"):
        assert f'`-m "{_lane(lane)}"`' in readme, lane


def test_every_test_runs_in_exactly_one_lane():
    a, b = _lane("LANE_A"), _lane("LANE_B")
    declared = {
        m.split(":")[0]
        for m in tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"][
            "ini_options"
        ]["markers"]
    }
    used = set(re.findall(r"[A-Za-z_]\w*", f"{a} {b}")) - {"and", "or", "not"}
    assert used <= declared, used - declared
    assert {"browser", "packaging"} <= used
    for n in range(len(declared) + 1):
        for marks in itertools.combinations(sorted(declared), n):
            assert _matches(a, set(marks)) != _matches(b, set(marks)), marks
    # the lanes differ: browser tests in the first, a test with no marker in the second
    assert _matches(a, {"browser"}) and _matches(b, set())
