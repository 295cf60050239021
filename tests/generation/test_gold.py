"""`dagmath gold` end to end against a scripted model, and its stage checks."""

from __future__ import annotations

import csv
import json
import threading
from collections import defaultdict

import pytest
from gen_fake_server import Action, error, reply
from gen_helpers import run_cli

from dagmath_viz.generation.gold_checks import (
    arithmetic_fault,
    check_edges,
    check_parents,
    novel_numbers,
)
from dagmath_viz.generation.prompts import EDGES_PROMPT, NODES_PROMPT, PARENTS_PROMPT

# A rectangle problem: nodes as a model would write them from the reference solution.
GOOD_NODES = [
    "The rectangle's perimeter is $20$.",
    "The rectangle's length is $6$.",
    "The length plus the width is $10$.",
    "Rectangles have four right angles.",  # contributes nothing: pruned in stage 2
    "The width is $10 - 6 = 4$.",
    "The area is $6 \\times 4 = 24$.",
    "The final answer is $\\boxed{24}$.",
]
GOOD_PARENTS = [None, None, [1], [1], [2, 3], [2, 5], [6]]
# after pruning node 4, the six kept nodes and their renumbered parents
KEPT_PARENTS = [None, None, [1], [2, 3], [2, 4], [5]]
GOOD_EDGES = [
    "The problem states the perimeter.",
    "The problem states the length.",
    "Half of the perimeter in Step 1 is the sum of two sides.",
    "Subtract the length of Step 2 from the sum in Step 3.",
    "Multiply the length from Step 2 by the width from Step 4.",
    "Step 5 is the quantity asked for.",
]


def _problem(i: int) -> dict:
    return {
        "problem_id": i,
        "problem": f"R{i}: A rectangle has perimeter $20$ and length $6$. What is its area?",
        "solution": "The width is 10 - 6 = 4, so the area is 6 x 4 = 24.",
        "answer": "24",
        "difficulty": 0.25,
    }


class GoldModel:
    """Plays the three stages; ``plan[(problem, stage)]`` lists bad answers to give first."""

    def __init__(self, plan: dict[tuple[int, str], list[str]], refuse: bool = False) -> None:
        self.plan = plan
        self.refuse = refuse
        self.count: dict[tuple[int, str], int] = defaultdict(int)
        self.models: dict[str, set[str]] = defaultdict(set)
        self.lock = threading.Lock()

    def __call__(self, body: dict) -> Action:
        if "response_format" in body:
            if self.refuse:
                return error(400, "response_format is not supported")
            name = body["response_format"]["json_schema"]["name"]
            stage = {"GoldNodes": "nodes", "GoldParents": "parents", "GoldEdges": "edges"}[name]
        else:  # plain text: tell the stages apart by their system prompts
            system = body["messages"][0]["content"]
            stage = next(
                stage
                for stage, prompt in (
                    ("nodes", NODES_PROMPT),
                    ("parents", PARENTS_PROMPT),
                    ("edges", EDGES_PROMPT),
                )  # fmt: skip
                if system == prompt
            )
        self.models[stage].add(body["model"])
        user = body["messages"][-1]["content"]
        i = int(user.split("R", 1)[1].split(":", 1)[0])
        with self.lock:
            k = self.count[(i, stage)]
            self.count[(i, stage)] += 1
        plan = self.plan.get((i, stage), [])
        bad = plan[k] if k < len(plan) else None
        if plan and plan[-1] == "always-wrong-answer":
            bad = "wrong-answer"
        if bad == "500":
            return error(500)
        if stage == "nodes":
            nodes = list(GOOD_NODES)
            if bad == "wrong-answer":
                nodes[-1] = "The final answer is $\\boxed{25}$."
            elif bad == "bad-arithmetic":
                nodes[5] = "The area is $6 \\times 4 = 26$."
            return reply(json.dumps({"nodes": nodes}))
        if stage == "parents":
            parents = [list(p) if p else None for p in GOOD_PARENTS]
            if bad == "forward-parent":
                parents[2] = [5]
            entries = [
                {"step_id": k + 1, "direct_dependent_steps": p} for k, p in enumerate(parents)
            ]
            return reply(json.dumps({"parents": entries}))
        edges = list(GOOD_EDGES)
        if bad == "new-fact":
            edges[4] = "Multiply Step 2 by Step 4 and add 17 for good measure."
        entries = [{"step_id": k + 1, "edge": e} for k, e in enumerate(edges)]
        return reply("```json\n" + json.dumps({"edges": entries}) + "\n```")


