"""remc.runtime on ONNX Runtime CPU: execution order, measured peak memory, feeds, output comparison."""
from __future__ import annotations

import json
import os
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper

from remc.backends import runtime as rt
from remc.ir.errors import ModelError, RuntimeFailure

MiB = 1 << 20


def parse(text: str, inits: dict[str, np.ndarray] | None = None) -> onnx.ModelProto:
    """An opset-17 model from ONNX text; unnamed nodes get '<op>_<index>' names."""
    m = onnx.parser.parse_model('<ir_version: 10, opset_import: ["" : 17]>\n' + text)
    m.graph.initializer.extend(numpy_helper.from_array(v, k) for k, v in (inits or {}).items())
    for i, n in enumerate(m.graph.node):
        n.name = n.name or f"{n.op_type}_{i}"
    return m


# Two independent branches listed interleaved and "backwards": node b2 (index 0) first.
BRANCHES = parse('''
g (float[64,64] x) => (float[64,64] y) {
  b1 = Neg(x)
  a1 = Relu(x)
  b2 = Exp(b1)
  a2 = Abs(a1)
  b3 = Sigmoid(b2)
  a3 = Tanh(a2)
  y = Add(a3, b3)
}
''')

# Four 1 MiB tensors: a, b, c are all live while Add runs (y is born after a and b die).
CHAIN = parse('''
g (float[256,1024] x) => (float[256,1024] y) {
  a = Relu(x)
  b = Sigmoid(a)
  c = Add(a, b)
  y = Mul(c, x)
}
''')


def _default_order(model: onnx.ModelProto) -> list[str]:
    """Executed order under ORT's DEFAULT execution order (for contrast)."""
    tmp = tempfile.mkdtemp()
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(tmp, "p")
    s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    s.run(None, rt.random_inputs(model))
    with open(s.end_profiling()) as f:
        events = json.load(f)
    return [e["name"][: -len("_kernel_time")] for e in sorted(events, key=lambda e: e["ts"])
            if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]


def test_priority_based_runs_the_file_order_where_default_does_not() -> None:
    listed = [n.name for n in BRANCHES.graph.node]
    assert _default_order(BRANCHES) != listed  # the test graph must tell the two orders apart
    assert rt.executed_order(BRANCHES) == listed
    assert rt.ort_execution_order(BRANCHES) == listed


def test_shape_runs_as_soon_as_its_input_exists() -> None:
    m = parse('''
g (float[4,8] x) => (float[32] y) {
  a = Relu(x)
  b = Neg(a)
  c = Exp(b)
  s = Shape(a)
  n = ReduceProd(s)
  y = Reshape(c, n)
}
''')
    expected = ["Relu_0", "Shape_3", "Neg_1", "Exp_2", "ReduceProd_4", "Reshape_5"]
    assert rt.ort_execution_order(m) == expected
    assert rt.executed_order(m) == expected
    fixed = rt.order_for_ort(m)
    assert [n.name for n in fixed.graph.node] == expected
    assert rt.executed_order(fixed) == expected


def test_function_ops_are_inlined_so_the_file_order_holds() -> None:
    m = parse('''
g (float[4,10] x, int64[4] labels) => (float loss, float[4,10] z) {
  loss, lp = SoftmaxCrossEntropyLoss <reduction = "mean"> (x, labels)
  e = Exp(lp)
  z = Sub(e, x)
}
''')
    assert rt.kernelless_nodes(m) == ["SoftmaxCrossEntropyLoss_0"]
    assert "SoftmaxCrossEntropyLoss_0" not in rt.executed_order(m)  # ORT expands it behind our back
    fixed = rt.order_for_ort(rt.inline_function_ops(m))
    assert rt.kernelless_nodes(fixed) == []
    names = [n.name for n in fixed.graph.node if n.op_type != "Constant"]
    assert all(n.startswith("SoftmaxCrossEntropyLoss_0/") for n in names[:-2])
    assert rt.executed_order(fixed) == names
    feeds = rt.random_inputs(m, 3)
    a = rt.measure(m, feeds=feeds, iters=1, mem_method=None).outputs
    b = rt.measure(fixed, feeds=feeds, iters=1, mem_method=None).outputs
    assert rt.compare_outputs(b, a, rtol=0.0, atol=0.0)[0]


def test_measured_peak_of_a_chain_is_the_hand_count() -> None:
    # a, b, c (1 MiB each, multiples of the arena's 256-byte unit) are live while Add runs; x is the
    # caller's buffer and not counted; no kernel here allocates scratch. So the arena peak is exact.
    res = rt.measure(CHAIN, iters=2)
    assert res.measured_peak == 3 * MiB
    assert res.method == "profiler:mem_in_use_peak"
    assert res.input_bytes == MiB and res.baseline == 0 and res.peak_node == "Add_2"
    assert res.node_in_use == {"Relu_0": MiB, "Sigmoid_1": 2 * MiB, "Add_2": 3 * MiB, "Mul_3": 2 * MiB}
    assert rt.live_bytes_peak(CHAIN) == 3 * MiB
    assert res.median_seconds > 0 and len(res.times) == 2
    np.testing.assert_allclose(res.outputs["y"], _chain_reference(rt.random_inputs(CHAIN)["x"]), rtol=1e-6)


