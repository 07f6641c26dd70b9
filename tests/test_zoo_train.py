"""Zoo training graphs (``remc.zoo.export(train=True)``) at small size run on ONNX Runtime CPU."""
from __future__ import annotations

import time

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from remc import zoo

pytest.importorskip("remc.passes.grad", reason="the gradient builder (passes/grad) is not there yet")
if not hasattr(__import__("remc.passes.grad", fromlist=["_"]), "build_training_graph"):
    pytest.skip("remc.passes.grad has no build_training_graph yet", allow_module_level=True)


def _feeds(model: onnx.ModelProto, classes: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Random data for every graph input: floats N(0, 1), integers (labels, token ids) in [0, classes)."""
    rng = np.random.RandomState(seed)
    feeds = {}
    for vi in model.graph.input:
        t = vi.type.tensor_type
        shape = [d.dim_value for d in t.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
        if dtype.kind in "iu":
            feeds[vi.name] = rng.randint(0, classes, size=shape).astype(dtype)
        else:
            feeds[vi.name] = rng.standard_normal(shape).astype(dtype)
    return feeds


@pytest.mark.parametrize("name", zoo.list_models())
def test_small_training_graph_runs(name: str) -> None:
    config = zoo.small_config(name)
    batch = config.pop("batch")
    model = zoo.export(name, batch, train=True, **config)
    onnx.checker.check_model(model)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    classes = config.get("num_classes", config.get("vocab_size"))
    start = time.perf_counter()
    outputs = sess.run(None, _feeds(model, classes))
    assert time.perf_counter() - start < 2.0
    names = [o.name for o in sess.get_outputs()]
    forward = zoo.build(name, batch, **config)
    n_params = sum(role == "param" for role in zoo.initializer_roles(forward).values())
    assert len(outputs) >= n_params + 1, names
    scalars = [v for v in outputs if np.ndim(v) == 0]
    assert scalars, f"{name}: no scalar loss among outputs {names}"
    for out_name, value in zip(names, outputs):
        assert np.isfinite(value).all(), f"{name}: {out_name} is not finite"
    grads = [v for v in outputs if np.ndim(v) > 0 and v.dtype == np.float32]
    assert any(np.abs(g).max() > 0 for g in grads), f"{name}: every gradient is zero"
