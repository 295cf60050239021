"""The self-contained HTML export (dagmath_viz.draw.html_export, ``dagmath export-html``).

The browser half (opened from file:// with the network off) is tests/app/test_export_browser.py.
"""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from dagmath_viz.analysis import tables
from dagmath_viz.cli import main
from dagmath_viz.cli.export_html import SELECT_CHOICES
from dagmath_viz.draw import html_export as hx
from dagmath_viz.draw.offline_assets import katex_bundle, neutralise_urls, plotly_bundle
from dagmath_viz.run.corpus import load_corpus
from dagmath_viz.schema import DagMathError, Step, Trajectory

REPO = Path(__file__).resolve().parents[1]
THOUGHT_ANCHORS = (REPO / ".." / "shared" / "data" / "thought-anchors").resolve()
GSM_BFS = REPO / "sample_data" / "runs" / "gsm-bfs"
URL = re.compile(r"https?://", re.IGNORECASE)

HOSTILE = "</script><script>window.__pwned=1</script><img src=x onerror=window.__pwned=2>"


def need_thought_anchors() -> Path:
    if not THOUGHT_ANCHORS.is_dir():
        reason = f"{THOUGHT_ANCHORS} not found"
        if os.environ.get("DAGMATH_REQUIRE_SHARED") == "1":
            pytest.fail(f"{reason} and DAGMATH_REQUIRE_SHARED=1", pytrace=False)
        pytest.skip(f"{reason} (DAGMATH_REQUIRE_SHARED=1 to fail)")
    return THOUGHT_ANCHORS


def hostile_item() -> hx.ExportedTrajectory:
    steps = (
        Step(1, (), HOSTILE + ' <a href="javascript:window.__pwned=3">x</a> costs $5'),
        Step(2, (1,), r"so $\href{javascript:window.__pwned=4}{y}$ and $x^2$", HOSTILE),
        Step(3, (1,), "a dead end with a stray $ sign"),
        Step(4, (2,), r"The final answer is $\boxed{7}$."),
    )
    traj = Trajectory(HOSTILE, "d<b>", "p&1", 0, steps, problem_text=HOSTILE + " $1+1$")
    rec = {
        "model": HOSTILE,
        "dataset": "d<b>",
        "problem_id": "p&1",
        "sample_id": 0,
        "class": "incorrect",
        "dead_ends": (3,),
        "final_correct": False,
        "closeness_rate": 0.75,
        "n_nodes": 4,
        "n_edges": 3,
        "density": 0.5,
        "predicted_answer": "7" + HOSTILE,
        "reference_answer": "8",
        "errors": (HOSTILE,),
        "source": "http://evil.example/x.json",
    }
    return hx.ExportedTrajectory(traj, rec, ((2, "wrong step", HOSTILE),))