def _chain_reference(x: np.ndarray) -> np.ndarray:
    a = np.maximum(x, 0)
    return (a + 1 / (1 + np.exp(-a))) * x


def test_bisected_arena_limit_equals_the_profiler_peak_on_a_chain() -> None:
    peak = rt.bisect_peak(CHAIN, feeds=rt.random_inputs(CHAIN))
    assert peak.method == "bisect:cpu_arena"
    assert peak.peak == 3 * MiB  # resolution 256 bytes; kSameAsRequested regions fit exactly here


def test_a_dead_buffer_is_not_held_for_a_later_tensor_of_its_size() -> None:
    # With ORT's default enable_mem_reuse the planner gives a's buffer to y2 and keeps it allocated
    # from Relu to Exp_6; remc's sessions free it after its last use.
    m = parse('''
g (float[256,1024] x) => (float[256,1] y, float[256,1] s) {
  a = Relu(x)
  s1 = ReduceMax <axes = [1]> (a)
  b = Sigmoid(s1)
  s = Neg(b)
  y2 = Exp(x)
  y = ReduceMax <axes = [1]> (y2)
}
''')
    in_use = rt.measure_peak(m).node_in_use
    assert in_use["Sigmoid_2"] < 4096 and in_use["Neg_3"] < 4096
    assert in_use["Exp_4"] >= MiB


def test_unconsumed_outputs_stay_allocated_to_the_end_of_the_run() -> None:
    m = parse('''
g (float[256,1024] x) => (float[256,1] y) {
  a = Relu(x)
  dead = Neg(a)
  y = ReduceMax <axes = [1]> (a)
}
''')
    in_use = rt.measure_peak(m).node_in_use
    assert in_use["ReduceMax_2"] >= MiB  # 'dead' was never freed although nothing reads it


def test_a_limit_below_the_peak_raises_out_of_memory_with_bytes() -> None:
    arena = rt.DeviceSettings(placement="arena")  # ONNX Runtime's BFC arena (remc's CPU placement: test_capi.py)
    with pytest.raises(rt.OutOfMemory) as info:
        rt.measure(CHAIN, mem_method=None, iters=1, mem_limit=2 * MiB, settings=arena)
    err = info.value
    assert isinstance(err, RuntimeFailure)
    assert err.requested == MiB and err.available == 0 and err.limit == 2 * MiB
    assert f"needed {MiB} bytes, 0 available under a limit of {2 * MiB} bytes" in str(err)
    assert "Add_2" in str(err)
    rt.measure(CHAIN, mem_method=None, iters=1, mem_limit=3 * MiB, settings=arena)  # the hand count fits


def test_random_inputs_respect_shapes_dtypes_and_label_ranges() -> None:
    m = parse('''
g (float[6,7] x, int64[6] labels, int64[3,2] ids, bool[6,7] mask) => (float loss, float[3,2,5] e) {
  loss = SoftmaxCrossEntropyLoss(x, labels)
  e = Gather(table, ids)
}
''', {"table": np.ones((11, 5), np.float32)})
    feeds = rt.random_inputs(m, seed=1)
    assert set(feeds) == {"x", "labels", "ids", "mask"}
    assert feeds["x"].dtype == np.float32 and feeds["x"].shape == (6, 7)
    assert feeds["labels"].dtype == np.int64 and feeds["labels"].min() >= 0 and feeds["labels"].max() < 7
    assert feeds["ids"].shape == (3, 2) and feeds["ids"].max() < 11
    assert feeds["mask"].dtype == np.bool_
    again = rt.random_inputs(m, seed=1, feeds={"x": np.zeros((6, 7), np.float32)})
    assert np.array_equal(again["labels"], feeds["labels"]) and not again["x"].any()
    rt.measure(m, feeds=feeds, iters=1)  # valid feeds run


def test_an_integer_input_with_no_known_range_needs_a_hint() -> None:
    m = parse('g (int64[4] k) => (int64[4] y) { y = Neg(k) }')
    with pytest.raises(ModelError, match="num_classes"):
        rt.random_inputs(m)
    assert rt.random_inputs(m, num_classes=3)["k"].max() < 3


def test_compare_outputs_numerically_zero_gradient_is_judged_by_its_group() -> None:
    # a bias before BatchNorm: mathematically zero, ~1e-8 on both sides with different rounding
    ref = {"grad.conv1.weight": np.full(64, 0.5, np.float32), "grad.conv1.bias": np.array([1e-8, -2e-8], np.float32)}
    out = {"grad.conv1.weight": ref["grad.conv1.weight"], "grad.conv1.bias": np.array([-3e-8, 1e-8], np.float32)}
    ok, worst = rt.compare_outputs(out, ref, rtol=1e-4)
    assert ok and "grad.conv1.bias" in worst, worst
    wrong = dict(out, **{"grad.conv1.bias": np.array([0.01, 0.0], np.float32)})  # a real error, at group scale
    assert not rt.compare_outputs(wrong, ref, rtol=1e-4)[0]
    assert rt.gradient_groups(["grad.a.b.weight", "loss"]) == {"grad.a.b.weight": "grad.a.b", "loss": "loss"}


