"""Coarsening: group ONNX nodes into scheduling units that cost little memory against single nodes.

ONNX training graphs are far finer than the paper's layers (a decomposed BatchNorm alone is a dozen
nodes), and the MILP has O(n^2) binaries, so remc schedules units. But a unit is one register: its inputs
stay resident while it runs, its outputs are allocated and freed together. Grouping carelessly makes the
coarse problem need more memory than the ONNX graph does (every budget near the least feasible one
becomes infeasible). So coarsening is a greedy merge, walking the nodes in order, checked against the
checkpoint-all schedule at ONNX-node granularity (``FineProfile``):

1. Candidate: a node c may join the latest-created unit P of its own phase that it reads from (forward
   nodes that are anchors, compute-heavy ops such as Conv, MatMul, pooling, start a unit so the solver
   still chooses per layer what to keep; random ops always start one and nothing joins them). A backward
   node that reads only forward values may join the latest unit serving the same forward unit (nodes named
   ``<forward node>/grad/...``, the gradient builder's convention). Same-phase reads then always point to
   earlier-created units and forward nodes never read backward ones, so the unit graph is acyclic. The
   forward phase is the loss's ancestors plus, under the naming convention, the other nodes no gradient
   feeds (running-statistics updates).
2. Memory check (``_cheap_merge``): the merged unit's need (the outputs of the units it reads, plus its own
   peak while it runs) is at most what the neediest single node needs (so ``simple_lower_bound`` does not
   grow), and its checkpoint-all memory estimate stays within the fine checkpoint-all peak.
3. Lifetime split (``split_lifetimes``, a few rounds): a unit whose large outputs (read outside it) have
   different last readers is cut so each part's large outputs die together; a small output read late (a
   reshaped BatchNorm scale the backward pass reads) never keeps a large one alive.

Nodes that read only parameters join the unit of their first reader. A unit's internal values become its
workspace and its outputs read elsewhere its M_v (passes/dagbuild.py), so a coarse plan is still exact at
ONNX granularity. Units are returned in a topological order close to the graph's node order.
"""
from __future__ import annotations

import networkx as nx
import numpy as np

from ..ir.graph import Graph, Node
from .dagbuild import RANDOM_OPS, forward_nodes, unit_peak

ANCHORS = frozenset({"Conv", "ConvTranspose", "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool",
                     "Concat", "Resize", "Gather", "Split", "LayerNormalization", "BatchNormalization",
                     "SoftmaxCrossEntropyLoss"}) | RANDOM_OPS
"""Forward ops that start a unit."""

SPLIT_ROUNDS = 4
"""At most this many rounds of ``split_lifetimes`` over all units."""

LARGE_DIVISOR = 1024
"""A value is large when it holds at least 1/LARGE_DIVISOR of the bytes of the graph's largest activation."""


def owner_name(node: Node) -> str | None:
    """The forward node a backward node serves, from the '<forward>/grad/<k>' naming convention."""
    head, sep, _ = node.name.partition("/grad/")
    return head if sep else None


