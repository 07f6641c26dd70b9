"""passes/costs.py: the static FLOP model and per-signature timing on ONNX Runtime CPU with its cache."""
from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, numpy_helper

from remc.backends import profile, runtime
from remc.ir.errors import ModelError
from remc.passes import costs


def parse(text: str, inits: dict[str, np.ndarray] | None = None, opset: int = 17) -> onnx.ModelProto:
    m = onnx.parser.parse_model(f'<ir_version: 10, opset_import: ["" : {opset}, "custom.ops" : 1]>\n' + text)
    m.graph.initializer.extend(numpy_helper.from_array(v, k) for k, v in (inits or {}).items())
    for i, n in enumerate(m.graph.node):
        n.name = n.name or f"{n.op_type}_{i}"
    return m


# A small CNN training graph in standard ops: Conv, decomposed BatchNorm, Relu, MaxPool (with Indices),
# Gemm, SoftmaxCrossEntropyLoss, and backward ops (Gemm, ReduceSum, ScatterElements into the MaxPool
# indices, Where, ConvTranspose, the transposed-Conv weight gradient).
TRAIN_TEXT = '''
cnn_train (float[8,3,16,16] x, int64[8] labels) => (float loss, float[8,3,3,3] dW1, float[8] db1, float[512,10] dW2,
                                                    float[10] db2, float[8,3,16,16] dx) {
  c1 = Conv <pads = [1,1,1,1], kernel_shape = [3,3]> (x, W1, b1)
  mu = ReduceMean <axes = [0,2,3]> (c1)
  cc = Sub(c1, mu)
  sq = Mul(cc, cc)
  var = ReduceMean <axes = [0,2,3]> (sq)
  ve = Add(var, eps)
  sd = Sqrt(ve)
  n1 = Div(cc, sd)
  r1 = Relu(n1)
  p1, idx = MaxPool <kernel_shape = [2,2], strides = [2,2]> (r1)
  f = Flatten(p1)
  logits = Gemm(f, W2, b2)
  loss, logp = SoftmaxCrossEntropyLoss <reduction = "mean"> (logits, labels)
  sm = Exp(logp)
  oh = OneHot <axis = -1> (labels, depth, onoff)
  d = Sub(sm, oh)
  dlogits = Div(d, nbatch)
  dW2 = Gemm <transA = 1> (f, dlogits)
  db2 = ReduceSum <keepdims = 0> (dlogits, ax0)
  df = Gemm <transB = 1> (dlogits, W2)
  dp1 = Reshape(df, p1shape)
  dpf = Reshape(dp1, flat)
  idxf = Reshape(idx, flat)
  z = ConstantOfShape <value = float[1] {0}> (r1size)
  drf = ScatterElements <reduction = "add"> (z, idxf, dpf)
  dr1 = Reshape(drf, r1shape)
  pos = Greater(n1, zero)
  dn1 = Where(pos, dr1, zero)
  dc1 = Div(dn1, sd)
  dx = ConvTranspose <pads = [1,1,1,1], kernel_shape = [3,3]> (dc1, W1)
  db1 = ReduceSum <keepdims = 0> (dc1, ax023)
  xt = Transpose <perm = [1,0,2,3]> (x)
  dct = Transpose <perm = [1,0,2,3]> (dc1)
  dwt = Conv <pads = [1,1,1,1]> (xt, dct)
  dW1 = Transpose <perm = [1,0,2,3]> (dwt)
}
'''


def train_model() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    return parse(TRAIN_TEXT, {
        "W1": rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3, "b1": np.zeros(8, np.float32),
        "W2": rng.standard_normal((512, 10)).astype(np.float32) * 0.05, "b2": np.zeros(10, np.float32),
        "eps": np.array(1e-5, np.float32), "zero": np.array(0, np.float32), "depth": np.array(10, np.int64),
        "onoff": np.array([0, 1], np.float32), "nbatch": np.array(8, np.float32),
        "ax0": np.array([0], np.int64), "ax023": np.array([0, 2, 3], np.int64),
        "p1shape": np.array([8, 8, 8, 8], np.int64), "flat": np.array([-1], np.int64),
        "r1size": np.array([8 * 8 * 16 * 16], np.int64), "r1shape": np.array([8, 8, 16, 16], np.int64)})


