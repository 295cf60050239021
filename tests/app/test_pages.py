"""AppTest of every page: runs clean on real and sample data, and reacts to its widgets.

Numbers shown are compared with the library's own functions on the same data (the pages
must only wire widgets to them) and, where the data are real, with hand-counted values.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dagmath_viz.analysis.deadends import dead_end_table
from dagmath_viz.run.corpus import load_corpus
from tests.app.helpers import PAGES, app_on, choice, on_page
from tests.logcount import write_logcount

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(scope="module")
def logcount_run(tmp_path_factory) -> Path:
    """Two models on the log-count problem: A writes all three walks, B the perfect one twice."""
    return write_logcount(tmp_path_factory.mktemp("logcount"))


@pytest.fixture(autouse=True)
def _fresh_caches():
    st.cache_resource.clear()
    st.cache_data.clear()
    yield


def _app(monkeypatch, data: Path | None) -> AppTest:
    return app_on(monkeypatch, data)


_run_page = on_page


# --- every page runs on every data source -----------------------------------------------


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_on_real_fewshot_data(monkeypatch, shared_data, page):
    at = _app(monkeypatch, shared_data)
    _run_page(at, page)
    assert at.title, f"{page} shows no title"


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_on_logcount_data(monkeypatch, logcount_run, page):
    at = _app(monkeypatch, logcount_run)
    _run_page(at, page)
    assert at.title


@pytest.mark.parametrize("page", PAGES)
def test_page_runs_on_bundled_sample_data(monkeypatch, page):
    at = _app(monkeypatch, None)
    assert at.radio(key="data_source").value == "Bundled sample data"
    _run_page(at, page)
    assert at.title


# --- one interaction per page -----------------------------------------------------------


def _array(value) -> list[float]:
    """A plotly array: a plain list, or plotly 7's typed {"dtype", "bdata"} encoding."""
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).tolist()
    return list(value)


def _table_with(at: AppTest, column: str):
    """The first dataframe shown that has ``column`` (the load-problems panel may come first)."""
    for frame in at.dataframe:
        if column in frame.value.columns:
            return frame.value
    raise AssertionError(f"no table with a {column!r} column")


def _cell(frame, column: str, **where) -> object:
    rows = frame
    for key, value in where.items():
        rows = rows[rows[key] == value]
    assert len(rows) == 1, (where, rows)
    return rows.iloc[0][column]


def test_overview_switching_source_changes_the_leaderboard(monkeypatch, shared_data, logcount_run):
    at = _app(monkeypatch, logcount_run)
    board = _table_with(at, "PASS@1 (95% CI)")
    # model-a: 2 of 3 correct, 1 perfect -> PASS@1 66.7%, R̂ 33.3%; model-b: both perfect.
    assert _cell(board, "PASS@1 (95% CI)", model="model-a").startswith("66.7%")
    assert _cell(board, "R̂ (95% CI)", model="model-a").startswith("33.3%")
    assert _cell(board, "R̂ (95% CI)", model="model-b").startswith("100.0%")
    at.radio(key="data_source").set_value("Bundled sample data").run()
    assert not at.exception
    engine = load_corpus([Path(APP).parent / "sample_data" / "runs"]).scored
    boards = [f.value for f in at.dataframe if "PASS@1 (95% CI)" in f.value.columns]
    shown = set(boards[0]["model"])
    # the models' leaderboard, then the logic-program strategies' own table (gsm export's
    # trajectories, domain gsm-logic: sample_data/README.md), under a note saying so
    strategies = {m for m in engine["model"] if m.startswith("gsm-")}
    assert shown == set(engine["model"]) - strategies and "model-a" not in shown
    assert len(strategies) == 4 and set(boards[1]["model"]) == strategies
    assert any("not ranked beside models" in c.value for c in at.caption)


