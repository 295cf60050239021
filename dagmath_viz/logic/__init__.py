"""Reasoning efficiency through logic programs (the second paper; DEFINITIONS.md §6-§7).

Stages, one module each:

- ``program``: terms, atoms (cont, comp, transfer, rate, compeq), queries, programs.
- ``rules``: the inference rules (1a)-(6), the closure and the consistency check.
- ``proofs``: proofs as hyperpaths and the exact shortest proof (fewest vertices).
- ``chaining``: forward chaining with a DFS, BFS or goal-aware (overlap) agenda.
- ``generator``: seeded word problems with a unique shortest proof and irrelevant axioms.
- ``verbalize``: templates for every atom, and a linear-time parser back to theorems.
- ``efficiency``: efficiency, search-order distance, report tables.
- ``records``: problem and proof JSON records; running a simulated reasoner on a problem.
- ``export``: DAG-MATH trajectories and a drawable proof graph.
- ``cli``: the ``dagmath gsm`` command.
"""

from dagmath_viz.logic.chaining import POLICIES, ChainResult, forward_chain, overlap_score
from dagmath_viz.logic.efficiency import (
    STRATEGIES,
    Efficiency,
    efficiency,
    efficiency_table,
    format_table,
    levenshtein,
    model_proof_summary,
    normalized_levenshtein,
    overlap_bars_note,
    search_order_distance,
)
from dagmath_viz.logic.export import (
    GraphNode,
    ProofGraph,
    export_trajectories,
    proof_graph,
    trajectory_sample,
)
from dagmath_viz.logic.generator import (
    IRRELEVANT,
    OVERLAPS,
    GenerationError,
    GeneratorConfig,
    Problem,
    generate_problem,
    generate_problems,
)
from dagmath_viz.logic.program import (
    Agent,
    Atom,
    Comp,
    CompEq,
    Cont,
    Program,
    ProgramError,
    Query,
    Rate,
    Rel,
    Transfer,
    agent,
    atom_from_dict,
    atom_to_dict,
    comparison,
    relation,
)
from dagmath_viz.logic.proofs import (
    Proof,
    ProofStep,
    certify_unique_shortest,
    shortest_proof,
    shortest_proofs,
)
from dagmath_viz.logic.records import (
    LoadedProblem,
    ProblemChoice,
    problem_choices,
    problem_from_record,
    problem_to_record,
    proofs_of,
    read_jsonl,
    solve_record,
    write_jsonl,
)
from dagmath_viz.logic.rules import Closure, Hyperedge, check_consistency, closure
from dagmath_viz.logic.verbalize import (
    ParseResult,
    parse_proof,
    parse_question,
    parse_sentence,
    verbalize,
    verbalize_question,
)

__all__ = [
    "IRRELEVANT",
    "OVERLAPS",
    "POLICIES",
    "STRATEGIES",
    "Agent",
    "Atom",
    "ChainResult",
    "Closure",
    "Comp",
    "CompEq",
    "Cont",
    "Efficiency",
    "GenerationError",
    "GeneratorConfig",
    "GraphNode",
    "Hyperedge",
    "LoadedProblem",
    "ProblemChoice",
    "ParseResult",
    "Problem",
    "Program",
    "ProgramError",
    "Proof",
    "ProofGraph",
    "ProofStep",
    "Query",
    "Rate",
    "Rel",
    "Transfer",
    "agent",
    "atom_from_dict",
    "atom_to_dict",
    "certify_unique_shortest",
    "check_consistency",
    "closure",
    "comparison",
    "relation",
    "efficiency",
    "efficiency_table",
    "export_trajectories",
    "format_table",
    "forward_chain",
    "generate_problem",
    "generate_problems",
    "levenshtein",
    "model_proof_summary",
    "normalized_levenshtein",
    "overlap_bars_note",
    "overlap_score",
    "parse_proof",
    "parse_question",
    "parse_sentence",
    "problem_choices",
    "problem_from_record",
    "problem_to_record",
    "proofs_of",
    "proof_graph",
    "read_jsonl",
    "search_order_distance",
    "shortest_proof",
    "shortest_proofs",
    "solve_record",
    "trajectory_sample",
    "verbalize",
    "verbalize_question",
    "write_jsonl",
]
