"""Training-graph construction: forward + loss + backward from a forward ONNX model, in standard ONNX ops.

ONNX Runtime's training packages are deprecated and their gradient ops do not run on stock onnxruntime,
so remc differentiates the model itself. The result runs on stock onnxruntime (CPU and CUDA) with graph
optimizations disabled.

API::

    build_training_graph(model, loss="cross-entropy" | "mse", *, label_name="labels", batch=None,
                         trainable=None, class_axis=None, seed=None) -> onnx.ModelProto
    is_backward_node(node) -> bool

The training graph
    - inputs: the model's data inputs (static shapes; a symbolic batch dimension is bound to ``batch``,
      any other dynamic dimension is a ModelError naming the input) and the labels ``label_name``:
      int64 class ids for cross-entropy ([N] for [N, C] logits, [N, d1, ...] for [N, C, d1, ...]
      segmentation logits, [N, T] for [N, T, V] language-model logits), the output's shape and dtype for mse;
    - outputs: ``loss`` (a scalar: the mean over the batch, and over pixels/tokens for dense outputs,
      or over all elements for mse), then ``grad.<name>`` for every trainable initializer in initializer
      order, then ``<running stat>.updated`` for every BatchNormalization running mean/var (updated with
      the node's momentum from the batch statistics the training graph normalizes with);
    - parameters stay initializers;
    - every random node (Dropout, RandomUniformLike, ...) has a ``seed`` attribute, so that every session
      of the graph, and of graphs compiled from it, draws the same numbers (``remc.passes.random_ops``).

Trainable: float initializers of rank >= 1 that reach the loss through differentiable inputs, unless
their doc_string is "constant" or "buffer" (``trainable=[...]`` overrides the candidates). Non-float
initializers, shape constants and values folded from them are never trainable.

Class axis of cross-entropy logits: 1, except for language models ([N, T, V] logits of int64 token ids
[N, T], or a remc.zoo model of task "language-model"), where it is the last axis; ``class_axis`` overrides.

Opset: the model's own when >= 16 (scatter with reduction needs 16); 13..15 (and older models the
converter can handle) are upgraded to opset 17 with onnx.version_converter. IR version <= 10.

Naming convention (how a scheduler tells forward from backward): every backward node's name contains
``/grad/``: ``<forward node name>/grad/<k>`` for the nodes of one forward node's gradient rule (and for
the Sum that accumulates the gradient of a value the forward node produces), ``<initializer>/grad/<k>``
for accumulating a parameter's gradient, ``loss/grad/<k>`` for the loss's gradient. Forward nodes keep
their names (unnamed ones become ``<OpType>_<index>``; a forward name containing ``/grad/`` has it
rewritten to ``/grad_/``). Nodes from decomposing a forward node (BatchNormalization) are named
``<forward node>/<k>``, except the one producing its output, which keeps the forward node's name.

Ops with gradient rules: see ``supported_ops()``; an op on the path from a parameter to the loss without
one raises UnsupportedOpError ("no gradient rule for op X (node Y)").
"""
from __future__ import annotations

from dataclasses import dataclass

import onnx

from .build import build_training_graph, requires_grad, trainable_candidates
from .forward import LOSSES
from .registry import RULES

__all__ = ["build_training_graph", "is_backward_node", "supported_ops", "BuildTrainingGraph", "LOSSES",
           "BACKWARD_MARKER", "trainable_candidates", "requires_grad"]

BACKWARD_MARKER = "/grad/"
"""Substring of every backward node's name, and of no forward node's name."""


def is_backward_node(node: onnx.NodeProto) -> bool:
    """True for the nodes of the backward pass of a graph built by ``build_training_graph``."""
    return BACKWARD_MARKER in node.name


def supported_ops() -> list[str]:
    """Forward ops with a gradient rule, sorted."""
    return sorted(RULES)


@dataclass(frozen=True)
class BuildTrainingGraph:
    """Pass: forward model -> training graph (see the module docstring)."""

    name = "grad"
    loss: str = "cross-entropy"
    """Loss: "cross-entropy" or "mse"."""
    label_name: str = "labels"
    """Name of the labels graph input."""
    batch: int | None = None
    """Binds a symbolic batch dimension of the inputs."""
    seed: int | None = None
    """Seed of every random node (None: 0 for nodes without a seed of their own; see random_ops)."""

    def apply(self, model: onnx.ModelProto) -> onnx.ModelProto:
        """Return the training graph of ``model``."""
        return build_training_graph(model, self.loss, label_name=self.label_name, batch=self.batch,
                                    seed=self.seed)


