"""The forward half of a training graph: training-mode rewrites of forward nodes, and the loss.

Each forward node becomes a :class:`FwdOp`: the node as gradient rules see it, plus values its lowering
saved for the backward. Most nodes are kept as they are. Rewrites:

- BatchNormalization (inference form, or training_mode=1 with three outputs): decomposed into
  ReduceMean/Sub/Mul/Sqrt/Reciprocal ops that use batch statistics (the node producing Y keeps the
  BatchNormalization node's name, the others are ``<name>/<k>``) (the CUDA provider does not run
  BatchNormalization's training mode at opset >= 14), plus the running-statistics update
  ``running * momentum + batch_stat * (1 - momentum)`` with the population variance, as the ONNX
  specification (and ONNX Runtime) define it. x̂, 1/σ and the reshaped scale are saved.
- InstanceNormalization: decomposed the same way, statistics per sample over the spatial axes, no running
  statistics (torch exports GroupNorm through it).
- Dropout: ``training_mode`` set to true and the mask output added (the backward reuses the mask; a
  recomputation would draw a new one).
- MaxPool: the Indices output added. LayerNormalization: the Mean and InvStdDev outputs added.

Loss (named "loss", the mean over the batch): "cross-entropy" is -mean(log_softmax(y)[label]) over
every sample, pixel or token, as LogSoftmax + GatherElements + ReduceSum (SoftmaxCrossEntropyLoss
would be one node, but stock onnxruntime-gpu has no CUDA kernel for it: that kernel is built only into
ORT's training packages); its gradient is (softmax - onehot) / count, the one-hot part as a
ScatterElements add at the labels, so no [N, C, ...] one-hot tensor exists. "mse" is
ReduceMean((y - labels)^2) over all elements.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper

from remc.ir.errors import ModelError

from .emit import Emitter

LOSSES = ("cross-entropy", "mse")


@dataclass
class FwdOp:
    """A forward node as the gradient rules see it, with the values its lowering saved."""

    node: onnx.NodeProto
    saved: dict[str, str] = field(default_factory=dict)


@dataclass
class RunningUpdate:
    """An updated running statistic: graph output ``<stat>.updated``."""

    stat: str
    value: str


def _attrs(node: onnx.NodeProto) -> dict[str, Any]:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _with_outputs(node: onnx.NodeProto, outputs: list[str], inputs: list[str] | None = None) -> onnx.NodeProto:
    new = onnx.NodeProto()
    new.CopyFrom(node)
    del new.output[:]
    new.output.extend(outputs)
    if inputs is not None:
        del new.input[:]
        new.input.extend(inputs)
    return new


def _complete_outputs(em: Emitter, node: onnx.NodeProto, n: int, suffixes: list[str]) -> list[str]:
    outs = list(node.output) + [""] * (n - len(node.output))
    base = node.output[0]
    for k in range(1, n):
        if not outs[k]:
            outs[k] = em.names.value(f"{base}.{suffixes[k - 1]}")
    return outs


def _normalize(em: Emitter, node: onnx.NodeProto, x: str, scale: str, bias: str, axes: list[int], c: int,
               rank: int, dtype: int) -> tuple[str, str, str, str, str]:
    """Emit y = scale * (x - mean) / sqrt(var + eps) + bias with statistics over `axes` (inside the node's
    scope), writing y to the node's first output. Returns (mean, var, x_hat, 1/sigma, scale reshaped): what
    BatchNormalization's running updates and the gradient rule of both normalizations read."""
    eps = float(_attrs(node).get("epsilon", 1e-5))
    bshape = [1, c] + [1] * (rank - 2)
    mean = em.reduce_mean(x, axes, keepdims=True)
    xc = em.op("Sub", x, mean)
    var = em.reduce_mean(em.op("Mul", xc, xc), axes, keepdims=True)
    invstd = em.op("Reciprocal", em.op("Sqrt", em.op("Add", var, em.scalar(eps, dtype))))
    xhat = em.op("Mul", xc, invstd)
    scale_r = em.reshape(scale, bshape)
    y = em.op("Mul", xhat, scale_r)
    em.op("Add", y, em.reshape(bias, bshape), out=node.output[0], node_name=node.name)
    return mean, var, xhat, invstd, scale_r


def lower_batch_norm(em: Emitter, node: onnx.NodeProto, shapes: dict[str, tuple[int, ...]],
                     dtypes: dict[str, int]) -> tuple[FwdOp, list[RunningUpdate]]:
    """Batch-statistics BatchNormalization from elementary ops (see the module docstring)."""
    x, scale, bias, rmean, rvar = node.input
    momentum = float(_attrs(node).get("momentum", 0.9))
    xs = shapes[x]
    c, r = xs[1], len(xs)
    with em.scope(node.name):
        mean, var, xhat, invstd, scale_r = _normalize(em, node, x, scale, bias, [0] + list(range(2, r)), c, r,
                                                      dtypes[x])
        updates = []
        for k, (stat, batch_stat) in enumerate(((rmean, mean), (rvar, var))):
            sdt = dtypes[stat]
            old = em.op("Mul", stat, em.scalar(momentum, sdt))
            new = em.op("Mul", em.reshape(batch_stat, [c]), em.scalar(1.0 - momentum, sdt))
            out = node.output[k + 1] if len(node.output) > k + 1 and node.output[k + 1] else None
            updates.append(RunningUpdate(stat, em.op("Add", old, new, out=out)))
    return FwdOp(node, {"xhat": xhat, "invstd": invstd, "scale": scale_r}), updates