def coarse_units(graph: Graph) -> list[list[Node]]:
    """Partition the graph's nodes into units (see the module docstring)."""
    fwd = _forward_phase(graph)
    unit_of: dict[Node, int] = {}
    units: list[list[Node]] = []
    group_unit: dict[object, int] = {}   # backward: forward unit served -> latest backward unit for it
    by_name = {n.name: n for n in graph.nodes}
    pending: list[Node] = []             # nodes reading only parameters (and other pending nodes)
    kept = graph.kept
    fine = FineProfile(graph)
    for node in graph.nodes:
        producers = [v.producer for v in node.inputs if v is not None and v.producer is not None]
        is_fwd = node in fwd
        if all(v is None or v.kind == "param" or v.producer in pending for v in node.inputs):
            pending.append(node)  # reads only parameters: joins its first reader's unit
            continue
        preds = {unit_of[p] for p in producers if p in unit_of and (p in fwd) == is_fwd}
        target = key = None
        if is_fwd:
            if node.op_type not in ANCHORS and preds:
                target = max(preds)
        else:
            key = _backward_group(node, unit_of, by_name)
            target = max(preds) if preds else group_unit.get(key)
        joining = _pending_inputs(node, pending) + [node]
        if target is not None and (node.op_type in RANDOM_OPS or any(n.op_type in RANDOM_OPS for n in units[target])
                                   or not _cheap_merge(units[target], joining, units, unit_of, kept, fine)):
            target = None
        if target is None:
            target = len(units)
            units.append([])
        for n in joining:
            units[target].append(n)
            unit_of[n] = target
        if not is_fwd:
            group_unit[key] = target
    for p in pending:  # read by nothing scheduled (or only by graph outputs)
        unit_of[p] = len(units)
        units.append([p])
    position = {n: i for i, n in enumerate(graph.nodes)}
    units = _topological(units, unit_of, position)
    big = _large_bytes(graph)
    for _ in range(SPLIT_ROUNDS):  # a split exposes values read by the new parts: split those again
        rank = {n: k for k, u in enumerate(units) for n in u}
        split = [part for unit in units for part in split_lifetimes(unit, rank, big, kept)]
        if len(split) == len(units):
            break
        units = _topological(split, {n: k for k, u in enumerate(split) for n in u}, position)
    return units


def _cheap_merge(unit: list[Node], joining: list[Node], units: list[list[Node]], unit_of: dict[Node, int],
                 kept: set, fine: FineProfile) -> bool:
    """Whether ``joining`` may join ``unit``: the merged unit needs (inputs + peak while it runs) at most
    what the neediest single node needs, and its checkpoint-all memory estimate is within the peak at
    ONNX-node granularity."""
    merged = unit + joining
    m = need(merged, units, unit_of, kept)
    return m <= fine.cap and fine.estimate(merged, m) <= fine.peak


def need(members: list[Node], units: list[list[Node]], unit_of: dict[Node, int], kept: set) -> int:
    """Bytes a unit of ``members`` needs while it runs: the whole outputs of every unit it reads (as they
    are now in ``unit_of``; nodes not in it yet count as outside) plus its own peak (``unit_peak``:
    M_v + W_v, without kernel scratch)."""
    inside = set(members)
    preds = {unit_of[v.producer] for n in members for v in n.inputs
             if v is not None and v.producer is not None and v.producer not in inside and v.producer in unit_of}
    read = sum(_outputs_bytes(units[k], unit_of, k, kept) for k in preds)
    return read + unit_peak(members, kept)[0]


def _outputs_bytes(unit: list[Node], unit_of: dict[Node, int], k: int, kept: set) -> int:
    """M of a unit under construction: outputs read by a node not (yet) in unit ``k``."""
    return sum(v.nbytes for n in unit for v in n.outputs
               if v not in kept and any(unit_of.get(u.node) != k for u in v.uses))


class FineProfile:
    """Checkpoint-all at ONNX-node granularity in graph order: what a merge is measured against.

    ``mem[n]``: bytes of n's outputs read by other nodes (M at fine granularity); ``other[n]``: bytes
    resident while n runs that n does not read (outputs of earlier nodes still to be read, at or after n);
    ``cap``: the most one node needs (its inputs' producers' outputs plus its own outputs: the per-unit term
    of ``simple_lower_bound``, less the constant); ``peak``: the checkpoint-all peak, less the constant.
    """

    __slots__ = ("position", "mem", "other", "cap", "peak")

    def __init__(self, graph: Graph) -> None:
        kept = graph.kept
        nodes = graph.nodes
        self.position = {n: i for i, n in enumerate(nodes)}
        self.mem = {n: sum(v.nbytes for v in n.outputs if v not in kept and any(u.node is not n for u in v.uses))
                    for n in nodes}
        own = [sum(v.nbytes for v in n.outputs if v not in kept) for n in nodes]
        delta = np.zeros(len(nodes) + 1, dtype=np.int64)
        for i, n in enumerate(nodes):  # M_n is resident from after n to its last reader
            last = max((self.position[u.node] for v in n.outputs for u in v.uses), default=i)
            if last > i:
                delta[i + 1] += self.mem[n]
                delta[last + 1] -= self.mem[n]
        before = np.cumsum(delta)[:-1]
        self.other, self.cap, self.peak = {}, 0, 0
        for i, n in enumerate(nodes):
            read = sum(self.mem[p] for p in _producers(n))
            self.other[n] = int(before[i]) - read
            self.cap = max(self.cap, read + own[i])
            self.peak = max(self.peak, int(before[i]) + own[i])

    def estimate(self, members: list[Node], need_bytes: int) -> int:
        """Memory in use (less the constant) while a unit of ``members`` that needs ``need_bytes`` runs in
        a checkpoint-all schedule: what its first node does not read stays resident, minus the unit's other
        inputs (already in ``need_bytes``)."""
        first = min(members, key=self.position.__getitem__)
        inside = set(members)
        mine = _producers(first)
        extra = {p for n in members for p in _producers(n)
                 if p not in inside and p not in mine and self.position[p] < self.position[first]}
        return self.other[first] - sum(self.mem[p] for p in extra) + need_bytes


