"""Shape inference on a weightless view and copies without the dropped weights give what the full model does."""
from __future__ import annotations

import numpy as np
import onnx
import pytest

from remc import zoo
from remc.ir.onnx_io import bind_batch, build_graph, import_model, infer_shapes
from remc.ir.onnx_types import _collect_types, copy_model, shapes_view, static_types
from remc.passes.optimizer import OptimizerOptions, append_optimizer


def _step(name: str) -> onnx.ModelProto:
    cfg = {k: v for k, v in zoo.small_config(name).items() if k != "batch"}
    return append_optimizer(zoo.export(name, 2, train=True, **cfg), OptimizerOptions("adamw"))


@pytest.mark.parametrize("name", ["gpt2", "resnet50", "vit"])
def test_static_types_on_the_view_are_the_full_models(name: str) -> None:
    model = _step(name)
    before = model.SerializeToString()
    full = _collect_types(onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False,
                                                            data_prop=True))
    got = static_types(model)
    outs = [o for n in model.graph.node for o in n.output if o]
    assert outs and all(got[o] == full[o] for o in outs)
    assert model.SerializeToString() == before  # the caller's model is not touched
    view = shapes_view(model)
    assert not [t.name for t in view.graph.initializer
                if t.data_type == onnx.TensorProto.FLOAT and int(np.prod(t.dims)) >= 64]


@pytest.mark.parametrize("name", ["gpt2", "mobilenet"])
def test_import_matches_inference_on_the_whole_model(name: str) -> None:
    model = _step(name)
    old = build_graph(infer_shapes(bind_batch(model, None)))
    new = import_model(model)
    assert [n.name for n in new.nodes] == [n.name for n in old.nodes]
    assert {k: (v.shape, v.dtype) for k, v in new.values.items()} == \
        {k: (v.shape, v.dtype) for k, v in old.values.items()}
    assert new.model.SerializeToString() == old.model.SerializeToString()


def test_copy_model_is_copy_then_delete() -> None:
    model = _step("gpt2")
    drop = {t.name for t in model.graph.initializer[::3]}
    want = onnx.ModelProto()
    want.CopyFrom(model)
    kept = [t for t in want.graph.initializer if t.name not in drop]
    del want.graph.initializer[:]
    want.graph.initializer.extend(kept)
    assert copy_model(model, drop=lambda t: t.name in drop).SerializeToString() == want.SerializeToString()
    assert copy_model(model).SerializeToString() == model.SerializeToString()
