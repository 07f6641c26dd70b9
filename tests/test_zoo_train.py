"""Zoo training graphs (``remc.zoo.export(train=True)``) at small size run on ONNX Runtime CPU.

The graph contract (passes/grad): inputs are the model's data input and int64 "labels"; outputs are
"loss", then "grad.<param>" for every trainable initializer, then "<running stat>.updated".
"""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper

from remc import zoo

grad = pytest.importorskip("remc.passes.grad", reason="the gradient builder (passes/grad) is not there yet")
if not hasattr(grad, "build_training_graph"):
    pytest.skip("remc.passes.grad has no build_training_graph yet", allow_module_level=True)

MODELS = zoo.list_models()


def _session(model: onnx.ModelProto) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


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


def _small(name: str, **overrides: object) -> tuple[int, dict, int]:
    config = {**zoo.small_config(name), **overrides}
    batch = config.pop("batch")
    classes = config.get("num_classes", config.get("vocab_size"))
    return batch, config, classes


@pytest.mark.parametrize("name", MODELS)
def test_small_training_graph_runs(name: str) -> None:
    batch, config, classes = _small(name)
    model = zoo.export(name, batch, train=True, **config)
    onnx.checker.check_model(model)
    assert sorted(i.name for i in model.graph.input) == sorted(
        ["input_ids" if name == "gpt2" else "input", "labels"])
    forward = zoo.build(name, batch, **config)
    params = {t.name: list(t.dims) for t in forward.graph.initializer if t.doc_string == "param"}
    sess = _session(model)
    outputs = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, _feeds(model, classes))))
    assert list(outputs)[0] == "loss" and np.ndim(outputs["loss"]) == 0
    assert 0.0 < float(outputs["loss"]) < 10 * np.log(classes)
    grads = {k.removeprefix("grad."): v for k, v in outputs.items() if k.startswith("grad.")}
    assert {k: list(v.shape) for k, v in grads.items()} == params
    for out_name, value in outputs.items():
        assert np.isfinite(value).all(), f"{name}: {out_name} is not finite"
    nonzero = sum(np.abs(g).max() > 0 for g in grads.values())
    assert nonzero >= 0.8 * len(grads), f"{name}: only {nonzero} of {len(grads)} gradients are nonzero"


@pytest.mark.parametrize("name", MODELS)
def test_small_training_gradient_matches_finite_difference(name: str) -> None:
    """Along d = g / |g|, the loss's central difference approaches |g| (dropout off).

    Random small networks with training-mode BatchNorm are sharp (MobileNets: |g| ~ 200), so the step
    is scaled to change the loss by about 1e-3, and the best of three steps must agree within 2%.
    """
    overrides = {"dropout": 0.0} if "dropout" in zoo.size_parameters(name) else {}
    batch, config, classes = _small(name, **overrides)
    model = zoo.export(name, batch, train=True, **config)
    feeds = _feeds(model, classes, seed=1)
    sess = _session(model)
    outputs = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    grads = {k.removeprefix("grad."): v.astype(np.float64) for k, v in outputs.items() if k.startswith("grad.")}
    norm = float(np.sqrt(sum(np.vdot(g, g) for g in grads.values())))
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}

    def loss_at(eps: float) -> float:
        moved = onnx.ModelProto()
        moved.CopyFrom(model)
        for t in moved.graph.initializer:
            if t.name in grads:
                value = inits[t.name] + (eps / norm * grads[t.name]).astype(np.float32)
                t.CopyFrom(numpy_helper.from_array(value, t.name))
        return float(_session(moved).run(["loss"], feeds)[0])

    steps = [3e-3 / norm, 1e-3 / norm, 3e-4 / norm]
    slopes = [(loss_at(h) - loss_at(-h)) / (2 * h) for h in steps]
    errors = [abs(s - norm) / norm for s in slopes]
    assert min(errors) < 0.02, f"{name}: |g| = {norm:.5g}, central differences {slopes}"


@pytest.mark.parametrize("name", MODELS)
def test_paper_size_shape_only_training_graph(name: str) -> None:
    """Paper-size training graphs build from shape-only weights and stay weightless and small."""
    config = zoo.paper_config(name)
    batch = config.pop("batch")
    model = zoo.export(name, batch, train=True, weights="shape-only", **config)  # speed: tools/bench_speed.py
    forward = zoo.build(name, batch, weights="shape-only", **config)
    weights = {t.name for t in forward.graph.initializer if t.doc_string in ("param", "buffer")}
    assert {t.name for t in model.graph.initializer if zoo.is_shape_only(t)} == weights
    assert model.ByteSize() < 10_000_000
    inferred = onnx.shape_inference.infer_shapes(model)
    shapes = {vi.name for vi in [*inferred.graph.value_info, *inferred.graph.output]}
    assert all(o in shapes for n in model.graph.node for o in n.output if o)
