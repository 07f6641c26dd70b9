"""Random nodes of a training graph: fixed seeds, and which graph outputs they reach.

ONNX Runtime draws a random op's numbers from a generator per kernel. With a ``seed`` attribute the
generator starts from that seed in every session, and advances once per run, so two sessions of graphs
that hold the same random nodes with the same seeds draw the same numbers run after run (checked on
onnxruntime 1.32 CPU for every op of ``RANDOM_OPS``: two fresh sessions, two runs each; the CUDA Dropout
kernel, ``onnxruntime/core/providers/cuda/nn/dropout.h``, also makes its own PhiloxGenerator from the
seed attribute, not run here). Without one,
Dropout seeds itself differently in every session, so ``remc run --compare`` of a graph with Dropout
against itself differs. Lowering copies node protos with their attributes, and a random node is never
recomputed (``dagbuild`` marks its unit ``no_recompute``), so a seeded graph and its compiled versions
draw the same masks.

The seed attribute is an int for Dropout and a float for the others; every seed here is below 2**24, so
it is exact as a float32.
"""
from __future__ import annotations

import zlib
from collections.abc import Iterable

import onnx
from onnx import helper

RANDOM_OPS = frozenset({"Dropout", "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                        "Bernoulli", "Multinomial"})
"""ONNX ops that draw random numbers."""
SEED_RANGE = 1 << 24
"""Seeds are in [0, SEED_RANGE): exact as float32, the type of every seed attribute but Dropout's."""


def is_random(node: onnx.NodeProto) -> bool:
    """True for a node of a random op of the default domain."""
    return node.domain in ("", "ai.onnx") and node.op_type in RANDOM_OPS


def node_seed(seed: int, key: str) -> int:
    """The seed of the random node named ``key`` for the model-wide ``seed``: a hash of both, so each
    node draws its own stream and a node's seed does not depend on the others or on their order."""
    return zlib.crc32(f"{int(seed)}/{key}".encode()) % SEED_RANGE


def _seed_attr(node: onnx.NodeProto) -> onnx.AttributeProto | None:
    return next((a for a in node.attribute if a.name == "seed"), None)


def seed_random_ops(model: onnx.ModelProto, seed: int = 0, *, override: bool = False) -> list[str]:
    """Give every random node of ``model`` a ``seed`` attribute, in place; return the names of the nodes
    seeded. Nodes that already have one keep it unless ``override``. Unnamed nodes are keyed by op type
    and index, as ``node_keys`` names them."""
    seeded = []
    for k, node in enumerate(model.graph.node):
        if not is_random(node):
            continue
        old = _seed_attr(node)
        if old is not None and not override:
            continue
        if old is not None:
            node.attribute.remove(old)
        key = node.name or f"{node.op_type}_{k}"
        value = node_seed(seed, key)
        node.attribute.append(helper.make_attribute("seed", value if node.op_type == "Dropout" else float(value)))
        seeded.append(key)
    return seeded


def unseeded_random_nodes(model: onnx.ModelProto) -> list[str]:
    """Names of the random nodes without a ``seed`` attribute (their draws differ between sessions)."""
    return [n.name or f"{n.op_type}_{k}" for k, n in enumerate(model.graph.node)
            if is_random(n) and _seed_attr(n) is None]


def random_outputs(model: onnx.ModelProto, outputs: Iterable[str] | None = None) -> dict[str, list[str]]:
    """For each graph output (or each of ``outputs``) that depends on a random node: the random nodes it
    depends on, in node order. Outputs that depend on none are left out."""
    reach: dict[str, set[int]] = {}
    for k, node in enumerate(model.graph.node):
        srcs: set[int] = {k} if is_random(node) else set()
        for name in node.input:
            srcs |= reach.get(name, set())
        if srcs:
            for name in node.output:
                if name:
                    reach[name] = srcs
    names = list(outputs) if outputs is not None else [o.name for o in model.graph.output]
    nodes = model.graph.node
    return {o: [nodes[k].name or f"{nodes[k].op_type}_{k}" for k in sorted(reach[o])]
            for o in names if reach.get(o)}
