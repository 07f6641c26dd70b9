"""Lower a plan to an ONNX graph whose node list is the plan's order.

Every ``compute`` of a unit emits copies of the unit's ONNX nodes. The first compute keeps the original
value names (so graph outputs keep theirs); the k-th recompute writes fresh names ``<value>/re<k>`` and
its consumers read the copy that is resident when they run: the latest one computed. ``deallocate`` has no
ONNX counterpart: ONNX Runtime frees a buffer after its last consumer in execution order, and the plan's
order makes that consumer the one the plan intended.

The result must run with ``ExecutionOrder.PRIORITY_BASED`` (Kahn order, lowest node index first: a
topological node list runs exactly as listed, except that ONNX Runtime runs Shape and Size nodes as soon
as their input exists, so the node list is put in that order too) and graph optimizations off (CSE would
merge the copies). Optional outputs that nothing reads are dropped from the copies.
"""
from __future__ import annotations

import onnx

from ..errors import PlanError
from ..ir.graph import Graph
from ..ir.onnx_io import export_model
from ..ir.plan import Compute, Plan


def lower(graph: Graph, plan: Plan) -> onnx.ModelProto:
    """The ONNX model that executes ``plan`` on ``graph``."""
    members = {u.name: u.members for u in plan.units}
    by_name = {n.name: n for n in graph.nodes}
    current: dict[str, str] = {}
    count: dict[str, int] = {}
    protos: list[onnx.NodeProto] = []
    copies: set[int] = set()  # indices of recomputed copies in ``protos``
    for stage in plan.stages:
        for stmt in stage:
            if not isinstance(stmt, Compute):
                continue
            k = count.get(stmt.unit, 0)
            count[stmt.unit] = k + 1
            for node_name in members[stmt.unit]:
                node = by_name.get(node_name)
                if node is None:
                    raise PlanError(f"plan unit {stmt.unit!r} names node {node_name!r}, which the graph lacks")
                if k:
                    copies.add(len(protos))
                protos.append(_emit(node.proto, k, current))
    outputs = {v.name for v in graph.outputs}
    protos = _drop_dead_copies(protos, copies, outputs)
    _drop_dead_optional_outputs(protos, outputs)
    from ..runtime import order_for_ort
    return order_for_ort(export_model(graph, protos, name=f"{graph.name}_remat"))


def _drop_dead_copies(protos: list[onnx.NodeProto], copies: set[int], graph_outputs: set[str]
                      ) -> list[onnx.NodeProto]:
    """Remove recomputed copies whose outputs nothing reads (e.g. a unit's running-statistics update when
    the unit is recomputed for its activations): ONNX Runtime would keep their outputs to the end of the
    run. Removing them only lowers cost and memory below what the plan was validated at."""
    readers: dict[str, int] = {}
    for p in protos:
        for name in p.input:
            readers[name] = readers.get(name, 0) + 1
    dead: set[int] = set()
    changed = True
    while changed:
        changed = False
        for k, p in enumerate(protos):
            if k in dead or k not in copies:
                continue
            if all(not o or (readers.get(o, 0) == 0 and o not in graph_outputs) for o in p.output):
                dead.add(k)
                changed = True
                for name in p.input:
                    readers[name] -= 1
    return [p for k, p in enumerate(protos) if k not in dead]


def _drop_dead_optional_outputs(protos: list[onnx.NodeProto], graph_outputs: set[str]) -> None:
    """Unname optional outputs nobody reads (e.g. a recomputed MaxPool's Indices): ONNX Runtime keeps an
    unread output allocated until the run ends, while remc's model frees it as soon as its node ran."""
    read = {name for p in protos for name in p.input} | graph_outputs
    for p in protos:
        try:
            schema = onnx.defs.get_schema(p.op_type, domain=p.domain)
        except onnx.defs.SchemaError:
            continue
        formal = schema.outputs
        for i, name in enumerate(p.output):
            if name and name not in read and i < len(formal) and \
                    formal[i].option == onnx.defs.OpSchema.FormalParameterOption.Optional:
                p.output[i] = ""


def _emit(proto: onnx.NodeProto, k: int, current: dict[str, str]) -> onnx.NodeProto:
    p = onnx.NodeProto()
    p.CopyFrom(proto)
    for i, name in enumerate(p.input):
        if name:
            p.input[i] = current.get(name, name)
    if k:
        p.name = f"{proto.name}/re{k}"
    for i, name in enumerate(proto.output):
        if name:
            fresh = f"{name}/re{k}" if k else name
            p.output[i] = fresh
            current[name] = fresh
    return p