def test_trajectory_picking_a_problem_shows_its_numbers(monkeypatch, shared_data):
    at = _app(monkeypatch, shared_data)
    _run_page(at, "pages/trajectory.py")
    choice(at, "traj_model").set_value("gold").run()
    choice(at, "traj_problem").set_value("4").run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    # gold/problem_4.json has 38 steps; its parent lists have 2+2+2+3+1+2+2+1+1+1+3+1+2+1
    # +1+3+1+1+1+1+2+3+1+2+1+2+2+3+1+6+1+2+5+1+1 = 65 entries (steps 4..38).
    assert metrics["Steps / edges"] == "38 / 65"
    assert metrics["Dead ends"] == "0"
    assert any("-badge[perfect]" in m.value for m in at.markdown)
    # problem 4 is the last: "Next ▶" is off (no silent wrap-around), "◀ Prev" goes to 3
    prev, nxt = at.button[0], at.button[1]
    assert nxt.label == "Next ▶" and nxt.disabled and not prev.disabled
    prev.click().run()
    assert choice(at, "traj_problem").value == "3"
    assert not at.button[1].disabled


def test_trajectory_shows_gold_coverage_beside_gold_files(monkeypatch, shared_data):
    """The authors' few-shot solution of problem 1 is its gold DAG in the other layout
    (22 nodes, gold/problem_1.json): it states all 22, no extra step, none skipped. The
    gold file itself gets no such line."""
    at = _app(monkeypatch, shared_data)
    _run_page(at, "pages/trajectory.py")
    choice(at, "traj_model").set_value("dagmath-authors-fewshot").run()
    choice(at, "traj_problem").set_value("1").run()
    lines = [c.value.replace("\\", "") for c in at.caption if "Gold DAG" in c.value]
    assert len(lines) == 1
    assert "states 22 of 22 gold nodes (100.0%), 0 extra steps, 0 gold nodes skipped" in lines[0]
    choice(at, "traj_model").set_value("gold").run()
    assert not [c for c in at.caption if "Gold DAG" in c.value]
    assert not at.exception


def test_trajectory_deep_link_and_dead_end_marking(monkeypatch, logcount_run):
    monkeypatch.setenv("DAGMATH_DATA", str(logcount_run))
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(model="model-a", dataset="logs", problem="1", sample="1")
    at.run()
    _run_page(at, "pages/trajectory.py")
    metrics = {m.label: m.value for m in at.metric}
    # The imperfect walk v1..v7 v9 v8 v10: only v9 (step 8) is a dead end; r = 9/10.
    assert any("-badge[imperfect]" in m.value for m in at.markdown)
    assert metrics["Dead ends"] == "1"
    assert metrics["Closeness rate"] == "90.0%"
    html = [e for e in at.get("iframe")][0].proto.srcdoc
    assert '"kind": "dead_end"' in html


def test_compare_paired_difference_matches_engine(monkeypatch, logcount_run):
    at = _app(monkeypatch, logcount_run)
    _run_page(at, "pages/compare.py")
    table = _table_with(at, "difference")
    # One shared problem: R̂(A) - R̂(B) = 1/3 - 1 = -66.7%.
    assert _cell(table, "difference", metric="R̂(A) − R̂(B)") == "-66.7%"
    at.selectbox(key="cmp_a").set_value("model-b").run()
    table = _table_with(at, "difference")
    assert _cell(table, "difference", metric="R̂(A) − R̂(B)") == "66.7%"
    assert _cell(table, "difference", metric="PASS@1(A) − PASS@1(B)") == "33.3%"


def test_compare_paired_outcomes_by_hand(monkeypatch, logcount_run):
    """model-a: perfect, imperfect, wrong (2 of 3 right, 1 of 3 perfect); model-b: perfect
    twice. On the one problem: answers both right (2/3 and 2/2 are majorities), perfect
    reasoning only B (1/3 is not)."""
    at = _app(monkeypatch, logcount_run)
    _run_page(at, "pages/compare.py")
    counts = _table_with(at, "only A")
    assert counts.loc["answer"].tolist() == [1, 0, 0, 0]
    assert counts.loc["perfect reasoning"].tolist() == [0, 0, 1, 0]
    at.radio(key="cmp_cell_measure").set_value("perfect").run()
    at.radio(key="cmp_cell").set_value("only_b").run()
    rows = _table_with(at, "a_prr")
    assert rows["problem_id"].tolist() == ["1"]
    assert rows["a_prr"].tolist() == ["33.3%"] and rows["b_prr"].tolist() == ["100.0%"]
    at.radio(key="cmp_cell").set_value("only_a").run()
    assert _table_with(at, "a_prr").empty
    assert not at.exception


