"""The model zoo: forward ONNX builders with random (or shape-only) weights; no downloads.

``build(name, batch, weights=..., seed=..., **size)`` returns a forward ModelProto (opset 20, IR 10)
whose graph input is "input" (float32 [N, 3, H, W]) or "input_ids" (int64 [N, T]) and whose output is
"logits": [N, classes] (classification), [N, classes, H, W] (segmentation) or [N, T, vocab] (gpt2).
``paper_config`` gives the paper's sizes, ``small_config`` tiny ones for tests; both are keyword
arguments for ``build`` (batch included). ``export`` adds the backward graph through
``remc.passes.grad.build_training_graph``.

Initializer roles (``TensorProto.doc_string``): "param" (trainable), "buffer" (BatchNorm running
statistics) and "constant" (masks, scalars, shapes). Model metadata: ``remc.zoo.name``,
``remc.zoo.task``, ``remc.zoo.config`` (JSON of the build arguments), ``remc.zoo.weights``.
Shape-only models have no weight bytes (params and buffers; constants keep theirs): load them with
``onnx.load(path, load_external_data=False)``.
"""
from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import onnx

from remc.ir.errors import ModelError
from remc.zoo.builder import GraphBuilder, is_shape_only
from remc.zoo.gpt2 import build_gpt2
from remc.zoo.mobilenet import build_mobilenet, build_mobilenet_v2
from remc.zoo.resnet import build_resnet50
from remc.zoo.segmentation import build_fcn8, build_segnet, build_unet
from remc.zoo.vgg import build_vgg
from remc.zoo.vit import build_vit

__all__ = ["list_models", "build", "paper_config", "small_config", "export", "param_count",
           "initializer_roles", "model_task", "size_parameters", "is_shape_only", "TASKS"]

TASKS = ("classification", "segmentation", "language-model")


@dataclass(frozen=True)
class ZooEntry:
    """One zoo model: its builder, task and the two standard sizes."""

    builder: Callable[..., onnx.ModelProto]
    """builder(batch, GraphBuilder, **size) -> ModelProto."""
    task: str
    paper: dict[str, Any]
    """The paper's evaluation size (with "batch")."""
    small: dict[str, Any]
    """A tiny size for tests: a CPU training step well under a second."""


_IMAGENET_SMALL = {"batch": 2, "height": 32, "width": 32, "num_classes": 10}
# BatchNorm models end at 2x2 rather than 1x1, so training-mode batch statistics are not degenerate.
_BN_SMALL = {**_IMAGENET_SMALL, "height": 64, "width": 64}
_SEG_PAPER = {"batch": 32, "height": 416, "width": 608, "num_classes": 19}
_SEG_SMALL = {"batch": 2, "height": 32, "width": 64, "num_classes": 5, "width_mult": 1 / 16}

_ZOO: dict[str, ZooEntry] = {
    "vgg16": ZooEntry(partial(build_vgg, 16), "classification",
                      {"batch": 256, "height": 224, "width": 224},
                      {**_IMAGENET_SMALL, "width_mult": 1 / 16, "fc_width": 32}),
    # The paper gives no VGG19 batch for its sweeps; its appendix quotes 167 (TF2 on a V100).
    "vgg19": ZooEntry(partial(build_vgg, 19), "classification",
                      {"batch": 256, "height": 224, "width": 224},
                      {**_IMAGENET_SMALL, "width_mult": 1 / 16, "fc_width": 32}),
    "resnet50": ZooEntry(build_resnet50, "classification",
                         {"batch": 256, "height": 224, "width": 224},
                         {**_BN_SMALL, "width_mult": 1 / 16, "stages": (2, 1, 1, 1)}),
    "mobilenet": ZooEntry(build_mobilenet, "classification",
                          {"batch": 512, "height": 224, "width": 224},
                          {**_BN_SMALL, "width_mult": 0.125}),
    # Not in the paper; sized like MobileNet v1.
    "mobilenet_v2": ZooEntry(build_mobilenet_v2, "classification",
                             {"batch": 512, "height": 224, "width": 224},
                             {**_BN_SMALL, "width_mult": 0.25}),
    "unet": ZooEntry(build_unet, "segmentation", dict(_SEG_PAPER), dict(_SEG_SMALL)),
    "fcn8": ZooEntry(build_fcn8, "segmentation", dict(_SEG_PAPER), {**_SEG_SMALL, "fc_width": 32}),
    "segnet": ZooEntry(build_segnet, "segmentation", dict(_SEG_PAPER), dict(_SEG_SMALL)),
    # Not in the paper: GPT-2 small at its full context.
    "gpt2": ZooEntry(build_gpt2, "language-model",
                     {"batch": 8, "seq_len": 1024, "n_layer": 12, "n_embd": 768, "n_head": 12,
                      "vocab_size": 50257, "n_positions": 1024},
                     {"batch": 2, "seq_len": 8, "n_layer": 2, "n_embd": 16, "n_head": 2,
                      "vocab_size": 50, "n_positions": 16}),
    # Not in the paper: ViT-B/16 (torchvision's vit_b_16 layout) at 224 x 224.
    "vit": ZooEntry(build_vit, "classification",
                    {"batch": 64, "height": 224, "width": 224, "num_classes": 1000, "patch": 16, "n_layer": 12,
                     "n_embd": 768, "n_head": 12, "mlp": 3072},
                    {"batch": 2, "height": 16, "width": 16, "num_classes": 10, "patch": 4, "n_layer": 2,
                     "n_embd": 16, "n_head": 2, "mlp": 32}),
}


