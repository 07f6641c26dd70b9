"""remc's live-bytes model of a plan against what its lowered graph keeps live on ONNX Runtime, node by node.

The solver keeps constant + (M of the live registers) + W of the running unit within the budget; the lowered
graph holds its arena tensors (``passes.arena.graph_events``: ONNX Runtime's allocation planner, in place and
aliasing kernels, an output nothing reads kept to the end of the run). For every lowered node ``compare`` puts
side by side the tensors remc's model holds while it runs (the M values of every live register and the running
unit's own values as ``passes.dagbuild.unit_peak`` counts them, named as ``passes.lower`` names copies:
``<value>/re<k>``) and the arena tensors the lowered graph holds (graph outputs and initializers left out: the
model's constant has them), each with its kernel scratch. The fit loop (``remc/fit.py``) can only find a plan
when the lowered graph never holds more than the model (``tools/model_vs_lowered.py`` reports it on a compiled
model; ``tests/test_model_lowered.py``).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import onnx

from ..ir.graph import Graph, Node, Value
from ..ir.plan import Compute, Plan
from .arena import KernelBytes, graph_events
from .dagbuild import kernel_scratch


@dataclass
class NodeLive:
    """Live bytes while one lowered node runs, on both sides."""

    node: str
    predicted: int
    lowered: int
    predicted_scratch: int = 0
    lowered_scratch: int = 0
    extra: list[tuple[str, int]] = field(default_factory=list)
    """Tensors live in the lowered graph that the model does not count (buffer name, bytes)."""
    missing: list[tuple[str, int]] = field(default_factory=list)
    """Tensors the model counts that the lowered graph does not hold (in place, aliased, freed earlier)."""


def copy_name(value: str, k: int) -> str:
    """The name lowering gives value ``value`` in a unit's ``k``-th recompute (``passes.lower._emit``)."""
    return f"{value}/re{k}" if k else value


def model_live(graph: Graph, plan: Plan, device: str, scratch: Mapping[str, int]
               ) -> dict[str, tuple[dict[str, int], int]]:
    """Per node copy (its lowered name): the tensors remc's model holds while it runs ({name: bytes}) and its
    kernel scratch in W_v."""
    by_name = {n.name: n for n in graph.nodes}
    kept = graph.kept
    index = plan.unit_index()
    members = [[by_name[m] for m in u.members] for u in plan.units]
    mvals: list[list[tuple[str, int]]] = []
    for mem in members:
        inside = set(mem)
        mvals.append([(v.name, v.nbytes) for n in mem for v in n.outputs
                      if v not in kept and any(u.node not in inside for u in v.uses)])
    live: dict[int, tuple[int, int]] = {}  # register -> (unit, copy)
    count: dict[int, int] = {}
    out: dict[str, tuple[dict[str, int], int]] = {}
    for _, _, st in plan.statements():
        if not isinstance(st, Compute):
            live.pop(st.reg)
            continue
        v = index[st.unit]
        k = count.get(v, 0)
        count[v] = k + 1
        others: dict[str, int] = {}
        for u, c in live.values():
            others.update({copy_name(name, c): b for name, b in mvals[u]})
        live[st.reg] = (v, k)
        for node, own in _unit_profile(members[v], kept, k):
            sc = max(kernel_scratch(node, device), int(scratch.get(node.name, 0)))
            out[copy_name(node.name, k)] = ({**others, **own}, sc)
    return out


def _unit_profile(unit: list[Node], kept: set[Value], k: int) -> list[tuple[Node, dict[str, int]]]:
    """Per member, the unit's own values live while it runs, as ``passes.dagbuild.unit_peak`` counts them."""
    inside = set(unit)
    position = {n: i for i, n in enumerate(unit)}
    held: dict[str, int] = {}
    ends: dict[int, list[str]] = {}
    out: list[tuple[Node, dict[str, int]]] = []
    for i, n in enumerate(unit):
        for v in n.outputs:
            if v in kept:
                continue
            name = copy_name(v.name, k)
            held[name] = v.nbytes
            if not any(u.node not in inside for u in v.uses):
                last = max((position[u.node] for u in v.uses), default=i)
                ends.setdefault(last, []).append(name)
        out.append((n, dict(held)))
        for name in ends.pop(i, []):
            held.pop(name, None)
    return out


def lowered_excess(rows: list[NodeLive]) -> list[NodeLive]:
    """The rows where the lowered graph holds more tensor bytes than remc's model (scratch apart)."""
    return [r for r in rows if r.lowered > r.predicted]


def lowered_live(lowered: onnx.ModelProto, device: str, kernel: Mapping[str, KernelBytes] | None
                 ) -> list[tuple[str, dict[str, list[str]], dict[str, int], int]]:
    """Per lowered node in execution order: (name, buffer -> values it holds, buffer -> bytes, scratch) while it
    runs; graph outputs are left out (the model's constant)."""
    ev = graph_events(lowered, device, kernel)
    graph_outputs = {o.name for o in lowered.graph.output}
    protos = {n.name: n for n in lowered.graph.node}
    live: dict[str, int] = {}
    holds: dict[str, list[str]] = {}
    buffer_of: dict[str, str] = {}
    out: list[tuple[str, dict[str, list[str]], dict[str, int], int]] = []
    for ne in ev.nodes:
        allocated = dict(ne.allocs)
        p = protos.get(ne.node)
        if p is not None:
            for i, o in enumerate(p.output):
                if not o:
                    continue
                if o in allocated:
                    buffer_of[o] = o
                    holds[o] = [o]
                    if o not in graph_outputs:
                        live[o] = allocated[o]
                elif i == 0 and p.input and p.input[0] in buffer_of:
                    b = buffer_of[p.input[0]]
                    buffer_of[o] = b
                    holds.setdefault(b, []).append(o)
        sc = max(sum(ne.before), max(ne.scratch, default=0))
        out.append((ne.node, {b: list(holds.get(b, [b])) for b in live}, dict(live), sc))
        for b in ne.frees:
            live.pop(b, None)
    return out


def compare(graph: Graph, plan: Plan, lowered: onnx.ModelProto, device: str = "cpu",
            scratch: Mapping[str, int] | None = None, kernel: Mapping[str, KernelBytes] | None = None
            ) -> list[NodeLive]:
    """``NodeLive`` per lowered node of ``lowered`` (``passes.lower.lower(graph, plan)``), in execution order.
    ``scratch``: the measured kernel scratch per node that W_v took (``remc.fit.dag_with_measured_scratch``);
    ``kernel``: the lowered graph's measured kernel memory (``backends.scratch``); both optional."""
    model = model_live(graph, plan, device, scratch or {})
    rows = []
    for name, holds, live, sc in lowered_live(lowered, device, kernel):
        base = re.sub(r"/release\d+_*$", "", name)  # the Identity releasing an unread output (passes.lower)
        pred, psc = model.get(name, model.get(base, ({}, 0)))
        accounted = {b for b, vals in holds.items() if any(v in pred for v in vals)}
        extra = sorted(((b, live[b]) for b in live if b not in accounted), key=lambda x: -x[1])
        held_vals = {v for vals in holds.values() for v in vals}
        missing = sorted(((v, b) for v, b in pred.items() if v not in held_vals), key=lambda x: -x[1])
        rows.append(NodeLive(name, sum(pred.values()), sum(live.values()), psc, sc, extra, missing))
    return rows