def test_compare_opens_paired_outcomes_on_a_cell_with_problems(monkeypatch, logcount_run):
    """As above: answers both right (1 problem), perfect reasoning only B. The cell shown is
    one that has the problem, never an empty "both right (0)", unless the user picks one."""
    at = _app(monkeypatch, logcount_run)
    _run_page(at, "pages/compare.py")
    assert at.radio(key="cmp_cell").value == "both"
    assert _table_with(at, "a_prr")["problem_id"].tolist() == ["1"]
    at.radio(key="cmp_cell_measure").set_value("perfect").run()
    assert at.radio(key="cmp_cell").value == "only_b"  # "both right" is 0 on this measure
    assert _table_with(at, "a_prr")["problem_id"].tolist() == ["1"]
    at.radio(key="cmp_cell").set_value("neither").run()  # the user's own pick stays
    assert at.radio(key="cmp_cell").value == "neither" and _table_with(at, "a_prr").empty
    assert not at.exception


@pytest.fixture(scope="module")
def one_model_run(tmp_path_factory) -> Path:
    """One model (model-a's three walks of the log-count problem), as a Thought Anchors
    folder is: one model, a correct and an incorrect chain per problem."""
    runs = {"model-a": ["perfect", "imperfect", "wrong"]}
    return write_logcount(tmp_path_factory.mktemp("one_model"), runs)


def test_compare_with_one_model_puts_two_of_its_samples_side_by_side(monkeypatch, one_model_run):
    at = _app(monkeypatch, one_model_run)
    _run_page(at, "pages/compare.py")
    assert not any("at least two" in i.value for i in at.info)
    assert any("One model is loaded (model-a)" in c.value.replace("\\", "") for c in at.caption)
    samples = [s.value for s in at.selectbox if s.label == "Sample"]
    # by default the first correct sample (0, the perfect walk) beside the first incorrect
    # one (2, the wrong walk)
    assert samples == [0, 2]
    shown = [c.value for c in at.caption]
    assert any(c.startswith("perfect · answer correct · closeness 100.0% · 0 dead ends · 9 steps")
               for c in shown)  # fmt: skip
    # the wrong walk v1 v2 v3 v6 v7 v9 v11: v2 is its one dead end, closeness 6/7
    assert any(c.startswith("incorrect · answer wrong · closeness 85.7% · 1 dead end · 7 steps")
               for c in shown)  # fmt: skip
    # the aligned steps, then the two graphs
    frames = [f.proto.srcdoc for f in at.get("iframe")]
    assert len(frames) == 3
    assert 'class="aligned"' in frames[0] and all("dm-root" in f for f in frames[1:])
    # perfect v1 v2 v3 v4 v5 v6 v7 v8 v10 against wrong v1 v2 v3 v6 v7 v9 v11: the five
    # nodes both state, in order, are joined; v4 v5 only A (two rows), then A's v8 v10
    # face B's v9 v11 (two rows, not joined)
    assert frames[0].count('class="row pair"') == 5
    assert frames[0].count('class="row only"') == 4
    # paired outcomes of the two samples: the perfect walk (0) against the imperfect one (1)
    assert [s.value for s in at.selectbox if s.label.startswith("Sample as")] == [0, 1]
    # across problems needs two models: not shown
    assert not any(h.value == "Across problems" for h in at.subheader)
    # each side keeps its own choice
    next(s for s in at.selectbox if s.label == "Sample").set_value(1).run()
    assert [s.value for s in at.selectbox if s.label == "Sample"] == [1, 2]