def lower_instance_norm(em: Emitter, node: onnx.NodeProto, shapes: dict[str, tuple[int, ...]],
                        dtypes: dict[str, int]) -> FwdOp:
    """InstanceNormalization from elementary ops, statistics per sample and channel over the spatial axes
    (torch exports GroupNorm as Reshape + InstanceNormalization + Mul + Add); saves what BN's does."""
    x, scale, bias = node.input
    xs = shapes[x]
    c, r = xs[1], len(xs)
    if r < 3:
        raise ModelError(f"InstanceNormalization {node.name!r}: input {x!r} has rank {r}, the operator needs "
                         f"rank >= 3 ([N, C, D1, ...])")
    with em.scope(node.name):
        _, _, xhat, invstd, scale_r = _normalize(em, node, x, scale, bias, list(range(2, r)), c, r, dtypes[x])
    return FwdOp(node, {"xhat": xhat, "invstd": invstd, "scale": scale_r})


def lower_forward(em: Emitter, nodes: list[onnx.NodeProto], shapes: dict[str, tuple[int, ...]],
                  dtypes: dict[str, int]) -> tuple[list[FwdOp], list[RunningUpdate]]:
    """Emit the training-mode forward graph; return its FwdOps and the running-statistics updates."""
    ops: list[FwdOp] = []
    updates: list[RunningUpdate] = []
    for node in nodes:
        if node.domain not in ("", "ai.onnx"):
            em.add_node(node)
            ops.append(FwdOp(node))
        elif node.op_type == "BatchNormalization":
            op, ups = lower_batch_norm(em, node, shapes, dtypes)
            ops.append(op)
            updates += ups
        elif node.op_type == "InstanceNormalization":
            ops.append(lower_instance_norm(em, node, shapes, dtypes))
        elif node.op_type == "Dropout":
            outs = _complete_outputs(em, node, 2, ["mask"])
            ins = (list(node.input) + [""])[:2] + [em.const(np.array(True))]
            new = _with_outputs(node, outs, ins)
            em.add_node(new)
            ops.append(FwdOp(new))
        elif node.op_type == "MaxPool":
            new = _with_outputs(node, _complete_outputs(em, node, 2, ["indices"]))
            em.add_node(new)
            ops.append(FwdOp(new))
        elif node.op_type == "LayerNormalization":
            new = _with_outputs(node, _complete_outputs(em, node, 3, ["mean", "invstd"]))
            em.add_node(new)
            ops.append(FwdOp(new))
        else:
            em.add_node(node)
            ops.append(FwdOp(node))
    return ops, updates


# ---- loss -----------------------------------------------------------------------------------------
@dataclass
class Loss:
    """The loss subgraph: its label input, and how to seed the gradient of the model output."""

    kind: str
    logits: str
    label: onnx.ValueInfoProto
    value: str
    saved: dict[str, str]
    class_axis: int


def build_loss(em: Emitter, kind: str, logits: str, shapes: dict[str, tuple[int, ...]],
               dtypes: dict[str, int], label_name: str, class_axis: int) -> Loss:
    """Emit the loss nodes (scope "loss") producing the scalar value "loss"."""
    ys, dt = shapes[logits], dtypes[logits]
    for name in (label_name, "loss"):
        if name in em.names.values:
            raise ModelError(f"the model already has a value named {name!r}; choose another label_name or "
                             f"rename the model's value")
    em.names.values.add(label_name)
    with em.scope("loss"):
        if kind == "mse":
            label = helper.make_tensor_value_info(label_name, dt, list(ys))
            diff = em.op("Sub", logits, label_name, name="diff")
            sq = em.op("Mul", diff, diff, name="square")
            value = em.op("ReduceMean", sq, keepdims=0, out="loss", node_name=em.names.node("loss"))
            return Loss(kind, logits, label, value, {"diff": diff}, 1)
        if len(ys) < 2:
            raise ModelError(f"cross-entropy needs logits of rank >= 2 ([N, C, ...]); output {logits!r} "
                             f"has shape {list(ys)}")
        ca = class_axis % len(ys)
        lshape = [d for a, d in enumerate(ys) if a != ca]
        label = helper.make_tensor_value_info(label_name, TensorProto.INT64, lshape)
        count = int(np.prod(lshape))
        log_prob = em.op("LogSoftmax", logits, axis=ca, name="log_softmax")
        idx = em.op("Unsqueeze", label_name, em.ints([ca]), name="label_index")
        picked = em.op("GatherElements", log_prob, idx, axis=ca, name="pick")
        total = em.op("ReduceSum", picked, keepdims=0, name="sum")
        value = em.op("Mul", total, em.scalar(-1.0 / count, dt), out="loss", node_name=em.names.node("loss"))
        return Loss(kind, logits, label, value, {"log_prob": log_prob, "index": idx}, ca)


def seed_gradient(em: Emitter, loss: Loss, shapes: dict[str, tuple[int, ...]], dtypes: dict[str, int]) -> str:
    """d loss / d logits, emitted in scope "loss/grad"."""
    ys, dt = shapes[loss.logits], dtypes[loss.logits]
    n = int(np.prod(ys))
    with em.scope("loss/grad"):
        if loss.kind == "mse":
            return em.op("Mul", loss.saved["diff"], em.scalar(2.0 / n, dt))
        # softmax / count everywhere, minus 1 / count at each label (ScatterElements adds it)
        ca = loss.class_axis
        count = n // ys[ca]
        g = em.op("Mul", em.op("Exp", loss.saved["log_prob"]), em.scalar(1.0 / count, dt))
        ishape = [1 if a == ca else d for a, d in enumerate(ys)]
        minus = em.op("ConstantOfShape", em.ints(ishape),
                      value=helper.make_tensor("value", dt, [1], [-1.0 / count]))
        return em.op("ScatterElements", g, loss.saved["index"], minus, axis=ca, reduction="add")
