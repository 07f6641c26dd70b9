"""Lower a plan to an ONNX graph whose node list is the plan's order.

Every ``compute`` of a unit emits copies of the unit's ONNX nodes. The first compute keeps the original
value names (so graph outputs keep theirs); the k-th recompute writes fresh names ``<value>/re<k>`` and
its consumers read the copy that is resident when they run: the latest one computed. ``deallocate`` has no
ONNX counterpart: ONNX Runtime frees a buffer after its last consumer in execution order, and the plan's
order makes that consumer the one the plan intended.

The result must run with ``ExecutionOrder.PRIORITY_BASED`` (Kahn order, lowest node index first: a
topological node list runs exactly as listed, except that ONNX Runtime runs Shape and Size nodes as soon
as their input exists, so the node list is put in that order too) and graph optimizations off (CSE would
merge the copies). Node copies nothing reads are left out (first computes included), optional outputs that
nothing reads are dropped, and a required output that nothing reads gets an Identity reader: ONNX Runtime
keeps an unread output to the end of the run, remc's model does not (``tests/test_model_lowered.py``).
"""
from __future__ import annotations

import heapq

import onnx

from ..ir.errors import ModelError, PlanError
from ..ir.graph import Graph
from ..ir.onnx_io import export_model
from ..ir.onnx_types import node_keys
from ..ir.plan import Compute, Plan


def lower(graph: Graph, plan: Plan) -> onnx.ModelProto:
    """The ONNX model that executes ``plan`` on ``graph``."""
    members = {u.name: u.members for u in plan.units}
    by_name = {n.name: n for n in graph.nodes}
    current: dict[str, str] = {}
    count: dict[str, int] = {}
    protos: list[onnx.NodeProto] = []
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
                protos.append(_emit(node.proto, k, current))
    outputs = {v.name for v in graph.outputs}
    dead = dead_nodes(protos, outputs)
    protos = [p for k, p in enumerate(protos) if k not in dead]
    _drop_dead_optional_outputs(protos, outputs)
    protos = _release_unread_outputs(protos, outputs)
    return order_for_ort(export_model(graph, protos, name=f"{graph.name}_remat"), in_place=True)


def dead_nodes(protos: list[onnx.NodeProto], graph_outputs: set[str]) -> set[int]:
    """Indices of the node copies whose outputs nothing reads (transitively), first computes included: lowering
    leaves them out.

    A copy nothing reads arises when a unit is recomputed before any reader used the earlier copy: the
    schedule computes every unit in its own stage (the frontier), and when none of the unit's readers runs
    before the next recompute, every reader reads the later copy. remc's model frees such a copy right
    after its compute, but ONNX Runtime keeps an output nothing reads to the end of the run (U-Net b4
    416x608, checkmate at 0.5: the first ``block1/conv2/grad/1``, 259 MB, beside its recompute to the end).
    A recomputed unit's running-statistics update is another (its output was the first copy's). Removing
    them only lowers cost and memory below what the plan was validated at. A node with a graph output is
    always kept."""
    readers: dict[str, int] = {}
    producer: dict[str, int] = {}
    for k, p in enumerate(protos):
        for name in p.input:
            readers[name] = readers.get(name, 0) + 1
        for name in p.output:
            if name:
                producer[name] = k

    def unread(k: int) -> bool:
        return all(not o or (readers.get(o, 0) == 0 and o not in graph_outputs) for o in protos[k].output)

    dead: set[int] = set()
    work = [k for k in range(len(protos)) if unread(k)]
    while work:
        k = work.pop()
        if k in dead:
            continue
        dead.add(k)
        for name in protos[k].input:
            readers[name] -= 1
            j = producer.get(name)
            if j is not None and j not in dead and readers[name] == 0 and unread(j):
                work.append(j)
    return dead