def test_distributions_statistic_choice_changes_the_plot(monkeypatch, shared_data):
    at = _app(monkeypatch, shared_data)
    _run_page(at, "pages/distributions.py")

    def plotted_values() -> list[float]:
        spec = json.loads(at.get("plotly_chart")[0].proto.spec)
        return sorted(v for trace in spec["data"] for v in _array(trace["y"]))

    # #nodes of the 4 solutions, twice (two layouts): 22, 25, 26, 38.
    assert plotted_values() == [22, 22, 25, 25, 26, 26, 38, 38]
    at.radio(key="dist_stat").set_value("max_in_degree").run()
    engine = load_corpus([shared_data]).scored["max_in_degree"]
    assert plotted_values() == sorted(engine.tolist())


def test_dead_ends_category_filter(monkeypatch, logcount_run):
    at = _app(monkeypatch, logcount_run)
    _run_page(at, "pages/dead_ends.py")
    table = _table_with(at, "category")
    corpus = load_corpus([logcount_run])
    engine = dead_end_table(corpus.trajectories)
    # Imperfect walk: v9 (step 8) is a derived leaf whose only ancestors lie on the answer's
    # path -> commentary. Wrong walk: v2 (step 2) is a given nothing cites -> unused given.
    assert len(table) == len(engine) == 2
    assert sorted(zip(table["category"], table["step_id"], strict=True)) == [
        ("commentary", 8),
        ("unused given", 2),
    ]
    at.multiselect(key="de_cats").set_value(["unused given"]).run()
    filtered = _table_with(at, "category")
    assert list(filtered["category"]) == ["unused given"]
    assert list(filtered["step_id"]) == [2]


def test_efficiency_strategy_choice_shows_that_proofs_numbers(monkeypatch):
    at = _app(monkeypatch, None)
    _run_page(at, "pages/efficiency.py")
    gsm = Path(APP).parent / "sample_data" / "gsm"
    proofs = [json.loads(line) for line in (gsm / "proofs.jsonl").open()]
    pid = choice(at, "eff_problem").value
    for strategy in ("shortest", "bfs"):
        choice(at, "eff_strategy").set_value(strategy).run()
        assert not at.exception
        record = next(
            p for p in proofs if str(p["problem_id"]) == pid and p["strategy"] == strategy
        )
        shown = {m.label: m.value for m in at.metric}["Efficiency"]
        assert shown == f"{100 * record['efficiency']:.1f}%"
    # The shortest strategy's proof is the shortest proof: efficiency exactly 1.
    choice(at, "eff_strategy").set_value("shortest").run()
    assert {m.label: m.value for m in at.metric}["Efficiency"] == "100.0%"
    html = at.get("iframe")[0].proto.srcdoc
    assert '"kind": "goal"' in html


def test_efficiency_chart_says_how_few_problems_each_bar_holds(monkeypatch):
    """The bundled set has two problems per structure × overlap cell, each overlap its own
    (sample_data/README.md): the chart's caption says so under every structure."""
    at = _app(monkeypatch, None)
    _run_page(at, "pages/efficiency.py")
    for structure in ("trees", "axiom"):
        at.radio(key="eff_structure").set_value(structure).run()
        assert not at.exception
        captions = [c.value for c in at.caption]
        assert any(
            c.startswith("Each bar is the mean over 2 problems, and each overlap has problems")
            for c in captions
        ), captions
    assert any("counts in efficiency's |P|" in c.value for c in at.caption)


def test_dead_ends_by_tag_says_when_steps_carry_no_tags(monkeypatch, logcount_run):
    at = _app(monkeypatch, logcount_run)
    _run_page(at, "pages/dead_ends.py")
    (section,) = [e for e in at.expander if e.label == "Dead ends by step tag"]
    assert any("carry no tags" in c.value for c in section.caption)
    assert not section.get("plotly_chart")


