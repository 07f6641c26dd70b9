"""Coarsening: group ONNX nodes into scheduling units.

ONNX training graphs are far finer than the paper's layers (a decomposed BatchNorm alone is a dozen
nodes), and the MILP has O(n^2) binaries, so remc schedules units. Walking the nodes in order, a node c
joins an existing unit P when

1. c is not an anchor (a compute-heavy forward op such as Conv, MatMul, pooling: each starts a unit, so the
   solver can still choose per layer what to keep), for forward nodes;
2. every unit of c's own phase that c reads from is P (reads from the other phase are free: forward nodes
   never depend on backward ones, so such a read cannot close a cycle) — this keeps the unit graph acyclic.
   The forward phase is the loss's ancestors plus, under the naming convention below, the other nodes no
   gradient feeds (running-statistics updates join the unit of the batch statistics they read);
3. for backward nodes, P serves the same forward unit: backward nodes named ``<forward node>/grad/...``
   (the gradient builder's convention) are grouped by the forward unit of their forward node.

Nodes that read only parameters (a reshaped BatchNorm scale, a transposed weight) join the unit of
their first reader. A unit's internal values become its workspace and its outputs read elsewhere its M_v (passes/dagbuild.py),
so a coarse plan is still exact at ONNX granularity. Units are returned in a topological order.
"""
from __future__ import annotations

import networkx as nx

from ..ir.graph import Graph, Node
from .dagbuild import RANDOM_OPS, forward_nodes

ANCHORS = frozenset({"Conv", "ConvTranspose", "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool",
                     "Concat", "Resize", "Gather", "Split", "LayerNormalization", "BatchNormalization",
                     "SoftmaxCrossEntropyLoss"}) | RANDOM_OPS


BACKWARD_ANCHORS = frozenset({"Conv", "ConvTranspose", "Gemm", "MatMul", "ScatterElements", "ScatterND"})
"""Backward ops that start a unit: the heavy ones (the input and the weight gradient of a layer are
separate units, so their large temporaries are not live at once)."""


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
    for node in graph.nodes:
        producers = [v.producer for v in node.inputs if v is not None and v.producer is not None]
        is_fwd = node in fwd
        if all(v is None or v.kind == "param" or v.producer in pending for v in node.inputs):
            pending.append(node)  # reads only parameters: joins its first reader's unit
            continue
        preds = {unit_of[p] for p in producers if p in unit_of and (p in fwd) == is_fwd}
        target = key = None
        if is_fwd:
            if node.op_type not in ANCHORS and len(preds) == 1:
                target = next(iter(preds))
        else:
            key = _backward_group(node, unit_of, by_name)
            cand = group_unit.get(key)
            if cand is not None and preds <= {cand} and node.op_type not in BACKWARD_ANCHORS:
                target = cand
            elif key is None and len(preds) == 1 and node.op_type not in ANCHORS:
                target = next(iter(preds))
        if target is None or any(n.op_type in RANDOM_OPS for n in units[target]):
            target = len(units)
            units.append([])
        for p in _pending_inputs(node, pending):
            units[target].append(p)
            unit_of[p] = target
        units[target].append(node)
        unit_of[node] = target
        if not is_fwd:
            group_unit[key] = target
    for p in pending:  # read by nothing scheduled (or only by graph outputs)
        unit_of[p] = len(units)
        units.append([p])
    return _topological(units, unit_of)


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


def _topological(units: list[list[Node]], unit_of: dict[Node, int]) -> list[list[Node]]:
    g = nx.DiGraph()
    g.add_nodes_from(range(len(units)))
    for k, unit in enumerate(units):
        for n in unit:
            for v in n.inputs:
                if v is not None and v.producer is not None and unit_of[v.producer] != k:
                    g.add_edge(unit_of[v.producer], k)
    order = nx.lexicographical_topological_sort(g)  # acyclic by construction (module docstring)
    return [units[k] for k in order]