class Tables(HTMLParser):
    """Every ``<table data-table=...>`` of a page as {name: rows of cell texts}."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._name: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._name = dict(attrs).get("data-table")
            self.tables[self._name] = []
        elif tag == "tr" and self._name:
            self.tables[self._name].append([])
        elif tag in ("td", "th") and self._name:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[self._name][-1].append("".join(self._cell))
            self._cell = None
        elif tag == "table":
            self._name = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def page_tables(page: str) -> dict[str, list[list[str]]]:
    parser = Tables()
    parser.feed(page)
    return parser.tables


def shown(value) -> str:
    return tables.MISSING if value is None or pd.isna(value) else str(value)


# --------------------------------------------------------------------------- safety


def test_hostile_text_is_escaped_and_adds_no_script_or_url():
    page = hx.trajectory_html(hostile_item())
    assert not URL.search(page)  # the record's http:// source shows, spelled with entities
    assert "http:&#47;&#47;evil.example" in page
    # the hostile text adds no tag: the only <script> tags are the page's own
    benign = hx.trajectory_html(
        hx.ExportedTrajectory(
            Trajectory("m", "d", "p", 0, (Step(1, (), "a"), Step(2, (1,), "b"))),
            {"class": "perfect", "dead_ends": (), "final_correct": True},
        )
    )
    assert page.count("<script") == benign.count("<script")
    markup = re.sub(r"<script[^>]*>.*?</script>", "", page, flags=re.S)  # our own scripts
    assert "<img" not in markup and '<a href="javascript' not in markup
    assert "&lt;img src=x onerror=window.__pwned=2&gt;" in page  # shown as text
    # inside the srcdoc the view's JSON keeps "<" as an escape, twice removed from markup
    assert "window.__pwned=1</script>" not in page


def test_a_url_left_in_a_page_is_refused():
    with pytest.raises(RuntimeError, match="external URL"):
        hx.check_page("<p>see https://example.org</p>")
    assert hx.check_page("<p>see https:\\/\\/example.org</p>").startswith("<p>")


def test_bundles_name_no_url():
    assert neutralise_urls("a http://x and HTTPS://y") == "a http:\\/\\/x and HTTPS:\\/\\/y"
    assert not URL.search(plotly_bundle())
    assert len(plotly_bundle()) > 1_000_000  # the whole offline bundle, not a stub
    katex = katex_bundle()
    if katex is None:
        pytest.skip("no KaTeX in the installed packages: pages keep LaTeX source")
    assert not URL.search(katex.script)
    assert "window.katex=" in katex.script and "export" not in katex.script[-200:]


def test_a_trajectory_page_carries_katex_once_and_no_plotly():
    page = hx.trajectory_html(hostile_item())  # its steps hold math: $x^2$
    if katex_bundle() is not None:
        assert page.count("window.katex=") == 1
    assert "@font-face" not in page  # MathML: the browser's own math layout, no font inlined
    # the view in its srcdoc brings no copy of its own (the app's view would: dmKatex)
    assert "dmKatex=" not in page
    assert "Plotly.newPlot" not in page and len(page) < 1_500_000


def test_a_300_step_trajectory_stays_small():
    # README: a 300-step trajectory of one-line steps, a formula in each, is about 0.6 MB,
    # of which about 250 KB are KaTeX (once per file)
    steps = tuple(
        Step(i + 1, (i,) if i else (), f"So $x_{{{i + 1}}} = x_{{{i}}} + {i + 1}$, the total.")
        for i in range(300)
    )
    traj = Trajectory("m", "d", "1", 0, steps, problem_text="Find $x_{300}$.")
    rec = {"dead_ends": (), "final_correct": True, "class": "perfect", "n_nodes": 300}
    page = hx.trajectory_html(hx.ExportedTrajectory(traj, rec))
    katex = katex_bundle()
    own = len(page.encode()) - (len(katex.script.encode()) if katex else 0)
    assert own < 450_000 and len(page.encode()) < 700_000
    assert "data-nodes=&quot;300&quot;" in page


# --------------------------------------------------------------------------- selection


def test_select_rows_hand_worked():
    df = pd.DataFrame(
        {
            "class": ["incorrect", "perfect", "incorrect", "imperfect", "incorrect"],
            "dead_ends": [(1,), (), (1, 2, 3), (4, 5), ()],
        }
    )
    assert hx.select_rows(df, "incorrect-dead-ends", 10) == [2, 0]
    assert hx.select_rows(df, "incorrect", 10) == [2, 0, 4]
    assert hx.select_rows(df, "dead-ends", 2) == [2, 3]
    assert hx.select_rows(df, "imperfect", 10) == [3]
    assert hx.select_rows(df, "all", 3) == [0, 1, 2]
    assert hx.select_rows(df, "none", 3) == []
    with pytest.raises(DagMathError, match="unknown selection"):
        hx.select_rows(df, "best", 3)


def test_the_command_offers_every_selection():
    assert SELECT_CHOICES == tuple(hx.SELECTIONS)


# --------------------------------------------------------------------------- the report


@pytest.fixture(scope="module")
def bfs_corpus():
    return load_corpus([GSM_BFS])


def test_report_numbers_are_the_overview_tables(bfs_corpus):
    df = bfs_corpus.scored
    rows = hx.select_rows(df, "incorrect-dead-ends", 3)
    items = [hx.ExportedTrajectory(bfs_corpus.trajectory(r), df.iloc[r].to_dict()) for r in rows]
    page = hx.report_html(df, items, selection="incorrect-dead-ends")
    found = page_tables(page)

    board = tables.leaderboard(df, n_boot=1000)
    for name, expected in (
        ("leaderboard", tables.leaderboard_display(board)),
        ("table1", tables.table1_display(tables.table1(df))),
        ("class_counts", tables.class_counts_table(df)),
    ):
        assert found[name][0] == [str(c) for c in expected.columns], name
        want = [[shown(v) for v in row] for row in expected.itertuples(index=False)]
        assert found[name][1:] == want, name
    # the bundled gsm-bfs data: 26 problems, 26 trajectories, every answer right
    # 26 of 26 problems right: the Wilson bound at n = 26 with t(0.975, 25) = 2.0595 is
    # 26 / (26 + 2.0595²) = 86.0 % (README, Definitions: never the point [100, 100])
    assert found["leaderboard"][1][2:5] == ["26", "26", "100.0% [86.0, 100.0%]"]
    assert page.count("Plotly.newPlot") >= 3 and page.count("window.PlotlyConfig") <= 1
    assert not URL.search(page)


def test_report_links_each_section_from_its_table(bfs_corpus):
    df = bfs_corpus.scored
    rows = hx.select_rows(df, "dead-ends", 2)
    items = [hx.ExportedTrajectory(bfs_corpus.trajectory(r), df.iloc[r].to_dict()) for r in rows]
    page = hx.report_html(df, items, selection="dead-ends")
    listed = page_tables(page)["trajectories"]
    assert [r[0] for r in listed[1:]] == ["1", "2"]
    for i, row in enumerate(rows, start=1):
        assert f'<a href="#t-{i}">{i}</a>' in page and f'id="t-{i}"' in page
        assert listed[i][3] == str(df.iloc[row]["problem_id"])
    assert page.count('class="dm-view"') == 2


# --------------------------------------------------------------------------- the command


def test_export_html_of_the_longest_real_chain(tmp_path):
    root = need_thought_anchors()
    longest = max(
        len(json.loads(p.read_text(encoding="utf-8")))
        for p in root.glob("*/*/*/chunks_labeled.json")
    )
    out = tmp_path / "chain.html"
    assert main(["export-html", str(root), "--longest", "-o", str(out), "-q"]) == 0
    page = out.read_text(encoding="utf-8")
    assert not URL.search(page)
    assert f"data-nodes=&quot;{longest}&quot;" in page  # the view, inside srcdoc
    assert page.count('class="dm-view"') == 1
    # its source from the data folder named down: no folder of this machine above it
    name = next(p for p in root.glob("*/*/*/chunks_labeled.json")
                if len(json.loads(p.read_text(encoding="utf-8"))) == longest)  # fmt: skip
    assert f"<code>thought-anchors/{name.relative_to(root).as_posix()}</code>" in page
    assert str(root.parent) not in page


def test_export_html_refuses_an_ambiguous_choice(tmp_path, capsys):
    out = tmp_path / "x.html"
    assert main(["export-html", str(GSM_BFS), "-o", str(out)]) == 2
    assert "26 trajectories match" in capsys.readouterr().err and not out.exists()
    assert main(["export-html", str(GSM_BFS), "--problem", "nope", "-o", str(out)]) == 3


def test_export_html_report_command(tmp_path):
    out = tmp_path / "report.html"
    code = main(["export-html", str(GSM_BFS), "--report", "--select", "all", "--limit", "2",
                 "-o", str(out), "-q"])  # fmt: skip
    assert code == 0
    page = out.read_text(encoding="utf-8")
    assert page.count('class="dm-view"') == 2 and not URL.search(page)
    assert "<title>Run report: gsm-bfs</title>" in page and str(REPO) not in page
    assert "<code>gsm-bfs/gsm-logic/problem_" in page


# --------------------------------------------------------------------------- comparison


def _side(model: str, texts: list[str], dead: tuple, correct: bool) -> hx.ExportedTrajectory:
    steps = tuple(Step(i + 1, (i,) if i else (), t) for i, t in enumerate(texts))
    traj = Trajectory(model, "d", "7", 0, steps, problem_text="Find y.")
    rec = {"model": model, "dataset": "d", "problem_id": "7", "sample_id": 0,
           "class": "perfect" if correct else "incorrect", "dead_ends": dead,
           "final_correct": correct, "closeness_rate": 1.0, "n_nodes": len(steps),
           "n_edges": len(steps) - 1, "density": 0.5}  # fmt: skip
    return hx.ExportedTrajectory(traj, rec)


def test_a_comparison_is_the_compare_page_in_one_file():
    # align_texts' own example: "x = 2" = "x = 2" (statement), "done: 5" ≈ "then 5" (math),
    # "so y = 3" only in A: 2 pairs, 3 rows
    a = _side(HOSTILE, ["x = 2", "so y = 3", "done: 5"], (), True)
    b = _side("m<b>", ["x = 2", "then 5"], (), False)
    page = hx.comparison_html(a, b, names=("A: " + HOSTILE, "B: m<b>"))
    assert not URL.search(page) and "<script>window.__pwned" not in page
    assert page.count('<iframe class="dm-view"') == 2 and page.count('class="dm-aligned"') == 1
    assert "data-pairs=&quot;2&quot; data-rows=&quot;3&quot;" in page
    # the graphs: 3 and 2 steps, one layout and one scale for both
    assert "data-nodes=&quot;3&quot;" in page and "data-nodes=&quot;2&quot;" in page
    assert "One layout (layered) and one scale (100 %) for both." in page
    found = page_tables(page)
    assert found["facts-a"][1] == ["Final answer", "correct"]
    assert found["facts-b"][1] == ["Final answer", "wrong"]
    assert found["facts-b"][4] == ["Steps / edges", "2 / 1"]
    with pytest.raises(DagMathError, match="B: the steps cannot be shown: gone"):
        hx.comparison_html(a, hx.ExportedTrajectory(None, b.record, (), "gone"))


def test_export_html_compare_command(tmp_path, capsys):
    run = REPO / "sample_data" / "runs"
    out = tmp_path / "cmp.html"
    base = ["export-html", str(run), "--dataset", "gsm-logic", "--problem", "26", "-o", str(out)]
    assert main([*base, "--compare", "--model", "gsm-dfs", "--model", "gsm-overlap", "-q"]) == 0
    page = out.read_text(encoding="utf-8")
    assert not URL.search(page)
    steps = {  # the steps of problem 26 in each model's file, counted from the file
        m: len(json.loads((run / m / "gsm-logic" / "problem_26_all_samples.json").read_text())[0]
               ["steps"])
        for m in ("gsm-dfs", "gsm-overlap")
    }  # fmt: skip
    found = page_tables(page)
    assert found["facts-a"][4][1].startswith(f"{steps['gsm-dfs']} / ")
    assert found["facts-b"][4][1].startswith(f"{steps['gsm-overlap']} / ")
    assert "A: gsm-dfs · sample 0" in page and "B: gsm-overlap · sample 0" in page
    capsys.readouterr()
    # one side named twice over, or two sides without --compare: usage errors
    assert main([*base, "--compare", "--model", "gsm-dfs"]) == 2
    assert "same trajectory" in capsys.readouterr().err
    assert main([*base, "--model", "gsm-dfs", "--model", "gsm-overlap"]) == 2
    assert "only --compare takes two sides" in capsys.readouterr().err