def list_models() -> list[str]:
    """Names of the zoo models, in a fixed order."""
    return list(_ZOO)


def _entry(name: str) -> ZooEntry:
    try:
        return _ZOO[name]
    except KeyError:
        raise ModelError(f"unknown zoo model {name!r}; known: {', '.join(_ZOO)}") from None


def paper_config(name: str) -> dict[str, Any]:
    """Keyword arguments of ``build`` (batch included) for the paper's evaluation size."""
    return dict(_entry(name).paper)


def small_config(name: str) -> dict[str, Any]:
    """Keyword arguments of ``build`` (batch included) for a tiny test-sized model."""
    return dict(_entry(name).small)


def size_parameters(name: str) -> dict[str, Any]:
    """The size keyword arguments ``build`` accepts for ``name``, with their defaults."""
    params = list(inspect.signature(_entry(name).builder).parameters.values())
    return {p.name: p.default for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}


def build(name: str, batch: int = 1, *, weights: str = "random", seed: int = 0,
          **size: Any) -> onnx.ModelProto:
    """Build zoo model ``name`` at ``batch`` with ``weights`` "random" or "shape-only".

    ``size`` overrides the model's size parameters (see ``size_parameters``); unknown ones raise
    ModelError. Random weights are float32 from ``numpy.random.RandomState(seed)``.
    """
    entry = _entry(name)
    known = size_parameters(name)
    unknown = sorted(set(size) - set(known))
    if unknown:
        raise ModelError(f"zoo model {name!r} has no size parameter(s) {unknown}; known: {sorted(known)}")
    if batch < 1:
        raise ModelError(f"batch must be >= 1, got {batch}")
    if weights not in ("random", "shape-only"):
        raise ModelError(f"weights must be 'random' or 'shape-only', got {weights!r}")
    model = entry.builder(batch, GraphBuilder(weights=weights, seed=seed), **size)
    config = {"batch": batch, **known, **size}
    onnx.helper.set_model_props(model, {
        "remc.zoo.name": name, "remc.zoo.task": entry.task, "remc.zoo.weights": weights,
        "remc.zoo.config": json.dumps(config, sort_keys=True, default=list)})
    return model


def model_task(model: onnx.ModelProto) -> str | None:
    """The zoo task of ``model`` ("classification", "segmentation", "language-model"), None if not a zoo model."""
    props = {p.key: p.value for p in model.metadata_props}
    return props.get("remc.zoo.task")


def initializer_roles(model: onnx.ModelProto) -> dict[str, str]:
    """Initializer name -> role ("param", "buffer", "constant"; "" where unmarked)."""
    return {t.name: t.doc_string for t in model.graph.initializer}


def param_count(model: onnx.ModelProto, roles: tuple[str, ...] = ("param",)) -> int:
    """Number of elements in the initializers whose role is in ``roles`` (default: trainable weights)."""
    return sum(int(np.prod(t.dims, dtype=np.int64)) for t in model.graph.initializer
               if t.doc_string in roles)


def export(name: str, batch: int, *, train: bool, loss: str | None = None,
           **kw: Any) -> onnx.ModelProto:
    """The forward model, or with ``train`` the training graph (forward, loss and backward).

    ``kw`` goes to ``build`` (weights, seed and size parameters). ``loss`` defaults to
    "cross-entropy" (per pixel for segmentation, per token for gpt2).
    """
    model = build(name, batch, **kw)
    if not train:
        if loss is not None:
            raise ModelError("loss is only meaningful with train=True")
        return model
    from remc.passes.grad import build_training_graph  # lazy: the zoo does not need the pass
    return build_training_graph(model, loss=loss or "cross-entropy", seed=kw.get("seed"))