def test_gold_three_stages_with_rejections_then_score(tmp_path, serve, fast_backoff, capsys):
    problems = tmp_path / "rect.jsonl"
    problems.write_text("".join(json.dumps(_problem(i)) + "\n" for i in (1, 2, 3)))
    plan = {
        (1, "nodes"): ["wrong-answer", "bad-arithmetic"],
        (1, "parents"): ["forward-parent"],
        (1, "edges"): ["new-fact"],
        (2, "nodes"): ["500"],
        (3, "nodes"): ["always-wrong-answer"],
    }
    model = GoldModel(plan)
    server = serve(model)
    out = tmp_path / "gold"
    args = ("gold", problems, "--base-url", server.base_url, "--model", "writer",
            "--edge-model", "justifier", "--concurrency", "2", "--stage-attempts", "3",
            "-o", out)  # fmt: skip
    assert run_cli(*args) == 4  # problem 3 never gets the answer right
    err = capsys.readouterr().err
    assert "2 of 3 problems have a gold DAG" in err
    assert model.models["edges"] == {"justifier"}
    assert model.models["nodes"] == model.models["parents"] == {"writer"}

    # the failures file says which stage gave up and why
    with open(out / "failures.csv") as handle:
        (row,) = csv.DictReader(handle)
    assert (row["problem_id"], row["stage"], row["attempts"]) == ("3", "nodes", "3")
    assert row["reason"] == "the final answer '25' is not the reference"

    # the manifest lists every stage's attempts and each rejection's reason
    (manifest_file,) = (out / ".dagmath" / "runs").glob("*-gold.json")
    stages = json.loads(manifest_file.read_text())["stages"]
    assert stages["1"]["nodes"] == {
        "attempts": 3,
        "rejections": [
            "the final answer '25' is not the reference",
            "node 6: $6 \\times 4 = 26$ is false",
        ],
    }
    assert stages["1"]["parents"] == {
        "attempts": 2,
        "rejections": ["node 3: parent 5 is not an earlier node"],
    }
    assert stages["1"]["edges"]["rejections"] == [
        "node 5: the justification introduces 17, found in neither the node nor its parents"
    ]
    assert stages["2"]["nodes"] == {"attempts": 1, "rejections": []}  # the 500 was a resend

    gold = json.loads((out / "rect" / "problem_1.json").read_text())
    assert len(gold) == 1
    record = gold[0]
    assert list(record) == [
        "problem_id", "problem_text", "sample_id", "final_answer", "difficulty", "steps",
    ]  # fmt: skip
    assert record["final_answer"] == "24" and record["difficulty"] == 0.25
    assert [s["node"] for s in record["steps"]] == GOOD_NODES[:3] + GOOD_NODES[4:]
    assert [s["direct_dependent_steps"] for s in record["steps"]] == KEPT_PARENTS
    assert [s["edge"] for s in record["steps"]] == GOOD_EDGES
    assert all(
        list(s) == ["step_id", "edge", "direct_dependent_steps", "node"] for s in record["steps"]
    )
    assert not (out / "rect" / "problem_3.json").exists()

    # dagmath score reads the gold files as closed and correct
    scored = tmp_path / "scored.jsonl"
    assert run_cli("score", out, "-o", scored, "--no-cache", "-j", "1") == 0
    records = [json.loads(line) for line in scored.read_text().splitlines()]
    assert len(records) == 2
    assert all(r["closed"] and r["final_correct"] and r["class"] == "perfect" for r in records)

    # the rerun asks only about problem 3, from its first stage
    model.plan = {}
    before = dict(model.count)
    assert run_cli(*args) == 0
    asked = {
        key: n - before.get(key, 0) for key, n in model.count.items() if n != before.get(key, 0)
    }
    assert asked == {(3, "nodes"): 1, (3, "parents"): 1, (3, "edges"): 1}
    assert not (out / "failures.csv").exists()


def test_gold_falls_back_to_plain_text(tmp_path, serve, fast_backoff, capsys):
    problems = tmp_path / "rect.jsonl"
    problems.write_text(json.dumps(_problem(1)) + "\n")
    model = GoldModel({(1, "parents"): ["forward-parent"]}, refuse=True)
    server = serve(model)
    out = tmp_path / "gold"
    code = run_cli("gold", problems, "--base-url", server.base_url, "--model", "m", "-o", out)
    assert code == 0
    assert capsys.readouterr().err.count("refused response_format") == 1
    assert dict(model.count) == {(1, "nodes"): 1, (1, "parents"): 2, (1, "edges"): 1}
    (record,) = json.loads((out / "rect" / "problem_1.json").read_text())
    assert [s["direct_dependent_steps"] for s in record["steps"]] == KEPT_PARENTS