def _producers(n: Node) -> set[Node]:
    return {v.producer for v in n.inputs if v is not None and v.producer is not None and v.producer is not n}


def split_lifetimes(unit: list[Node], rank: dict[Node, int], big: int, kept: set) -> list[list[Node]]:
    """``unit`` split so that the large outputs (read outside it) of one part share their last reader.

    A unit's outputs are one register, alive until the last reader of any of them; a large value whose
    readers are done earlier would stay resident for nothing (a forward BatchNorm output read by the next
    layer, kept as long as the normalized input the backward pass reads). A node's class is the latest unit
    (``rank``) that reads one of its large outputs, or else the latest class of the members it feeds
    (-1: none). Nodes of one class form a part; parts that read each other both ways merge, and the parts
    run in a topological order (nodes without a class join the last). A node whose small outputs are read
    later than its part's class then moves to the part, between those of its in-unit inputs and readers,
    where it extends the life of the fewest large bytes (bytes times units); one without in-unit inputs
    (a reshaped BatchNorm scale the backward pass reads too) gets a part of its own, first, unless some
    part lives long enough.
    """
    mine = set(unit)
    cls: dict[Node, int] = {}
    end: dict[Node, int] = {}   # latest unit reading any output of the node (outside the unit)
    for n in reversed(unit):
        own = inherited = e = -1
        for v in n.outputs:
            for use in v.uses:
                if use.node in mine:
                    inherited = max(inherited, cls[use.node])
                elif v not in kept:
                    when = rank[use.node]
                    e = max(e, when)
                    if v.nbytes >= big:
                        own = max(own, when)
        cls[n], end[n] = (own if own >= 0 else inherited), e
    if not any(c >= 0 for c in cls.values()):
        return [unit]
    parts = _ordered_parts(unit, cls)
    part_of = {n: k for k, part in enumerate(parts) for n in part}
    life = [max(cls[n] for n in part) for part in parts]
    held = [sum(v.nbytes for n in part for v in n.outputs if v.nbytes >= big and v not in kept
                and any(u.node not in mine for u in v.uses)) for part in parts]
    readers = {n: [u.node for v in n.outputs for u in v.uses if u.node in mine] for n in unit}
    for n in unit:
        if end[n] <= life[part_of[n]]:
            continue
        inner = [part_of[v.producer] for v in n.inputs if v is not None and v.producer in mine]
        lo, hi = max(inner, default=0), min((part_of[r] for r in readers[n]), default=len(parts) - 1)
        if lo > hi:
            continue
        cost = lambda p: held[p] * max(0, end[n] - life[p])
        best = min(range(lo, hi + 1), key=lambda p: (cost(p), -p))
        part_of[n] = best if cost(best) == 0 or inner else -1  # -1: a part of its own, first
    order = {n: i for i, n in enumerate(unit)}
    out = [sorted((n for n in unit if part_of[n] == k), key=order.__getitem__) for k in range(-1, len(parts))]
    out = [p for p in out if p]
    return out if len(out) > 1 else [unit]


