"""The one progress reporter (dagmath_viz/progress.py): a bar on a terminal, plain lines
every 10 s elsewhere (issue 31: ``dagmath score`` printed nothing off a terminal).

Time is driven by hand (a fake clock), never measured."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from dagmath_viz.progress import BAR_WIDTH, Progress, format_duration

REPO = Path(__file__).parents[1]


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_at_the_start_every_interval_and_at_the_end():
    clock, out = _Clock(), _Stream(tty=False)
    progress = Progress("scoring", unit="files", stream=out, clock=clock)
    progress(0, 40)  # the start: always a line
    clock.now += 4
    progress(10, 40)  # 4 s later: within the 10 s, no line
    clock.now += 6
    progress(20, 40)  # 10 s in: a line; 20 files in 10 s = 2/s, 20 left = 10 s
    clock.now += 5
    progress(40, 40)  # the end: always a line
    progress.close()  # already closed: nothing more
    assert out.getvalue().splitlines() == [
        "dagmath: scoring: 0/40 files, ? files/s, 0:00 elapsed, ETA ?",
        "dagmath: scoring: 20/40 files, 2.0 files/s, 0:10 elapsed, ETA 0:10",
        "dagmath: scoring: 40/40 files, 2.7 files/s, 0:15 elapsed, ETA 0:00",
    ]


def test_a_bar_on_a_terminal_with_rate_and_eta():
    clock, out = _Clock(), _Stream(tty=True)
    progress = Progress("scoring", 4, unit="files", stream=out, clock=clock)
    progress.advance()
    clock.now += 0.05
    progress.advance()  # within a tenth of a second of the last redraw: not redrawn
    clock.now += 1.95
    progress.advance()  # 3 in 2 s = 1.5/s; 1 left: ETA 0:01
    text = out.getvalue()
    assert text.count("\r") == 2 and "\n" not in text
    quarter = "#" * (BAR_WIDTH * 3 // 4) + "." * (BAR_WIDTH - BAR_WIDTH * 3 // 4)
    assert text.endswith(
        f"\rscoring [{quarter}] 3/4 files, 1.5 files/s, 0:02 elapsed, ETA 0:01\x1b[K"
    )
    progress.advance(ok=False)  # the last unit, failed: the bar ends with a newline
    assert out.getvalue().endswith(", 1 failed, 2.0 files/s, 0:02 elapsed, ETA 0:00\x1b[K\n")
    assert "[" + "#" * BAR_WIDTH + "]" in out.getvalue()


def test_units_done_before_count_as_done_but_not_in_the_rate():
    clock, out = _Clock(), _Stream(tty=False)
    progress = Progress("generate", 10, already=6, stream=out, clock=clock)
    clock.now += 8
    progress.advance()  # 1 in 8 s this run: 3 left take 24 s
    assert progress.line() == "7/10, 0.1 /s, 0:08 elapsed, ETA 0:24"


def test_nothing_shown_means_nothing_to_close():
    out = _Stream(tty=True)
    Progress("scoring", stream=out).close()
    assert out.getvalue() == ""


def test_bar_false_writes_lines_on_a_terminal():
    clock, out = _Clock(), _Stream(tty=True)
    progress = Progress("reading", unit="files", bar=False, prefix="app: ", stream=out, clock=clock)
    progress(1, 2)
    assert out.getvalue() == "app: reading: 1/2 files, ? files/s, 0:00 elapsed, ETA ?\n"


def test_format_duration():
    assert [format_duration(s) for s in (0, 59.6, 75.4, 3725)] == [
        "0:00",
        "1:00",
        "1:15",
        "1:02:05",
    ]


def test_score_off_a_terminal_prints_plain_progress_lines(tmp_path: Path):
    """``dagmath score`` under nohup/CI: the start and end lines, no carriage return."""
    proc = subprocess.run(
        [sys.executable, "-m", "dagmath_viz", "score", "tests/data/mixed_run", "--no-cache",
         "-o", str(tmp_path / "x.jsonl")],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 4, proc.stderr  # mixed_run has an unreadable line on purpose
    lines = [line for line in proc.stderr.splitlines() if line.startswith("dagmath: scoring: ")]
    # 3 problem files and extra.jsonl are scored; answers.json is read, not scored
    assert lines and lines[-1].startswith("dagmath: scoring: 4/4 files, ")
    assert lines[-1].endswith(", ETA 0:00") and "\r" not in proc.stderr