def _release_unread_outputs(protos: list[onnx.NodeProto], graph_outputs: set[str]) -> list[onnx.NodeProto]:
    """After each node with a required output nothing reads, an Identity that reads it (its own output unread).

    ONNX Runtime keeps an output nothing reads to the end of the run, while remc's model frees a copy's outputs
    when its register is freed. A copy is lowered for some of its outputs only when the others' readers read
    another copy: a recomputed LayerNormalization whose Mean and InvStdDev the gradient reads while its Y was
    read by an earlier copy's readers (ViT), or a Split of which one part is needed (a Concat's gradient in
    U-Net, GPT-2's query/key/value). An Identity aliases its input (no allocation), and its input's buffer is
    freed when it ends, right after the node (measured on CPU: peak in use 4194048 bytes without it, 2097408
    with it, each equal to ``passes.arena``'s replay)."""
    read = {name for p in protos for name in p.input} | graph_outputs
    names = {p.name for p in protos}
    out: list[onnx.NodeProto] = []
    for p in protos:
        out.append(p)
        for i, o in enumerate(p.output):
            if o and o not in read:
                name = f"{p.name}/release{i}"
                while name in names:
                    name += "_"
                names.add(name)
                out.append(onnx.helper.make_node("Identity", [o], [f"{o}/released"], name=name))
    return out


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


# ---------------------------------------------------------------------------------------------------
# ONNX Runtime's execution order (PRIORITY_BASED): the lowered file must list nodes in the order it runs
# ---------------------------------------------------------------------------------------------------

_HIGH_PRIORITY = ("Shape", "Size")


def ort_execution_order(model: onnx.ModelProto) -> list[str]:
    """The order ONNX Runtime's PRIORITY_BASED execution runs a graph whose nodes all have kernels.

    Kahn's algorithm over node-to-node edges; among ready nodes Shape and Size go first, then the
    lowest node index (ORT ``PriorityNodeCompare``; node priorities are 0 outside training builds).
    Constant nodes are left out: ORT turns them into initializers. Names as ``node_keys``.
    """
    keys = node_keys(model)
    nodes = [(k, n) for k, n in zip(keys, model.graph.node)
             if not (n.op_type == "Constant" and n.domain in ("", "ai.onnx"))]
    producer = {o: i for i, (_, n) in enumerate(nodes) for o in n.output if o}
    succs: list[set[int]] = [set() for _ in nodes]
    indeg = [0] * len(nodes)
    for i, (_, n) in enumerate(nodes):
        preds = {producer[x] for x in n.input if x in producer}
        for p in preds:
            succs[p].add(i)
        indeg[i] = len(preds)

    def prio(i: int) -> tuple[int, int]:
        return (0 if nodes[i][1].op_type in _HIGH_PRIORITY else 1, i)
    ready = [prio(i) for i in range(len(nodes)) if indeg[i] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, i = heapq.heappop(ready)
        order.append(nodes[i][0])
        for s in sorted(succs[i]):
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(ready, prio(s))
    if len(order) != len(nodes):
        raise ModelError("the graph has a cycle")
    return order


def order_for_ort(model: onnx.ModelProto, *, in_place: bool = False) -> onnx.ModelProto:
    """A copy (``in_place``: ``model`` itself) whose node list is ``ort_execution_order`` (Constant nodes
    first), so the file order is the executed order. It moves only Shape/Size nodes of a topologically sorted
    graph (they run as soon as their input exists); any other move means the file was not topologically
    sorted."""
    keys = node_keys(model)
    by_key = dict(zip(keys, model.graph.node))
    consts = [n for n in model.graph.node if n.op_type == "Constant" and n.domain in ("", "ai.onnx")]
    order = consts + [by_key[k] for k in ort_execution_order(model)]
    if in_place:  # the node protos are copied (small), never the weights
        order = [_copied(n) for n in order]
        out = model
    else:
        out = onnx.ModelProto()
        out.CopyFrom(model)
    del out.graph.node[:]
    out.graph.node.extend(order)
    return out


def _copied(node: onnx.NodeProto) -> onnx.NodeProto:
    c = onnx.NodeProto()
    c.CopyFrom(node)
    return c
