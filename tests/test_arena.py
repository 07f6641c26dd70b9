"""The BFC arena replay (passes/arena.py) against ONNX Runtime's own accounting."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from remc.backends import runtime
from remc.passes.arena import ArenaConfig, ArenaOutOfMemory, BFCArena, graph_events, least_limit, replay


def test_rounding_whole_chunks_and_regions() -> None:
    a = BFCArena(ArenaConfig())
    p = a.alloc(1000)                       # rounded to 1024, a region of exactly that (kSameAsRequested)
    assert a.in_use == 1024 and a.regions == [1024]
    a.free(p)
    a.alloc(600)                            # 1024 < 2 * 768: handed out whole
    assert a.in_use == 1024 and a.regions == [1024]
    a.alloc(300)                            # no free chunk: a new region, never merged with the first
    assert a.regions == [1024, 512]


def test_limit_raises_like_onnxruntime() -> None:
    a = BFCArena(ArenaConfig(limit=4096))
    a.alloc(3000)
    with pytest.raises(ArenaOutOfMemory, match="Available memory of 1024 is smaller than requested bytes of 2048"):
        a.alloc(2000)


def test_power_of_two_growth() -> None:
    a = BFCArena(ArenaConfig(extend="kNextPowerOfTwo"))
    a.alloc(100)
    assert a.regions == [1 << 20]
    a.alloc(3 << 20)
    assert a.regions == [1 << 20, 4 << 20]


def test_one_region_of_the_limit() -> None:
    """``one_region``: the first region is the whole limit (ONNX Runtime's initial_chunk_size_bytes = cap), so
    frees coalesce where power-of-two regions leave a request no region can hold."""
    limit = 4 << 20
    pow2 = BFCArena(ArenaConfig(extend="kNextPowerOfTwo", limit=limit))
    one = BFCArena(ArenaConfig(extend="kNextPowerOfTwo", limit=limit, one_region=True))
    for a in (pow2, one):
        small = [a.alloc(1 << 20) for _ in range(3)]
        for p in small:
            a.free(p)
    assert one.regions == [limit] and pow2.regions == [1 << 20, 2 << 20]
    one.alloc(5 << 19)  # 2.5 MiB: the freed MiBs coalesced in the one region
    with pytest.raises(ArenaOutOfMemory):  # free 1 and 2 MiB in two regions, 1 MiB left to grow
        pow2.alloc(5 << 19)


def _chain() -> object:
    f = TensorProto.FLOAT
    nodes = [helper.make_node("Neg", ["X"], ["a"], name="n0"), helper.make_node("Relu", ["a"], ["b"], name="n1"),
             helper.make_node("Reshape", ["b", "S"], ["c"], name="n2"), helper.make_node("Add", ["c", "c"], ["d"], name="n3"),
             helper.make_node("Relu", ["d"], ["Y"], name="n4"), helper.make_node("Neg", ["c"], ["e"], name="n5"),
             helper.make_node("Mul", ["e", "Y"], ["Z"], name="n6")]
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("X", f, [100, 300])],
                          [helper.make_tensor_value_info("Y", f, [30000]), helper.make_tensor_value_info("Z", f, [30000])],
                          [numpy_helper.from_array(np.array([30000], np.int64), "S")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 10
    return m


def test_events_alias_in_place_and_graph_outputs() -> None:
    ev = graph_events(_chain(), "cpu")
    allocs = {n.node: [k for k, _ in n.allocs] for n in ev.nodes}
    assert allocs["n1"] == []               # Relu writes into 'a' at its last use
    assert allocs["n2"] == []               # Reshape aliases its input
    assert allocs["n4"] == ["Y"]            # a graph output always gets its own buffer
    assert ev.initializer_sizes == (8,)     # small CPU initializers are copied into the arena


def test_an_alias_of_an_alias_of_an_initializer_stays_outside_the_arena() -> None:
    """DenseNet121 from torchvision (its training graph from ``remc grad``): a BatchNorm weight reshaped twice
    made ``graph_events`` fail with a KeyError (``remc compile`` printed a traceback). The second alias is
    outside the arena like the first, and the replay is still ONNX Runtime's to the byte."""
    f = TensorProto.FLOAT
    nodes = [helper.make_node("Reshape", ["W", "S1"], ["w1"], name="r1"),
             helper.make_node("Reshape", ["w1", "S2"], ["w2"], name="r2"),
             helper.make_node("Mul", ["X", "w2"], ["a"], name="m"), helper.make_node("Relu", ["a"], ["Y"], name="y")]
    inits = [numpy_helper.from_array(np.ones(4096, np.float32), "W"),
             numpy_helper.from_array(np.array([64, 64], np.int64), "S1"),
             numpy_helper.from_array(np.array([1, 64, 64], np.int64), "S2")]
    g = helper.make_graph(nodes, "aliases", [helper.make_tensor_value_info("X", f, [8, 64, 64])],
                          [helper.make_tensor_value_info("Y", f, [8, 64, 64])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 10
    ev = graph_events(m, "cpu")
    allocs = {n.node: [k for k, _ in n.allocs] for n in ev.nodes}
    assert allocs["r1"] == allocs["r2"] == [] and allocs["m"] == ["a"]
    rp = replay(ev, runtime.arena_config("cpu"))
    meas = runtime.profiler_peak(m, "cpu", feeds=runtime.random_inputs(m, 0), mem_limit=1 << 30)
    assert meas.peak == rp.peak_in_use


def test_replay_matches_onnxruntime_cpu_exactly() -> None:
    m = _chain()
    feeds = runtime.random_inputs(m, 0)
    ev = graph_events(m, "cpu")
    rp = replay(ev, runtime.arena_config("cpu"))
    meas = runtime.profiler_peak(m, "cpu", feeds=feeds, mem_limit=1 << 30)
    assert list(meas.node_in_use.values()) == list(rp.node_in_use)
    assert meas.peak == rp.peak_in_use
    cap = least_limit(ev, runtime.arena_config("cpu"))
    assert runtime._fits(m, "cpu", feeds, cap) and not runtime._fits(m, "cpu", feeds, cap - 256)


def test_least_cap_of_a_zoo_graph_is_replayed_exactly_in_every_session() -> None:
    """U-Net (test size, checkpoint-all: Where in every ReLU gradient, convolution scratch, many equal-sized
    buffers): the replayed least cap is the device's, to the 256-byte chunk, in each of three fresh sessions.
    With one region per request (kSameAsRequested) the need varied between sessions of one process (malloc's
    addresses break ties between equal free chunks) and the replay was 5% off."""
    from remc import zoo
    from remc.fit import predict
    from remc.pipeline import State, compile_pipeline, run
    cfg = dict(zoo.small_config("unet"))
    batch = cfg.pop("batch")
    st = run(compile_pipeline(strategy="checkpoint-all"),
             State(model=zoo.export("unet", batch, train=True, **cfg), budget=1 << 50))
    m = st.lowered
    feeds = runtime.random_inputs(m, 0)
    cap = predict(m, "cpu", settings=runtime.DeviceSettings(placement="arena")).arena
    for _ in range(3):
        assert runtime._fits(m, "cpu", feeds, cap, runs=2)
        assert not runtime._fits(m, "cpu", feeds, cap - 256, runs=2)


def test_compile_fit_plan_runs_under_a_cap_equal_to_the_budget() -> None:
    from remc import zoo
    from remc.fit import compile_fit, predict
    from remc.pipeline import State, compile_pipeline, run, stages
    cfg = dict(zoo.small_config("mobilenet"))
    batch = cfg.pop("batch")
    train = zoo.export("mobilenet", batch, train=True, **cfg)
    need = predict(train, "cpu").total
    passes = compile_pipeline(strategy="ap-sqrtn")
    st = run(stages(passes, last="units"), State(model=train))
    st.budget = int(0.95 * need)
    fit = compile_fit(stages(passes, first="schedule"), st, device="cpu", verify=True)
    assert fit.prediction.total <= st.budget and st.plan.budget == st.budget and fit.verified
    assert fit.prediction.placement == ("remc" if runtime.DEFAULT_SETTINGS.placed("cpu") else "arena")

    def fits(model) -> bool:  # as `remc run --mem-limit <budget>` runs it (remc's placement on CPU by default)
        cap = runtime.arena_cap(model, "cpu", st.budget)
        try:
            sess, alloc = runtime.capped_session(model, "cpu", cap)
            r = runtime.Runner(sess, runtime.random_inputs(model, 0), "cpu", mem_limit=cap, allocator=alloc)
            r()
            r()
            return True
        except runtime.OutOfMemory:
            return False

    assert fits(st.lowered) and not fits(train)


def test_compare_fails_a_deliberately_wrong_plan() -> None:
    """A lowered plan whose recomputed Where picks the wrong branch computes different gradients: the
    norm-relative check must catch it, while the correct lowering passes."""
    from remc import zoo
    from remc.ir.schedule import checkpoint_all
    from remc.pipeline import State, compile_pipeline, run, stages
    cfg = dict(zoo.small_config("vgg16"))
    batch = cfg.pop("batch")
    train = zoo.export("vgg16", batch, train=True, **cfg)
    passes = compile_pipeline(strategy="lin-greedy")
    st = run(stages(passes, last="units"), State(model=train))
    st.budget = int(0.97 * checkpoint_all(st.dag).peak(st.dag))  # lin-greedy's least is 0.958 of it
    run(passes[3:], st)
    feeds = runtime.random_inputs(train, 0)
    ref = runtime.measure(train, "cpu", feeds=feeds, iters=1, mem_method=None).outputs
    good = runtime.measure(st.lowered, "cpu", feeds=feeds, iters=1, mem_method=None).outputs
    assert runtime.compare_outputs(good, ref)[0]
    wrong = st.lowered
    node = next(n for n in wrong.graph.node if "/re" in n.name and n.op_type == "Where")
    node.input[1], node.input[2] = node.input[2], node.input[1]
    bad = runtime.measure(wrong, "cpu", feeds=feeds, iters=1, mem_method=None).outputs
    ok, worst = runtime.compare_outputs(bad, ref, rtol=runtime.CUDA_RTOL)
    assert not ok and "norm-relative error" in worst