def test_compare_opens_on_two_models_of_the_most_shared_dataset(monkeypatch):
    """The bundled data: gsm-bfs and gsm-dfs sort first but share only the logic set;
    six simulated models share arith-word and olympiad-lite, so the page opens on the
    first two of those by name, on arith-word."""
    at = _run_page(_app(monkeypatch, None), "pages/compare.py")
    assert at.multiselect(key="cmp_models").value == ["sim-focus-2.4", "sim-focus-2.5"]
    assert choice(at, "cmp_dataset").value == "arith-word"


def test_trajectory_view_control_offers_the_step_fields_and_the_pyvis_drawing(monkeypatch):
    """On a Thought Anchors chain the View popover offers the chunks' numeric fields as a
    bar, "tag" as a stripe and the summary as row text; the pyvis drawing replaces the view."""
    from tests import thought_anchors
    from tests.test_layout import _require_shared

    _require_shared(thought_anchors.ROOT)
    at = _app(monkeypatch, thought_anchors.ROOT)
    _run_page(at, "pages/trajectory.py")
    assert not at.exception
    bar = at.selectbox(key="traj_view_bar")
    # the chunk fields every chain has, read from a chunks_labeled.json: all numbers but
    # `summary` (text); chunk, chunk_idx, depends_on and function_tags are the step itself
    first = json.loads(thought_anchors.files()[0].read_text(encoding="utf-8"))[0]
    numeric = [k for k, v in first.items() if isinstance(v, float)]
    assert set(numeric) <= set(bar.options) and "summary" not in bar.options
    # importance is shown on arrival: the source's counterfactual importance (a chunk key)
    assert "counterfactual_importance_accuracy" in first
    assert bar.value == "counterfactual_importance_accuracy"
    html = at.get("iframe")[0].proto.srcdoc
    assert '"bar": {"field": "counterfactual_importance_accuracy"' in html
    assert at.selectbox(key="traj_view_colour").options == ["kind only", "tag"]
    bar.set_value("forced_importance_kl").run()
    at.selectbox(key="traj_view_colour").set_value("tag").run()
    html = at.get("iframe")[0].proto.srcdoc
    assert '"bar": {"field": "forced_importance_kl"' in html and '"tag_stripe": true' in html
    at.radio(key="traj_view_engine").set_value("Layers through pyvis (vis-network)").run()
    assert not at.exception
    html = at.get("iframe")[0].proto.srcdoc
    assert 'data-view="vis"' in html and "new vis.Network" in html
    assert "Bar: forced_importance_kl" in html


def test_distributions_shows_figure_3_means_by_difficulty(monkeypatch, tmp_path):
    # Two trajectories of one model: a 2-step chain at difficulty 1 and a 3-step chain at
    # difficulty 2. Figure 3's #nodes panel: mean 2 in group 1, 3 in group 2.
    def step(i: int, parents: list[int] | None) -> dict:
        return {"step_id": i, "thinking": "t", "direct_dependent_steps": parents, "text": f"s{i}"}

    chain2 = [step(1, None), step(2, [1])]
    chain3 = [step(1, None), step(2, [1]), step(3, [2])]
    folder = tmp_path / "m" / "d"
    folder.mkdir(parents=True)
    for pid, steps, difficulty in (("1", chain2, 1.0), ("2", chain3, 2.0)):
        record = {"problem_id": pid, "sample_id": 0, "problem_text": "p", "steps": steps,
                  "difficulty": difficulty}  # fmt: skip
        (folder / f"problem_{pid}_all_samples.json").write_text(json.dumps([record]))
    at = _app(monkeypatch, tmp_path)
    _run_page(at, "pages/distributions.py")
    assert any("Figure 3" in h.value for h in at.subheader)
    figure = next(
        json.loads(c.proto.spec)
        for c in at.get("plotly_chart")
        if "Graph statistics by difficulty" in json.loads(c.proto.spec)["layout"]["title"]["text"]
    )
    # plotly express names each trace's panel in its hover text
    nodes = next(t for t in figure["data"] if "statistic=#nodes<" in t["hovertemplate"])
    assert _array(nodes["x"]) == [1, 2]
    assert _array(nodes["y"]) == [2.0, 3.0]
