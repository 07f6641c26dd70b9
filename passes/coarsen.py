"""Coarsening: group ONNX nodes into scheduling units.

ONNX training graphs are far finer than the paper's layers (a decomposed BatchNorm alone is a dozen
nodes), and the MILP has O(n^2) binaries, so remc schedules units. Walking the nodes in order, a node c
joins an existing unit P when

1. c is not an anchor (a compute-heavy forward op such as Conv, MatMul, pooling: each starts a unit, so the
   solver can still choose per layer what to keep), for forward nodes;
2. every unit of c's own phase that c reads from is P (reads from the other phase are free: forward nodes
   never depend on backward ones, so such a read cannot close a cycle) — this keeps the unit graph acyclic;
3. for backward nodes, P serves the same forward unit: backward nodes named ``<forward node>/grad/...``
   (the gradient builder's convention) are grouped by the forward unit of their forward node.

A unit's internal values become its workspace and its outputs read elsewhere its M_v (passes/dagbuild.py),
so a coarse plan is still exact at ONNX granularity. Units are returned in a topological order.
"""
from __future__ import annotations

import networkx as nx

from ..ir.graph import Graph, Node
from .dagbuild import RANDOM_OPS, forward_nodes

ANCHORS = frozenset({"Conv", "ConvTranspose", "Gemm", "MatMul", "MaxPool", "AveragePool", "GlobalAveragePool",
                     "Concat", "Resize", "Gather", "Split", "LayerNormalization", "BatchNormalization",
                     "SoftmaxCrossEntropyLoss"}) | RANDOM_OPS


def owner_name(node: Node) -> str | None:
    """The forward node a backward node serves, from the '<forward>/grad/<k>' naming convention."""
    head, sep, _ = node.name.partition("/grad/")
    return head if sep else None


def coarse_units(graph: Graph) -> list[list[Node]]:
    """Partition the graph's nodes into units (see the module docstring)."""
    fwd = forward_nodes(graph)
    unit_of: dict[Node, int] = {}
    units: list[list[Node]] = []
    group_unit: dict[object, int] = {}   # backward: forward unit served -> latest backward unit for it
    by_name = {n.name: n for n in graph.nodes}
    for node in graph.nodes:
        is_fwd = node in fwd
        preds = {unit_of[v.producer] for v in node.inputs
                 if v is not None and v.producer is not None and (v.producer in fwd) == is_fwd}
        target = key = None
        if is_fwd:
            if node.op_type not in ANCHORS and len(preds) == 1:
                target = next(iter(preds))
        else:
            key = _backward_group(node, unit_of, by_name)
            cand = group_unit.get(key)
            if cand is not None and preds <= {cand} and node.op_type not in RANDOM_OPS:
                target = cand
            elif key is None and len(preds) == 1 and node.op_type not in ANCHORS:
                target = next(iter(preds))
        if target is None or any(n.op_type in RANDOM_OPS for n in units[target]):
            target = len(units)
            units.append([])
        units[target].append(node)
        unit_of[node] = target
        if not is_fwd:
            group_unit[key] = target
    return _topological(units, unit_of)


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