def test_compare_outputs_tolerances() -> None:
    ref = {"loss": np.array(2.0, np.float32), "g": np.array([1000.0, 1e-9, 0.0], np.float32)}
    assert rt.compare_outputs(ref, ref) == (True, rt.compare_outputs(ref, ref)[1])
    near = {"loss": np.array(2.0 * (1 + 5e-7), np.float32), "g": np.array([1000.0, 5e-4, 0.0], np.float32)}
    ok, worst = rt.compare_outputs(near, ref)  # 5e-4 next to 1000 is within rtol * max|g|
    assert ok, worst
    far = {"loss": np.array(2.001, np.float32), "g": ref["g"]}
    ok, worst = rt.compare_outputs(far, ref)
    assert not ok and "'loss'" in worst
    ok, worst = rt.compare_outputs({"loss": ref["loss"], "g": np.array([1000.0, 0.5, 0.0], np.float32)}, ref)
    assert not ok and "'g'" in worst and "norm-relative error" in worst
    assert not rt.compare_outputs({"loss": ref["loss"]}, ref)[0]
    nan = {"loss": np.array(np.nan, np.float32), "g": ref["g"]}
    assert not rt.compare_outputs(nan, ref)[0]
    assert rt.compare_outputs({"i": np.array([1, 2])}, {"i": np.array([1, 2])})[0]
    assert not rt.compare_outputs({"i": np.array([1, 3])}, {"i": np.array([1, 2])})[0]
    assert rt.default_rtol("cpu") == 1e-6 and rt.default_rtol("cuda:0") == 1e-4


@pytest.mark.skipif(rt.cuda_available(), reason="this onnxruntime has the CUDA provider")
def test_cuda_requests_fail_clearly_without_the_provider() -> None:
    with pytest.raises(RuntimeFailure, match=r"CUDAExecutionProvider is not available: install onnxruntime-gpu"):
        rt.require_cuda()
    with pytest.raises(RuntimeFailure, match="CUDAExecutionProvider"):
        rt.make_session(CHAIN, "cuda")


def test_bad_devices_and_models_are_reported() -> None:
    with pytest.raises(ValueError, match="unknown device"):
        rt.make_session(CHAIN, "tpu")
    with pytest.raises(ValueError, match="cuda_graph"):
        rt.make_session(CHAIN, "cpu", cuda_graph=True)
    broken = parse('g (float[4] x) => (float[4] y) { y = Relu(x, x) }')
    with pytest.raises(RuntimeFailure, match="loading the model"):
        rt.make_session(broken)


# --- CUDA: these run only where onnxruntime has the CUDA provider (the GPU test machine) -----------------

cuda = pytest.mark.skipif(not rt.cuda_available(), reason="needs onnxruntime-gpu with CUDAExecutionProvider")


@cuda
def test_cuda_runs_the_file_order_and_matches_cpu() -> None:
    rt.require_cuda()
    assert rt.executed_order(BRANCHES, "cuda") == [n.name for n in BRANCHES.graph.node]
    feeds = rt.random_inputs(CHAIN)
    gpu = rt.measure(CHAIN, "cuda", feeds=feeds, iters=3)
    cpu = rt.measure(CHAIN, "cpu", feeds=feeds, iters=1, mem_method=None)
    ok, worst = rt.compare_outputs(gpu.outputs, cpu.outputs, rtol=rt.CUDA_RTOL)
    assert ok, worst
    assert gpu.measured_peak is not None and gpu.measured_peak >= 3 * MiB, gpu
    assert gpu.input_bytes == MiB


@cuda
def test_cuda_peak_by_profiler_and_by_gpu_mem_limit_bisection() -> None:
    feeds = rt.random_inputs(CHAIN)
    bisected = rt.bisect_peak(CHAIN, "cuda", feeds=feeds)
    assert bisected.method == "bisect:gpu_mem_limit"
    assert 3 * MiB <= bisected.peak <= 4 * MiB, bisected
    try:
        prof = rt.profiler_peak(CHAIN, "cuda", feeds=feeds)
    except rt.NoProfilerStats as e:
        pytest.skip(f"this onnxruntime-gpu writes no usable CUDA arena stats: {e}")
    assert 3 * MiB <= prof.peak <= bisected.peak, (prof, bisected)
    with pytest.raises(rt.OutOfMemory, match="needed"):
        rt.measure(CHAIN, "cuda", feeds=feeds, mem_method=None, iters=1, mem_limit=2 * MiB)


@cuda
def test_cuda_graph_replay_gives_the_same_outputs() -> None:
    feeds = rt.random_inputs(CHAIN)
    plain = rt.measure(CHAIN, "cuda", feeds=feeds, iters=2, mem_method=None)
    graph = rt.measure(CHAIN, "cuda", feeds=feeds, iters=5, mem_method=None, cuda_graph=True)
    assert rt.compare_outputs(graph.outputs, plain.outputs, rtol=0.0, atol=0.0)[0]
    assert graph.median_seconds > 0