def test_gold_needs_solutions_and_answers(tmp_path, serve, fast_backoff, capsys):
    problems = tmp_path / "p.jsonl"
    problems.write_text(json.dumps({"problem_id": 1, "problem": "x", "answer": "1"}) + "\n")
    server = serve(GoldModel({}))
    code = run_cli("gold", problems, "--base-url", server.base_url, "--model", "m", "-o", tmp_path)
    assert code == 1
    assert (
        "needs 'solution' and 'answer' for every problem; missing for 1" in capsys.readouterr().err
    )
    assert server.chat_requests() == []


def test_gold_layout_matches_the_published_files(shared_data, tmp_path):
    from dagmath_viz.generation.gold import gold_record
    from dagmath_viz.generation.gold_checks import Graph
    from dagmath_viz.generation.problems import Problem

    published = json.loads((shared_data / "gold" / "problem_1.json").read_text())
    ours = gold_record(
        Problem(1, "p", answer="24"), Graph(("a", "b"), (None, (1,)), ()), ["e1", "e2"]
    )
    assert type(ours) is type(published) and len(ours) == len(published) == 1
    assert list(ours[0]) == list(published[0])
    assert list(ours[0]["steps"][0]) == list(published[0]["steps"][0])
    assert ours[0]["steps"][0]["direct_dependent_steps"] is None


# --------------------------------------------------------------------------- stage checks


@pytest.mark.parametrize(
    ("node", "fault"),
    [
        ("The width is $10 - 6 = 4$.", None),
        ("So $\\frac{3}{7} + \\frac{4}{7} = 1$.", None),
        ("Thus $2 \\cdot 24 = 48$ and $48 \\times 3 = 144$.", None),
        ("Thus $2 \\cdot 24 = 48$ and $48 \\times 3 = 154$.", "$48 \\times 3 = 154$ is false"),
        ("$\\sqrt{4} = 3$", "$\\sqrt{4} = 3$ is false"),
        ("$x + 1 = 5$", None),  # a variable: not arithmetic
        ("$3 \\ne 4$", None),
        ("$2^{10} = 1000$", None),  # powers are left alone
        ("no math here = 5", None),
        ("$1 = 1 = 2$", "$1 = 1 = 2$ is false"),
    ],
)
def test_arithmetic_fault(node, fault):
    assert arithmetic_fault(node) == fault


def _parents(*lists):
    return {
        "parents": [{"step_id": i, "direct_dependent_steps": p} for i, p in enumerate(lists, 1)]
    }


@pytest.mark.parametrize(
    ("parents", "reason"),
    [
        (_parents(None, [1], [3]), "node 3: parent 3 is not an earlier node"),
        (_parents(None, [1], [0]), "node 3: parent 0 is not an earlier node"),
        (_parents(None, [1]), "no parent list for node 3"),
        (_parents(None, [1], None), "the final node depends on nothing"),
        (_parents(None, [1, 1], [2]), "node 2: a parent is listed twice"),
        (_parents(None, "1", [2]), "node 2: parents must be a list of node ids or null"),
        ({"parents": [{"step_id": 9}]}, 'entry {"step_id": 9} does not name a node 1..3'),
        ({"nodes": []}, "no 'parents' list"),
    ],
)
def test_check_parents_rejections(parents, reason):
    assert check_parents(["a", "b", "c"], parents) == (None, reason)


def test_check_parents_prunes_and_renumbers():
    # 1 -> 3 -> 5, 2 -> 5, 4 depends on 1 but leads nowhere
    graph, reason = check_parents(list("abcde"), _parents(None, None, [1], [1], [2, 3]))
    assert reason is None
    assert graph.nodes == ("a", "b", "c", "e")
    assert graph.parents == (None, None, (1,), (2, 3))
    assert graph.pruned == (4,)


def test_check_edges_and_novel_numbers():
    graph, _ = check_parents(["$a = 12$", "$b = 12 + 30$"], _parents(None, [1]))
    ok = {"edges": [{"step_id": 1, "edge": "Given."}, {"step_id": 2, "edge": "Step 1 plus 30."}]}
    assert check_edges("a is 12", graph, ok) == (["Given.", "Step 1 plus 30."], None)
    bad = {"edges": [{"step_id": 1, "edge": "Given, 12."}, {"step_id": 2, "edge": "Add 99."}]}
    assert check_edges("a is 12", graph, bad)[1] == (
        "node 2: the justification introduces 99, found in neither the node nor its parents"
    )
    assert check_edges("", graph, {"edges": [{"step_id": 1, "edge": "x"}]})[1] == (
        "no justification for node 2"
    )
    assert novel_numbers("Steps 3 and 14 give 7 and 2.5", "") == ["2.5"]
