"""From the graph IR to the scheduling DAG: units, their bytes, workspace, costs and dependencies.

A unit is a list of ONNX nodes in execution order (one node each at fine granularity; see
``passes/coarsen.py`` for larger units). For a unit v:

- M_v: bytes of the outputs that nodes outside v read, except kept values (graph outputs), which are K_v:
  held from v's first computation to the end (the paper puts them in the constant overhead, U_init, from the
  start; the device holds a gradient only once it is computed).
- W_v (workspace): what v needs beyond M_v while it runs: the most bytes, over v's nodes in order, of
  its internal values (read only inside v), dead outputs (read by nobody), outputs produced so far and the
  running node's kernel scratch (``kernel_scratch``) alive at once, less M_v (at least 0). The schedule
  holds M_v + W_v while v runs and M_v afterwards, so M_v + W_v is v's exact peak over its inputs.
- C_v: the sum of its nodes' costs.

Backward units are those the loss does not depend on: the forward pass is the set of ancestors of the
loss (a scalar graph output, preferably named 'loss'). Units holding a random op are never recomputed.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..ir.dag import DAG
from ..ir.graph import Graph, Node, Value
from .random_ops import RANDOM_OPS


def loss_value(graph: Graph) -> Value | None:
    """The loss: the graph output named 'loss', else the only scalar (one-element) float output."""
    for v in graph.outputs:
        if v.name == "loss":
            return v
    scalars = [v for v in graph.outputs if int(np.prod(v.shape)) == 1 and v.dtype.kind == "f"]
    return scalars[0] if len(scalars) == 1 else None


def forward_nodes(graph: Graph) -> set[Node]:
    """Nodes the loss depends on (all nodes when the graph has no loss)."""
    loss = loss_value(graph)
    if loss is None or loss.producer is None:
        return set(graph.nodes)
    seen: set[Node] = set()
    stack = [loss.producer]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        stack.extend(v.producer for v in n.inputs if v is not None and v.producer is not None)
    return seen


def kernel_scratch(node: Node, device: str = "cpu") -> int:
    """Bytes a kernel allocates for itself while ``node`` runs on ``device``, beyond its outputs.

    CUDA: a ConvTranspose (the input gradient of a Conv), and a Conv whose kernel is computed (not a
    parameter: the weight gradient, passes/grad/rules_nn.py, whose kernel is the whole output-gradient
    map), get bytes(X) + bytes(kernel) + bytes(Y). Observed on an H100/H200 with onnxruntime-gpu 1.31.1,
    ``cudnn_conv_algo_search=HEURISTIC`` and ``cudnn_conv_use_max_workspace=0`` (single requests when
    plans ran out of memory): X + kernel for ResNet50 b32's layer4.0/downsample weight gradient
    (38.5 MB), X + kernel + Y for U-Net b4 416x608's decoder/conv4 weight gradient (259 MB), X + Y for
    ResNet50 b32's layer2.0/downsample input gradient (ConvTranspose, 154 MB). Convolutions with
    parameter kernels get 0 on CUDA (none ran out of memory at one).

    CPU: 0. Not modeled: MLAS' convolution working buffer (up to min(threads, N * group) column
    buffers of (C/group) * prod(kernel) * prod(output spatial) floats, by thread count and shape) and
    ConvTranspose's column buffer ((C_out/group) * prod(kernel) * prod(input spatial) elements).
    """
    if device.split(":")[0] != "cuda" or node.op_type not in ("Conv", "ConvTranspose"):
        return 0
    if len(node.inputs) < 2 or node.inputs[1] is None:
        return 0
    if node.op_type == "Conv" and node.inputs[1].producer is None:
        return 0
    return node.inputs[0].nbytes + node.inputs[1].nbytes + sum(v.nbytes for v in node.outputs)


def fine_units(graph: Graph) -> list[list[Node]]:
    """One unit per node, in graph order."""
    return [[n] for n in graph.nodes]


def build_dag(graph: Graph, costs: dict[str, float], units: Sequence[Sequence[Node]] | None = None, *,
              granularity: str = "fine", device: str = "cpu", scratch: Mapping[str, int] | None = None,
              prepacked: int = 0, granule: int = 1, rounding: int = 0) -> DAG:
    """The scheduling DAG of ``graph`` partitioned into ``units`` (default: one per node), for running on
    ``device`` (its kernel scratch is part of W_v). ``scratch``: bytes of kernel scratch measured on the device
    per node name (``backends.scratch.KernelMemory.scratch``); a node's scratch is then the larger of that and
    ``kernel_scratch`` (which a plan check without the device repeats, so a plan valid here stays valid there).
    ``prepacked``: bytes the device holds for the whole run beyond the graph's constant (CPU: the weight copies
    MLAS packs at session creation, measured), added to the constant overhead. ``granule``: each kept output's
    bytes rounded up to it (the allocator's; 256 on remc's CPU placement); ``rounding``: bytes the device holds
    beyond the graph's inputs and parameters (CPU: the small initializers' 256-byte rounding), added to the
    constant overhead.

    ``units`` must list every node once, each unit in execution order, the units in a topological order.
    """
    units = [list(u) for u in (units if units is not None else fine_units(graph))]
    unit_of: dict[Node, int] = {n: k for k, u in enumerate(units) for n in u}
    if len(unit_of) != len(graph.nodes):
        raise ValueError("units must cover every node exactly once")
    kept = graph.kept
    fwd = forward_nodes(graph)
    mem = np.zeros(len(units), dtype=np.int64)
    work = np.zeros(len(units), dtype=np.int64)
    first = np.zeros(len(units), dtype=np.int64)
    edges: set[tuple[int, int]] = set()
    for k, unit in enumerate(units):
        for n in unit:
            for v in n.inputs:
                if v is not None and v.producer is not None and unit_of[v.producer] != k:
                    j = unit_of[v.producer]
                    if j > k:
                        raise ValueError(f"unit order is not topological: {n.name!r} reads {v.name!r}")
                    edges.add((j, k))
        # M_v + W_v is the unit's peak; an output not yet produced takes no memory, so W_v is not the
        # internal peak on top of all of M_v
        peak, mem[k] = unit_peak(unit, kept, device, scratch)
        work[k] = max(0, peak - mem[k])
        first[k] = unit_peak(unit, kept, device, scratch, granule=granule, with_kept=True)[0] - mem[k] - work[k]
    names = tuple(_unit_name(u) for u in units)
    cost = np.array([sum(max(float(costs[n.name]), 0.0) for n in u) for u in units])
    outs = [[v for n in u for v in dict.fromkeys(n.outputs) if v is not None and v in kept] for u in units]
    raw = sum(v.nbytes for vs in outs for v in vs)
    held = np.array([sum(-(-v.nbytes // granule) * granule for v in vs) for vs in outs], dtype=np.int64)
    return DAG(
        names=names, cost=cost, mem=mem, edges=sorted(edges), kept=held, kept_first=np.clip(first, 0, held),
        constant=graph.constant_bytes() - raw + int(prepacked) + int(rounding), workspace=work,
        backward=np.array([not any(n in fwd for n in u) for u in units]),
        no_recompute=np.array([any(n.op_type in RANDOM_OPS for n in u) for u in units]),
        ops=tuple("+".join(dict.fromkeys(n.op_type for n in u)) for u in units),
        members=tuple(tuple(n.name for n in u) for u in units),
        meta={"graph": graph.name, "granularity": granularity, "device": device,
              "input_bytes": sum(v.nbytes for v in graph.inputs)},
    )


def _unit_name(unit: Sequence[Node]) -> str:
    return unit[0].name if len(unit) == 1 else f"{unit[0].name}(+{len(unit) - 1})"


def unit_peak(unit: Sequence[Node], kept: set[Value], device: str = "cpu",
              scratch: Mapping[str, int] | None = None, *, granule: int = 1,
              with_kept: bool = False) -> tuple[int, int]:
    """(peak, outputs): the most bytes the unit's own values hold at once while its nodes run in order
    (internal and dead values until their last use, outputs read outside the unit from when they are
    produced) plus the running node's kernel scratch (``kernel_scratch``, or the larger ``scratch`` measured
    for it); and the bytes of those outputs (M_v). Kept values are counted apart (``DAG.kept``), except with
    ``with_kept``: then they count from when they are produced (each rounded up to ``granule``), as in the unit's
    first computation."""
    scratch = scratch or {}
    inside = set(unit)
    position = {n: i for i, n in enumerate(unit)}
    live = produced = peak = outs = 0
    ends: dict[int, int] = {}
    for i, n in enumerate(unit):
        for v in n.outputs:
            if v in kept:
                if with_kept:
                    produced += -(-v.nbytes // granule) * granule
                    outs += -(-v.nbytes // granule) * granule
                continue
            if any(u.node not in inside for u in v.uses):
                produced += v.nbytes  # part of M_v from now on
                continue
            live += v.nbytes
            last = max((position[u.node] for u in v.uses), default=i)
            ends[last] = ends.get(last, 0) + v.nbytes
        peak = max(peak, produced + live + max(kernel_scratch(n, device), int(scratch.get(n.name, 0))))
        live -= ends.pop(i, 0)
    return peak, produced - outs
