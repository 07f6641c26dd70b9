"""The model zoo: every model builds, checks, runs on ONNX Runtime CPU; paper sizes build shape-only."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from remc import zoo
from remc.ir.errors import ModelError
from remc.zoo.builder import IR_VERSION, OPSET, ROLES, SHAPE_ONLY_LOCATION

MODELS = zoo.list_models()

PAPER_PARAMS = {
    # Trainable weights (Keras' "trainable params"; torch's numel over parameters()).
    "vgg16": 138_357_544,
    "vgg19": 143_667_240,
    "resnet50": 25_583_592,
    "mobilenet": 4_231_976,
    "mobilenet_v2": 3_504_872,
    "gpt2": 124_439_808,
    "vit": 86_567_656,  # torchvision's vit_b_16
}
PAPER_TOTAL = {
    # Trainable weights plus BatchNorm running statistics (Keras' "total params").
    "resnet50": 25_636_712,
    "mobilenet": 4_253_864,
    "mobilenet_v2": 3_538_984,
    "unet": 12_332_755,
}


def session(model: onnx.ModelProto) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def random_inputs(model: onnx.ModelProto, config: dict, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.RandomState(seed)
    feeds = {}
    for vi in model.graph.input:
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        if vi.type.tensor_type.elem_type == onnx.TensorProto.INT64:
            feeds[vi.name] = rng.randint(0, config["vocab_size"], size=shape).astype(np.int64)
        else:
            feeds[vi.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def expected_logits_shape(name: str, config: dict) -> list[int]:
    full = {**zoo.size_parameters(name), **config}
    task = {"gpt2": "lm", "unet": "seg", "fcn8": "seg", "segnet": "seg"}.get(name, "cls")
    if task == "lm":
        return [full["batch"], full["seq_len"], full["vocab_size"]]
    if task == "seg":
        return [full["batch"], full["num_classes"], full["height"], full["width"]]
    return [full["batch"], full["num_classes"]]


def static_shape(vi: onnx.ValueInfoProto) -> list[int] | None:
    t = vi.type.tensor_type
    if not t.HasField("shape") or any(not d.HasField("dim_value") for d in t.shape.dim):
        return None
    return [d.dim_value for d in t.shape.dim]


def test_list_models() -> None:
    assert MODELS == ["vgg16", "vgg19", "resnet50", "mobilenet", "mobilenet_v2", "unet", "fcn8",
                      "segnet", "gpt2", "vit"]


@pytest.mark.parametrize("name", MODELS)
def test_small_model_checks_and_runs(name: str) -> None:
    config = zoo.small_config(name)
    model = zoo.build(name, **config)
    onnx.checker.check_model(model, full_check=True)
    assert model.ir_version == IR_VERSION
    assert [(o.domain, o.version) for o in model.opset_import] == [("", OPSET)]
    want = expected_logits_shape(name, config)
    assert [o.name for o in model.graph.output] == ["logits"]
    assert static_shape(model.graph.output[0]) == want
    (logits,) = session(model).run(["logits"], random_inputs(model, config))  # speed: tools/bench_speed.py
    assert list(logits.shape) == want
    assert np.isfinite(logits).all()
    assert 1e-3 < float(np.abs(logits).mean()) < 1e3


@pytest.mark.parametrize("name", MODELS)
def test_names_roles_and_metadata(name: str) -> None:
    model = zoo.build(name, **zoo.small_config(name))
    nodes = [n.name for n in model.graph.node]
    assert all(nodes) and len(set(nodes)) == len(nodes)
    inits = [t.name for t in model.graph.initializer]
    assert len(set(inits)) == len(inits)
    roles = zoo.initializer_roles(model)
    assert set(roles.values()) <= set(ROLES)
    for t in model.graph.initializer:
        if roles[t.name] in ("param", "buffer"):
            assert t.data_type == onnx.TensorProto.FLOAT, t.name
    for n in model.graph.node:
        if n.op_type == "BatchNormalization":
            assert len(n.output) == 1
            assert [roles[i] for i in n.input[1:]] == ["param", "param", "buffer", "buffer"]
    props = {p.key: p.value for p in model.metadata_props}
    assert props["remc.zoo.name"] == name
    assert props["remc.zoo.weights"] == "random"
    assert zoo.model_task(model) in zoo.TASKS
    config = json.loads(props["remc.zoo.config"])
    assert config["batch"] == zoo.small_config(name)["batch"]


def test_readable_names() -> None:
    model = zoo.build("resnet50", **zoo.small_config("resnet50"))
    nodes = {n.name for n in model.graph.node}
    assert {"conv1", "layer1.0/conv1", "layer1.0/bn1", "layer1.0/add", "layer1.1/relu", "fc"} <= nodes
    inits = {t.name for t in model.graph.initializer}
    assert {"layer1.0.conv1.weight", "layer1.0.bn1.running_mean", "layer1.0.downsample.conv.weight",
            "fc.weight"} <= inits


def test_same_seed_same_model_other_seed_other_weights() -> None:
    config = zoo.small_config("mobilenet_v2")
    a = zoo.build("mobilenet_v2", seed=3, **config)
    assert a.SerializeToString() == zoo.build("mobilenet_v2", seed=3, **config).SerializeToString()
    c = zoo.build("mobilenet_v2", seed=4, **config)
    wa = onnx.numpy_helper.to_array(a.graph.initializer[0])
    wc = onnx.numpy_helper.to_array(c.graph.initializer[0])
    assert wa.shape == wc.shape and not np.array_equal(wa, wc)


@pytest.mark.parametrize("name", MODELS)
def test_paper_size_shape_only(name: str) -> None:
    config = zoo.paper_config(name)
    model = zoo.build(name, weights="shape-only", **config)  # speed: tools/bench_speed.py
    seq_len = config.get("seq_len", 0)
    assert model.ByteSize() < 200_000 + 4 * seq_len ** 2  # gpt2 keeps its [T, T] causal mask
    for t in model.graph.initializer:
        if t.doc_string in ("param", "buffer"):
            assert zoo.is_shape_only(t) and not t.raw_data and not t.float_data, t.name
        else:
            assert not zoo.is_shape_only(t) and onnx.numpy_helper.to_array(t).size > 0, t.name
    if name in PAPER_PARAMS:
        assert zoo.param_count(model) == PAPER_PARAMS[name]
    if name in PAPER_TOTAL:
        assert zoo.param_count(model, ("param", "buffer")) == PAPER_TOTAL[name]
    inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    shapes = {vi.name: static_shape(vi) for vi in [*inferred.graph.value_info, *inferred.graph.output]}
    for node in model.graph.node:
        for out in node.output:
            assert shapes.get(out) is not None, f"{name}: no static shape for {out}"
    assert shapes["logits"] == expected_logits_shape(name, config)


def test_paper_configs() -> None:
    assert zoo.paper_config("vgg16") == {"batch": 256, "height": 224, "width": 224}
    assert zoo.paper_config("mobilenet")["batch"] == 512
    assert zoo.paper_config("resnet50")["batch"] == 256
    for name in ("unet", "fcn8", "segnet"):
        assert zoo.paper_config(name) == {"batch": 32, "height": 416, "width": 608, "num_classes": 19}
    config = zoo.paper_config("vgg16")
    config["batch"] = 1
    assert zoo.paper_config("vgg16")["batch"] == 256


def test_shape_only_matches_random_structure() -> None:
    config = zoo.small_config("fcn8")
    rand = zoo.build("fcn8", **config)
    shape = zoo.build("fcn8", weights="shape-only", **config)
    assert rand.graph.node == shape.graph.node
    dims = lambda m: [(t.name, list(t.dims), t.data_type, t.doc_string) for t in m.graph.initializer]
    assert dims(rand) == dims(shape)
    assert zoo.param_count(rand) == zoo.param_count(shape)


def test_shape_only_file_round_trip(tmp_path: Path) -> None:
    model = zoo.build("vgg16", weights="shape-only", **zoo.paper_config("vgg16"))
    path = tmp_path / "vgg16.onnx"
    onnx.save(model, str(path))
    assert path.stat().st_size < 50_000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vgg16.onnx"]
    loaded = onnx.load(str(path), load_external_data=False)
    assert loaded.SerializeToString() == model.SerializeToString()
    entry = {e.key: e.value for e in loaded.graph.initializer[0].external_data}
    assert entry["location"] == SHAPE_ONLY_LOCATION and int(entry["length"]) == 64 * 3 * 3 * 3 * 4


def test_dropout_nodes() -> None:
    config = zoo.small_config("gpt2")
    model = zoo.build("gpt2", **config)
    drops = [n for n in model.graph.node if n.op_type == "Dropout"]
    assert len(drops) == 1 + 3 * config["n_layer"]
    seeds = [onnx.helper.get_attribute_value(n.attribute[0]) for n in drops]
    assert len(set(seeds)) == len(seeds)
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    for n in drops:
        assert np.isclose(inits[n.input[1]], 0.1) and inits[n.input[2]] == np.array(True)
    for name in ("vgg16", "fcn8", "gpt2"):
        model = zoo.build(name, **{**zoo.small_config(name), "dropout": 0.0})
        assert not any(n.op_type == "Dropout" for n in model.graph.node)


def test_gpt2_is_causal() -> None:
    config = {**zoo.small_config("gpt2"), "dropout": 0.0}
    model = zoo.build("gpt2", **config)
    feeds = random_inputs(model, config)
    (a,) = session(model).run(["logits"], feeds)
    ids = feeds["input_ids"].copy()
    ids[:, -1] = (ids[:, -1] + 1) % config["vocab_size"]
    (b,) = session(model).run(["logits"], {"input_ids": ids})
    np.testing.assert_array_equal(a[:, :-1], b[:, :-1])
    assert not np.allclose(a[:, -1], b[:, -1])


@pytest.mark.parametrize("name", ["unet", "segnet"])
def test_full_resolution_is_nearest_upsampling_of_half(name: str) -> None:
    config = zoo.small_config(name)
    full = zoo.build(name, **config)
    half = zoo.build(name, **config, full_resolution=False)
    feeds = random_inputs(full, config)
    (f,) = session(full).run(["logits"], feeds)
    (h,) = session(half).run(["logits"], feeds)
    assert h.shape[2:] == (config["height"] // 2, config["width"] // 2)
    np.testing.assert_array_equal(f, h.repeat(2, axis=2).repeat(2, axis=3))


def test_fcn8_skips_and_upsampling() -> None:
    model = zoo.build("fcn8", **zoo.small_config("fcn8"))
    ops = {n.name: n for n in model.graph.node}
    assert ops["fuse_pool4"].input[1] == "score_pool4" and ops["score_pool4"].input[0] == "block4/pool"
    assert ops["fuse_pool3"].input[1] == "score_pool3" and ops["score_pool3"].input[0] == "block3/pool"
    assert [ops[n].op_type for n in ("upscore2", "upscore_pool4", "upscore8")] == ["ConvTranspose"] * 3


def test_unet_long_skips() -> None:
    model = zoo.build("unet", **zoo.small_config("unet"))
    concats = [n for n in model.graph.node if n.op_type == "Concat"]
    assert [n.input[1] for n in concats] == ["block3/pool", "block2/pool", "block1/pool"]


def test_mobilenet_v2_uses_clip_for_relu6() -> None:
    model = zoo.build("mobilenet_v2", **zoo.small_config("mobilenet_v2"))
    ops = {n.op_type for n in model.graph.node}
    assert "Clip" in ops and "Relu" not in ops
    assert sum(n.op_type == "Add" for n in model.graph.node) >= 8


def test_batch_is_a_parameter() -> None:
    config = {**zoo.small_config("resnet50"), "batch": 3}
    model = zoo.build("resnet50", **config)
    (logits,) = session(model).run(["logits"], random_inputs(model, config))
    assert logits.shape == (3, 10)


@pytest.mark.parametrize("call, match", [
    (lambda: zoo.build("alexnet"), "unknown zoo model 'alexnet'"),
    (lambda: zoo.build("vgg16", depth=3), r"no size parameter\(s\) \['depth'\]"),
    (lambda: zoo.build("vgg16", height=100), "multiples of 32"),
    (lambda: zoo.build("vgg16", weights="zeros"), "weights must be"),
    (lambda: zoo.build("vgg16", batch=0), "batch must be"),
    (lambda: zoo.build("gpt2", n_embd=10, n_head=3), "not a multiple of n_head"),
    (lambda: zoo.build("gpt2", seq_len=2048), "exceeds n_positions"),
    (lambda: zoo.export("vgg16", 1, train=False, loss="mse"), "only meaningful"),
])
def test_errors(call, match: str) -> None:
    with pytest.raises(ModelError, match=match):
        call()


def test_export_forward_is_build() -> None:
    config = zoo.small_config("segnet")
    batch = config.pop("batch")
    exported = zoo.export("segnet", batch, train=False, **config)
    assert exported.SerializeToString() == zoo.build("segnet", batch, **config).SerializeToString()
