"""What every baseline shares: the forward graph, residency windows, and turning S into a Schedule.

Baselines fix the checkpoint matrix S and take the least recomputation R for it (``solve_r``, paper
appendix B). The forward graph is the subgraph of units not marked ``backward``; its topological order is
the DAG's unit order.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ...errors import RemcError
from ...ir.dag import DAG
from ...ir.schedule import Schedule, pin_no_recompute, solve_r


def forward_units(dag: DAG) -> np.ndarray:
    """int64[k]: the forward units in topological order."""
    return np.flatnonzero(~dag.backward)


def forward_edges(dag: DAG) -> np.ndarray:
    """int64[m, 2]: the edges between two forward units."""
    e = dag.edges
    return e[~dag.backward[e[:, 0]] & ~dag.backward[e[:, 1]]]


def linear_chain(dag: DAG) -> tuple[np.ndarray | None, str]:
    """(forward units, "") when the forward graph is one path f_0 -> f_1 -> ... in topological order,
    else (None, the first reason it is not)."""
    fwd = forward_units(dag)
    expected = {(int(a), int(b)) for a, b in zip(fwd[:-1], fwd[1:])}
    for a, b in forward_edges(dag).tolist():
        if (a, b) not in expected:
            skipped = [dag.names[v] for v in fwd[(fwd > a) & (fwd < b)][:1]]
            return None, f"forward edge {dag.names[a]!r} -> {dag.names[b]!r} skips {skipped[0]!r}"
        expected.discard((a, b))
    if expected:
        a, b = min(expected)
        return None, f"forward unit {dag.names[b]!r} does not use {dag.names[a]!r} (two disconnected pieces)"
    return fwd, ""


def require_linear(dag: DAG, strategy: str) -> np.ndarray:
    """The forward chain, or RemcError naming why ``strategy`` cannot run on this graph."""
    chain, why = linear_chain(dag)
    if chain is None:
        raise RemcError(f"{strategy} needs a linear forward graph: {why}; the ap-* and lin-* "
                        f"generalizations run on any graph")
    return chain


def articulation_candidates(dag: DAG) -> np.ndarray:
    """int64[k]: articulation points of the undirected forward graph, in topological order.

    As in Checkmate's reference implementation, a virtual input is joined to the first forward unit and a
    virtual output to the last, so that both ends of a chain are candidates too; on a linear forward graph
    every forward unit is then an articulation point (the generalization reproduces Chen et al. exactly).
    """
    import networkx as nx

    fwd = forward_units(dag)
    if len(fwd) == 0:
        return fwd
    g = nx.Graph()
    g.add_nodes_from(fwd.tolist())
    g.add_edges_from(forward_edges(dag).tolist())
    g.add_edge("input", int(fwd[0]))
    g.add_edge(int(fwd[-1]), "output")
    return np.array(sorted(v for v in nx.articulation_points(g) if not isinstance(v, str)), dtype=np.int64)


def keep_until_last_use(dag: DAG, S: np.ndarray, units: Iterable[int]) -> None:
    """Set S so that each of ``units`` stays resident from its frontier stage to its last use."""
    last = dag.last_use
    for i in units:
        S[i + 1:last[i] + 1, i] = True


def forward_window_end(dag: DAG, v: int, boundary: int) -> int:
    """The last stage up to ``boundary`` in which a user of ``v`` runs (``v`` itself when none does)."""
    users = dag.succs[v]
    near = users[users <= boundary]
    return int(near[-1]) if len(near) else v


def late_backward_uses(dag: DAG, v: int, after: int) -> np.ndarray:
    """The backward users of ``v`` that run after stage ``after``, in order."""
    users = dag.succs[v]
    return users[(users > after) & dag.backward[users]]


def solve_r_keeping_no_recompute(dag: DAG, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R, S) with R the least for S, S grown until no no-recompute unit is computed twice.

    Pinning a no-recompute unit to its last use is not enough: a user recomputed later (say in the
    backward) needs it again. Each such unit stays resident through the last stage that would recompute
    it; growing S only removes needs, so this settles in a few rounds.
    """
    S = pin_no_recompute(dag, S)
    while True:
        R = solve_r(dag, S)
        again = np.flatnonzero((R.sum(axis=0) > 1) & dag.no_recompute)
        if len(again) == 0:
            return R, S
        for i in again.tolist():
            S[i + 1:int(np.flatnonzero(R[:, i])[-1]) + 1, i] = True


def finish(dag: DAG, S: np.ndarray, strategy: str, report: dict) -> Schedule:
    """Keep no-recompute units, solve the least R for S, and fill in cost, peak and recomputations."""
    R, S = solve_r_keeping_no_recompute(dag, S)
    sched = Schedule(R, S, strategy=strategy)
    cost = sched.cost(dag)
    sched.report = {"status": "heuristic", **report, "cost": cost, "peak": sched.peak(dag),
                    "recomputations": int(sched.recomputes().sum()),
                    "overhead": cost / dag.total_cost if dag.total_cost > 0 else 1.0}
    return sched


def unit_names(dag: DAG, units: Sequence[int]) -> list[str]:
    return [dag.names[int(v)] for v in units]
