"""The forward half of a training graph: training-mode rewrites of forward nodes, and the loss.

Each forward node becomes a :class:`FwdOp`: the node as gradient rules see it, plus values its lowering
saved for the backward. Most nodes are kept as they are. Rewrites:

- BatchNormalization (inference form, or training_mode=1 with three outputs): decomposed into
  ReduceMean/Sub/Mul/Sqrt/Reciprocal ops that use batch statistics (the node producing Y keeps the
  BatchNormalization node's name, the others are ``<name>/<k>``) (the CUDA provider does not run
  BatchNormalization's training mode at opset >= 14), plus the running-statistics update
  ``running * momentum + batch_stat * (1 - momentum)`` with the population variance, as the ONNX
  specification (and ONNX Runtime) define it. x̂, 1/σ and the reshaped scale are saved.
- Dropout: ``training_mode`` set to true and the mask output added (the backward reuses the mask; a
  recomputation would draw a new one).
- MaxPool: the Indices output added. LayerNormalization: the Mean and InvStdDev outputs added.

Loss (named "loss", the mean over the batch): "cross-entropy" is SoftmaxCrossEntropyLoss with
reduction="mean" (over every sample, pixel or token) and its log_prob output; "mse" is
ReduceMean((y - labels)^2) over all elements.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper

from remc.errors import ModelError

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


def _attrs(node: onnx.NodeProto) -> dict[str, object]:
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


def lower_batch_norm(em: Emitter, node: onnx.NodeProto, shapes: dict[str, tuple[int, ...]],
                     dtypes: dict[str, int]) -> tuple[FwdOp, list[RunningUpdate]]:
    """Batch-statistics BatchNormalization from elementary ops (see the module docstring)."""
    x, scale, bias, rmean, rvar = node.input
    attrs = _attrs(node)
    eps, momentum = float(attrs.get("epsilon", 1e-5)), float(attrs.get("momentum", 0.9))
    xs = shapes[x]
    c, r = xs[1], len(xs)
    axes = [0] + list(range(2, r))
    bshape = [1, c] + [1] * (r - 2)
    dt = dtypes[x]
    with em.scope(node.name):
        mean = em.reduce_mean(x, axes, keepdims=True)
        xc = em.op("Sub", x, mean)
        var = em.reduce_mean(em.op("Mul", xc, xc), axes, keepdims=True)
        invstd = em.op("Reciprocal", em.op("Sqrt", em.op("Add", var, em.scalar(eps, dt))))
        xhat = em.op("Mul", xc, invstd)
        scale_r = em.reshape(scale, bshape)
        y = em.op("Mul", xhat, scale_r)
        em.op("Add", y, em.reshape(bias, bshape), out=node.output[0], node_name=node.name)
        updates = []
        for k, (stat, batch_stat) in enumerate(((rmean, mean), (rvar, var))):
            sdt = dtypes[stat]
            old = em.op("Mul", stat, em.scalar(momentum, sdt))
            new = em.op("Mul", em.reshape(batch_stat, [c]), em.scalar(1.0 - momentum, sdt))
            out = node.output[k + 1] if len(node.output) > k + 1 and node.output[k + 1] else None
            updates.append(RunningUpdate(stat, em.op("Add", old, new, out=out)))
    return FwdOp(node, {"xhat": xhat, "invstd": invstd, "scale": scale_r}), updates


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
            value = em.op("ReduceMean", sq, keepdims=0, name="mean", out="loss")
            return Loss(kind, logits, label, value, {"diff": diff}, 1)
        if len(ys) < 2:
            raise ModelError(f"cross-entropy needs logits of rank >= 2 ([N, C, ...]); output {logits!r} "
                             f"has shape {list(ys)}")
        ca = class_axis % len(ys)
        t = logits
        if ca != 1:
            perm = [0, ca] + [a for a in range(1, len(ys)) if a != ca]
            t = em.op("Transpose", logits, perm=perm, name="transpose")
        tshape = [ys[0], ys[ca]] + [d for a, d in enumerate(ys) if a not in (0, ca)]
        label = helper.make_tensor_value_info(label_name, TensorProto.INT64, [tshape[0]] + tshape[2:])
        outs = em.op_n("SoftmaxCrossEntropyLoss", [t, label_name], 2, name="cross_entropy",
                       outs=["loss", em.names.value("loss.log_prob")], reduction="mean")
        return Loss(kind, logits, label, outs[0], {"log_prob": outs[1], "logits_t": t}, ca)


def seed_gradient(em: Emitter, loss: Loss, shapes: dict[str, tuple[int, ...]], dtypes: dict[str, int]) -> str:
    """d loss / d logits, emitted in scope "loss/grad"."""
    ys, dt = shapes[loss.logits], dtypes[loss.logits]
    n = int(np.prod(ys))
    with em.scope("loss/grad"):
        if loss.kind == "mse":
            return em.op("Mul", loss.saved["diff"], em.scalar(2.0 / n, dt))
        ca = loss.class_axis
        c = ys[ca]
        rank = len(ys)
        classes = em.const(np.arange(c, dtype=np.int64).reshape([1, c] + [1] * (rank - 2)))
        onehot = em.op("Cast", em.op("Equal", em.unsqueeze(loss.label.name, [1]), classes), to=dt)
        prob = em.op("Exp", loss.saved["log_prob"])
        g = em.op("Mul", em.op("Sub", prob, onehot), em.scalar(c / n, dt))
        if ca != 1:
            perm = [0, ca] + [a for a in range(1, rank) if a != ca]
            g = em.transpose(g, list(np.argsort(perm)))
        return g