def shape_only(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with every float matrix/kernel initializer turned into a data-less external tensor."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for t in out.graph.initializer:
        if t.data_type == TensorProto.FLOAT and len(t.dims) >= 2:
            t.ClearField("raw_data")
            t.ClearField("float_data")
            t.data_location = TensorProto.EXTERNAL
            e = t.external_data.add()
            e.key, e.value = "location", "no-such-file.bin"
    return out


def test_flop_rules_by_hand() -> None:
    m = parse('''
g (float[2,4,8,8] x, float[3,5] a, float[7,5,6] b, float[5,6] c) => (float[2,6,8,8] y1, float[2,4,17,17] y2,
   float[7,3,6] y3, float[3,6] y4, float[2,4,4,4] y5, float[2,4,1,1] y6, float[2,4,8,8] y7, float[2,1,8,8] y8,
   float[8,8,2,4] y9, float[128,4] y10, float[2,4,8,8] y11, float[2,4,8,8] y12) {
  y1 = Conv <pads = [1,1,1,1], group = 2> (x, w, bias)
  y2 = ConvTranspose <strides = [2,2]> (x, wt)
  y3 = MatMul(a, b)
  y4 = Gemm <transA = 1> (ct, c, cb)
  y5 = MaxPool <kernel_shape = [3,3], strides = [2,2], pads = [1,1,1,1]> (x)
  y6 = GlobalAveragePool(x)
  y7 = Softmax <axis = 1> (x)
  y8 = ReduceSum <keepdims = 1> (x, one)
  y9 = Transpose <perm = [2,3,0,1]> (x)
  y10 = Reshape(x, shp)
  y11 = custom.ops.Mystery(x)
  y12 = Sigmoid(x)
}
''', {"w": np.zeros((6, 2, 3, 3), np.float32), "bias": np.zeros(6, np.float32),
      "wt": np.zeros((4, 4, 3, 3), np.float32), "ct": np.zeros((5, 3), np.float32),
      "cb": np.zeros(6, np.float32), "one": np.array([1], np.int64), "shp": np.array([128, 4], np.int64)})
    m.graph.value_info.extend([onnx.helper.make_tensor_value_info("y11", TensorProto.FLOAT, [2, 4, 8, 8])])
    c = costs.node_costs(m)
    assert c["Conv_0"] == 2 * (2 * 6 * 8 * 8) * (4 // 2) * 9 + 2 * 6 * 8 * 8
    assert c["ConvTranspose_1"] == 2 * (2 * 4 * 8 * 8) * 4 * 9
    assert c["MatMul_2"] == 2 * 7 * 3 * 6 * 5
    assert c["Gemm_3"] == 2 * 3 * 6 * 5 + 3 * 6
    assert c["MaxPool_4"] == (2 * 4 * 4 * 4) * 9
    assert c["GlobalAveragePool_5"] == 2 * 4 * 8 * 8
    assert c["Softmax_6"] == 5 * 2 * 4 * 8 * 8
    assert c["ReduceSum_7"] == 2 * 4 * 8 * 8
    assert c["Transpose_8"] == 2 * 4 * 8 * 8
    assert c["Reshape_9"] == costs.MIN_COST
    assert c["Mystery_10"] == costs.DEFAULT_FACTOR * 2 * 4 * 8 * 8
    assert c["Sigmoid_11"] == costs.ELEMENTWISE_FACTOR["Sigmoid"] * 2 * 4 * 8 * 8


def test_flops_are_positive_for_every_node_of_a_training_graph() -> None:
    m = train_model()
    c = costs.node_costs(m)
    assert list(c) == [n.name for n in m.graph.node]
    assert all(v >= 1 for v in c.values())
    assert c["Conv_0"] == 2 * 8 * 8 * 16 * 16 * 3 * 9 + 8 * 8 * 16 * 16
    assert c["ScatterElements_24"] == 8 * 8 * 8 * 8 + 8 * 8 * 16 * 16
    assert c["SoftmaxCrossEntropyLoss_12"] == 5 * 8 * 10


@pytest.mark.parametrize("name", ["resnet50", "gpt2"])
def test_flops_on_zoo_training_graphs(name: str) -> None:
    zoo = pytest.importorskip("remc.zoo")
    grad = pytest.importorskip("remc.passes.grad")
    if not hasattr(grad, "build_training_graph"):
        pytest.skip("no gradient builder yet")
    cfg = dict(zoo.small_config(name))
    train = zoo.export(name, cfg.pop("batch"), train=True, **cfg)
    c = costs.node_costs(shape_only(train))
    assert len(c) == len(train.graph.node) and min(c.values()) >= 1
    assert c == costs.node_costs(train)  # weights' data never matters


def test_flops_never_read_initializer_data() -> None:
    assert costs.node_costs(shape_only(train_model())) == costs.node_costs(train_model())


def test_dynamic_shapes_and_duplicate_names_are_model_errors() -> None:
    dyn = parse('g (float[N,4] x) => (float[N,4] y) { y = Relu(x) }')
    with pytest.raises(ModelError, match="no static shape"):
        costs.node_costs(dyn)
    dup = parse('g (float[4] x) => (float[4] y) { a = Relu(x)\n y = Neg(a) }')
    dup.graph.node[1].name = dup.graph.node[0].name
    with pytest.raises(ModelError, match="not unique"):
        costs.node_costs(dup)
    with pytest.raises(ValueError, match="unknown cost method"):
        costs.node_costs(train_model(), "guess")


def test_profile_times_every_node_and_reuses_its_cache(tmp_path, monkeypatch) -> None:
    m = train_model()
    first = profile.ProfileCosts("cpu", cache_dir=tmp_path, repeats=3, time_cap=0.02)
    t1 = first.apply(m)
    assert list(t1) == [n.name for n in m.graph.node]
    assert all(0 < v < 1.0 for v in t1.values())
    cache = json.loads((tmp_path / "profile.json").read_text())["entries"]
    signatures = {json.dumps(profile.signature(m, n, costs.static_types(m), set(
        profile._constant_values(m, None))), sort_keys=True) for n in m.graph.node}
    assert len(cache) == len(signatures) < len(m.graph.node)  # equal nodes share one
    assert first.sessions_built == len(cache) + 1  # one per signature, one to compute the indices

    def no_sessions(*args, **kwargs):
        raise AssertionError("a cached profile must not build sessions")
    monkeypatch.setattr(runtime, "make_session", no_sessions)
    second = profile.ProfileCosts("cpu", cache_dir=tmp_path, repeats=3, time_cap=0.02)
    assert second.apply(m) == t1 and second.sessions_built == 0
    assert profile.profile_costs(m, cache_dir=tmp_path) == t1


def test_a_cached_profile_and_kernel_memory_read_no_weight(tmp_path, monkeypatch) -> None:
    """With every signature cached, costs and kernel memory need only the constants' names: no initializer is
    read into an array (swin_t from torchvision read its 4004 weights, 3.7 s of a loaded compile)."""
    from remc.backends import scratch

    m = train_model()
    assert len(m.graph.initializer) > 0
    t1 = profile.ProfileCosts("cpu", cache_dir=tmp_path, repeats=2, time_cap=0.02).apply(m)
    k1 = scratch.kernel_memory(m, "cpu", cache_dir=tmp_path)

    reads = []
    monkeypatch.setattr(profile, "_tensor_or_none", lambda t, base_dir: reads.append(t.name))
    assert profile.ProfileCosts("cpu", cache_dir=tmp_path, repeats=2, time_cap=0.02).apply(m) == t1
    assert scratch.kernel_memory(m, "cpu", cache_dir=tmp_path) == k1
    assert reads == []


def test_profile_signatures_separate_shapes_and_share_equal_nodes(tmp_path) -> None:
    m = parse('''
g (float[32,64] a, float[64,16] b, float[32,16] c) => (float[32,16] y, float[32,16] z, float[16,16] w) {
  y = MatMul(a, b)
  z = MatMul(a, b)
  cb = Transpose(c)
  w = MatMul(cb, c)
}
''')
    t = profile.profile_costs(m, cache_dir=tmp_path, repeats=2)
    assert t["MatMul_0"] == t["MatMul_1"]
    entries = json.loads((tmp_path / "profile.json").read_text())["entries"]
    assert sorted(e["op"] for e in entries.values()) == ["MatMul", "MatMul", "Transpose"]


def test_profile_feeds_the_indices_the_graph_computes(tmp_path) -> None:
    m = train_model()
    prof = profile.ProfileCosts("cpu", cache_dir=tmp_path)
    types = costs.static_types(m)
    consts = profile._constant_values(m, None)
    probes = [profile._Probe("k", n, n.name) for n in m.graph.node if n.op_type == "ScatterElements"]
    values = prof._original_values(m, probes, types, consts)
    idx = values["idxf"]
    assert idx.dtype == np.int64 and idx.shape == (8 * 8 * 8 * 8,)
    assert idx.min() >= 0 and idx.max() < 8 * 8 * 16 * 16 and len(np.unique(idx)) == idx.size  # real argmaxes
    assert np.array_equal(np.sort(values["labels"]), np.sort(runtime.random_inputs(m)["labels"]))


def test_profile_works_on_shape_only_weights(tmp_path) -> None:
    t = profile.profile_costs(shape_only(train_model()), cache_dir=tmp_path, repeats=2, time_cap=0.02)
    assert len(t) == 35 and min(t.values()) > 0


@pytest.mark.skipif(not runtime.cuda_available(), reason="needs onnxruntime-gpu with CUDAExecutionProvider")
def test_profile_on_cuda(tmp_path) -> None:
    m = runtime.order_for_ort(runtime.inline_function_ops(train_model(), "cuda"))
    t = profile.profile_costs(m, device="cuda", cache_dir=tmp_path, repeats=3, time_cap=0.05)
    assert len(t) == len(m.graph.node) and min(t.values()) > 0
    assert profile.device_tag("cuda").startswith("cuda/")


def test_profile_under_a_deadline_runs_in_a_child_and_fills_the_same_cache(tmp_path) -> None:
    """With a deadline the timings run in a child process (killed at the deadline: backends/bounded.py); a
    generous one lets every signature through, into the parent's cache and the summary."""
    import time

    from remc.backends.scratch import unmeasured_kernels

    m = train_model()
    free = profile.ProfileCosts("cpu", cache_dir=tmp_path / "a", repeats=2, time_cap=0.02).apply(m)
    bounded = profile.ProfileCosts("cpu", cache_dir=tmp_path / "b", repeats=2, time_cap=0.02,
                                   deadline=time.perf_counter() + 600)
    got = bounded.apply(m)
    assert set(got) == set(free) and bounded.summary.timed == len(
        json.loads((tmp_path / "b" / "profile.json").read_text())["entries"]) > 0
    assert bounded.summary.estimated == 0 and bounded.sessions_built == bounded.summary.timed + 1
    table, left, total = unmeasured_kernels(m, cache_dir=tmp_path / "b", deadline=time.perf_counter() + 600)
    assert left == 0 and total > 0 and set(table) <= set(got)
    assert unmeasured_kernels(m, cache_dir=tmp_path / "b")[0] == table  # cached by the child's measurements


def test_predictor_separates_the_fixed_cost_from_the_rate() -> None:
    """A tiny op's session overhead must not make every big kernel look too slow to start."""
    pred = profile.Predictor()
    assert pred(1e9) == 0.0
    pred.add(1e3, 0.01)  # session + runs of a tiny op: all fixed cost
    pred.add(1e6, 0.011)
    assert pred(1e9) == pytest.approx(0.01 + 1e9 * 0.001 / 1e6)
    assert pred(1e9) < 1e9 * 0.01 / 1e3  # the old rule: largest seconds per unit of work


def test_predictor_rate_comes_from_the_largest_measurements() -> None:
    """A first measurement that pays the process's start-up (64 ms for 36 FLOPs) must not price every larger
    kernel; once larger measurements exist the rate is theirs, and a slow large one still raises it."""
    pred = profile.Predictor()
    pred.add(36, 0.064)  # cold start
    for w in (33, 48, 320, 864, 4096):
        pred.add(w, 0.0006)
    assert pred(2e7) < 1.0  # was 0.0005 + 2e7 * 0.0018 = 35000 s
    pred.add(1e6, 0.0106)  # a large kernel: 10 ms over the fixed cost
    assert pred(1e7) == pytest.approx(0.0006 + 1e7 * 0.01 / 1e6)
