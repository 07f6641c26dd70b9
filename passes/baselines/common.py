"""What every baseline shares: the forward graph, residency windows, and turning S into a Schedule.

Baselines fix the checkpoint matrix S and take the least recomputation R for it (``solve_r``, paper
appendix B). The forward graph is the subgraph of units not marked ``backward``; its topological order is
the DAG's unit order.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ...ir.dag import DAG
from ...ir.errors import RemcError
from ...ir.schedule import Schedule, solve_rs


def forward_units(dag: DAG) -> np.ndarray:
    """int64[k]: the forward units in topological order."""
    return np.flatnonzero(~dag.backward)


def forward_edges(dag: DAG) -> np.ndarray:
    """int64[m, 2]: the edges between two forward units."""
    e = dag.edges
    return e[~dag.backward[e[:, 0]] & ~dag.backward[e[:, 1]]]


LAYER_OPS = frozenset({"Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "Gemm", "MatMul", "MatMulInteger",
                       "QLinearMatMul", "Einsum", "RNN", "GRU", "LSTM", "Attention", "MultiHeadAttention"})
"""Ops that make a layer: a unit running one of these between two layer boundaries is a layer off the
main path (a residual branch, an attention block), not a side computation of one layer."""


def articulation_candidates(dag: DAG) -> np.ndarray:
    """int64[k]: the articulation points of the undirected forward graph that separate its input from its
    output, in topological order (paper appendix B).

    As in Checkmate's reference implementation, a virtual input is joined to the first forward unit and a
    virtual output to the last, so that both ends are candidates too. Only cut vertices on the input-output
    path of the block-cut tree are kept: those are the points "no later unit depends past" — the inputs
    and outputs of residual blocks, not vertices inside them (a vertex inside a block that only cuts off a
    dangling side computation is an articulation point too, but separates nothing). On a linear forward
    graph every forward unit is one, so the generalization reproduces Chen et al. exactly. Empty when the
    first and last forward units are not connected.
    """
    fwd = forward_units(dag)
    if len(fwd) == 0:
        return fwd
    k = len(fwd)
    at = {int(u): r for r, u in enumerate(fwd.tolist())}
    src, dst = k, k + 1  # the virtual input and output
    adj: list[list[int]] = [[] for _ in range(k + 2)]
    for a, b in forward_edges(dag).tolist():
        adj[at[a]].append(at[b])
        adj[at[b]].append(at[a])
    adj[src].append(0)
    adj[0].append(src)
    adj[k - 1].append(dst)
    adj[dst].append(k - 1)
    cuts = _separators(adj, src, dst)
    return np.array(sorted(int(fwd[v]) for v in cuts), dtype=np.int64)


def _separators(adj: list[list[int]], src: int, dst: int) -> list[int]:
    """The vertices whose removal disconnects ``src`` from ``dst`` in the undirected graph ``adj`` (the cut
    vertices on the src-dst path of its block-cut tree); empty when they are not connected. One depth-first
    search from ``src`` with low links: v separates them iff it is an ancestor of ``dst`` whose child c on
    the tree path to ``dst`` has low[c] >= disc[v] (no edge from c's subtree reaches above v)."""
    n = len(adj)
    disc, low, parent = [-1] * n, [0] * n, [-1] * n
    disc[src] = low[src] = 0
    clock = 1
    stack = [(src, 0)]
    while stack:
        v, i = stack[-1]
        if i < len(adj[v]):
            stack[-1] = (v, i + 1)
            w = adj[v][i]
            if disc[w] < 0:
                parent[w] = v
                disc[w] = low[w] = clock
                clock += 1
                stack.append((w, 0))
            elif w != parent[v]:
                low[v] = min(low[v], disc[w])
        else:
            stack.pop()
            if parent[v] >= 0:
                low[parent[v]] = min(low[parent[v]], low[v])
    if disc[dst] < 0:
        return []
    out, c = [], dst
    while parent[c] != src:
        v = parent[c]
        if low[c] >= disc[v]:
            out.append(v)
        c = v
    return out


def linear_chain(dag: DAG) -> tuple[np.ndarray | None, str]:
    """(layer boundaries, "") when the forward graph is a linear network, else (None, why not).

    The layer boundaries are ``articulation_candidates``. Between two consecutive ones a linear network
    has at most a layer's side computations — the statistics of a decomposed normalization, the shape
    and gather ops of a loss — and never a unit running a layer op (``LAYER_OPS``), which would make the
    edge around it a skip or residual connection. Without op names (``dag.ops`` None) only a path graph,
    where every forward unit is a boundary, is linear.
    """
    fwd = forward_units(dag)
    chain = articulation_candidates(dag)
    if len(fwd) and not len(chain):
        return None, "its first and last units are not connected"
    at = np.searchsorted(fwd, chain)
    for k in range(len(chain) - 1):
        inner = fwd[at[k] + 1:at[k + 1]]
        layers = [v for v in inner.tolist() if dag.ops is None or LAYER_OPS & set(dag.ops[v].split("+"))]
        if layers:
            a, b = dag.names[chain[k]], dag.names[chain[k + 1]]
            return None, (f"{dag.names[layers[0]]!r} branches off between {a!r} and {b!r} (a skip or residual "
                          f"connection around {len(inner)} units)")
    return chain, ""


def require_linear(dag: DAG, strategy: str) -> np.ndarray:
    """The layer boundaries of a linear forward graph, or RemcError naming why ``strategy`` cannot run."""
    chain, why = linear_chain(dag)
    if chain is None:
        raise RemcError(f"{strategy} needs a linear forward graph: {why}; the ap-* and lin-* "
                        f"generalizations run on any graph")
    return chain


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


def finish(dag: DAG, S: np.ndarray, strategy: str, report: dict) -> Schedule:
    """Keep no-recompute units, solve the least R for S, and fill in cost, peak and recomputations."""
    R, S = solve_rs(dag, S)
    sched = Schedule(R, S, strategy=strategy)
    cost = sched.cost(dag)
    sched.report = {"status": "heuristic", **report, "cost": cost, "peak": sched.peak(dag),
                    "recomputations": int(sched.recomputes().sum()),
                    "overhead": cost / dag.total_cost if dag.total_cost > 0 else 1.0}
    return sched


def unit_names(dag: DAG, units: Sequence[int] | np.ndarray) -> list[str]:
    return [dag.names[int(v)] for v in units]