def _ordered_parts(unit: list[Node], cls: dict[Node, int]) -> list[list[Node]]:
    """The unit's nodes grouped by class (classless nodes with the latest-running part), classes that read
    each other both ways merged, in a topological order."""
    mine = set(unit)
    g = nx.DiGraph()
    g.add_nodes_from({c for c in cls.values() if c >= 0})
    for n in unit:
        for v in n.inputs:
            if v is not None and v.producer in mine and cls[n] >= 0 and cls[v.producer] != cls[n]:
                g.add_edge(cls[v.producer], cls[n])
    cond = nx.condensation(g)
    comp = cond.graph["mapping"]
    order = list(nx.lexicographical_topological_sort(cond, key=lambda c: -max(cond.nodes[c]["members"])))
    index = {c: i for i, c in enumerate(order)}
    parts: list[list[Node]] = [[] for _ in order]
    for n in unit:
        parts[index[comp[cls[n]]] if cls[n] >= 0 else len(order) - 1].append(n)
    return parts


def _large_bytes(graph: Graph) -> int:
    """Values of at least this many bytes are large (see ``LARGE_DIVISOR``)."""
    return max((v.nbytes for v in graph.values.values() if v.kind == "activation"), default=0) // LARGE_DIVISOR


def _pending_inputs(node: Node, pending: list[Node]) -> list[Node]:
    """The pending (parameter-only) nodes ``node`` reads, transitively, removed from ``pending`` in order."""
    need: set[Node] = set()
    stack = [v.producer for v in node.inputs if v is not None and v.producer in pending]
    while stack:
        p = stack.pop()
        if p not in need:
            need.add(p)
            stack.extend(v.producer for v in p.inputs if v is not None and v.producer in pending)
    taken = [p for p in pending if p in need]
    pending[:] = [p for p in pending if p not in need]
    return taken


def _forward_phase(graph: Graph) -> set[Node]:
    """Nodes grouped as forward: the loss's ancestors and, when the graph follows the '/grad/' naming
    convention, every other node that no gradient node feeds (running-statistics updates)."""
    fwd = forward_nodes(graph)
    if not any("/grad/" in n.name for n in graph.nodes):
        return fwd
    out = set(fwd)
    for n in graph.nodes:
        if n not in out and "/grad/" not in n.name and all(
                v is None or v.producer is None or v.producer in out for v in n.inputs):
            out.add(n)
    return out


def _backward_group(node: Node, unit_of: dict[Node, int], by_name: dict[str, Node]) -> object:
    """Backward nodes serving nodes of one forward unit share a key (None without the naming convention)."""
    owner = owner_name(node)
    if owner is None:
        return None
    fwd_node = by_name.get(owner)
    return ("unit", unit_of[fwd_node]) if fwd_node is not None and fwd_node in unit_of else ("name", owner)


def _topological(units: list[list[Node]], unit_of: dict[Node, int], position: dict[Node, int]) -> list[list[Node]]:
    """The units in a topological order that stays close to the graph's node order: among the units whose
    inputs are ready, the one whose last node comes first in the graph."""
    g = nx.DiGraph()
    g.add_nodes_from(range(len(units)))
    for k, unit in enumerate(units):
        for n in unit:
            for v in n.inputs:
                if v is not None and v.producer is not None and unit_of[v.producer] != k:
                    g.add_edge(unit_of[v.producer], k)
    last = [max(position[n] for n in u) for u in units]
    order = nx.lexicographical_topological_sort(g, key=last.__getitem__)  # acyclic by construction
    return [units[k] for k in order]


def remap_units(units: list[list[Node]], graph: Graph) -> list[list[Node]]:
    """``units`` (of another import of the same model, e.g. at another batch size) as units of ``graph``,
    matched by node name, so that both DAGs have the same units (``remc maxbatch`` scales memory between
    two batch sizes; the memory checks above may group differently at each)."""
    by_name = {n.name: n for n in graph.nodes}
    names = [n.name for u in units for n in u]
    if sorted(names) != sorted(by_name):
        missing = sorted(set(names) ^ set(by_name))[:3]
        raise ValueError(f"the units do not name the graph's nodes (e.g. {missing})")
    return [[by_name[n.name] for n in u] for u in units]
