"""remc's CPU placement: ONNX Runtime's C library driven through ``ctypes`` (``backends/capi.py``), every
request from remc's allocator at its planned offset."""
from __future__ import annotations

import json

import pytest

from remc import zoo
from remc.backends import capi, nativealloc, runtime
from remc.backends.placement import PlacedAllocator, model_layout
from remc.pipeline import State, compile_pipeline, run

pytestmark = pytest.mark.skipif(not capi.available(), reason="no usable onnxruntime C library")


@pytest.fixture(scope="module")
def lowered():
    """GPT-2 (test size), its checkpoint-all lowered training graph: 388 requests, MatMul/Gemm pre-packing,
    Softmax, LayerNorm scratch."""
    cfg = dict(zoo.small_config("gpt2"))
    batch = cfg.pop("batch")
    train = zoo.export("gpt2", batch, train=True, **cfg)
    return run(compile_pipeline(strategy="checkpoint-all"), State(model=train, budget=1 << 50)).lowered


def test_every_request_at_its_planned_offset(lowered, tmp_path):
    lay = model_layout(lowered, "cpu")
    sess, alloc = capi.placed_session(lowered, lay.height, lay, profile_prefix=str(tmp_path / "p"))
    feeds = runtime.random_inputs(lowered, 0)
    r = runtime.Runner(sess, feeds, "cpu", mem_limit=lay.height, allocator=alloc)
    assert alloc.stats.calls == len(lay.sequence("create"))
    r()
    first = r.outputs()
    r()
    st = alloc.stats
    assert st.calls == len(lay.sequence("create")) + 2 * len(lay.sequence("run"))
    assert st.planned == st.calls and st.fallback == 0 and not st.failures
    assert st.high_water == lay.height  # measured = predicted, to the byte
    ref = runtime.measure(lowered, "cpu", feeds=feeds, warmup=0, iters=1, mem_method=None)
    ok, worst = runtime.compare_outputs(first, ref.outputs)
    assert ok, worst
    # the node order the C-API session ran is the Python binding's PRIORITY_BASED order
    with open(sess.end_profiling()) as f:
        events = json.load(f)
    ran = [e["name"][: -len("_kernel_time")] for e in sorted(events, key=lambda e: e["ts"])
           if e.get("cat") == "Node" and str(e.get("name", "")).endswith("_kernel_time")]
    want = runtime.executed_order(lowered, "cpu", feeds=feeds)
    assert ran[: len(want)] == want


needs_native = pytest.mark.skipif(nativealloc.compiled() is None, reason="numba is not installed: no native hot path")


def _three_runs(lowered, alloc, native, feeds):  # noqa: ANN001, ANN202
    sess = capi.Session(lowered, alloc, layout=None, native=native)
    assert (sess.native is not None) == (native is None)
    r = runtime.Runner(sess, feeds, "cpu", mem_limit=alloc.capacity, allocator=alloc)
    outs = []
    for _ in range(3):
        r()
        outs.append(r.outputs())
    st = alloc.stats
    served = int(sess.native.s[nativealloc.FREES]) if sess.native is not None else 0
    return (st.calls, st.planned, st.rejected, st.fallback, st.high_water, st.peak_in_use), outs, served


@needs_native
@pytest.mark.parametrize("wrong", [False, True])
def test_native_hot_path_places_every_request_as_the_python_callbacks_do(lowered, wrong):
    """The native hot path (``backends.nativealloc``) serves the planned requests itself and hands the rest to
    the Python callbacks: the same statistics and outputs as the Python callbacks alone; with a wrong layout (a
    planned offset whose range is still taken) it refuses that place as the Python check does."""
    lay = model_layout(lowered, "cpu")
    feeds = runtime.random_inputs(lowered, 0)
    run_seq, later = list(lay.sequence("run")), list(lay.sequence("run", first_run=False))
    if wrong:  # each run's 10th request at the 9th's offset, which it still holds
        for seq in (run_seq, later):
            seq[10] = (seq[10][0], seq[9][1])
    got = {}
    for native in (False, None):
        buf = capi.HostBuffer(2 * lay.height)
        alloc = PlacedAllocator(buf.ptr, 2 * lay.height, {"create": lay.sequence("create"), "run": run_seq}, later,
                                {"run": lay.scratch_flags("run"), "later": lay.scratch_flags("run", first_run=False)})
        alloc.buffer = buf
        got[native] = _three_runs(lowered, alloc, native, feeds)
    stats, outs, served = got[None]
    assert served > 0  # frees served natively
    assert stats == got[False][0]
    assert (stats[2] > 0) == wrong  # rejected planned places
    if not wrong:
        assert stats[4] == lay.height and stats[0] == stats[1]
    for a, b in zip(outs, got[False][1]):
        ok, worst = runtime.compare_outputs(a, b, rtol=0, atol=0)
        assert ok, worst


def test_a_request_that_does_not_fit_is_out_of_memory(lowered):
    lay = model_layout(lowered, "cpu")
    cap = lay.lower_bound - 4096  # below the live bytes at one moment: no placement holds it
    sess, alloc = runtime.capped_session(lowered, "cpu", cap)
    r = runtime.Runner(sess, runtime.random_inputs(lowered, 0), "cpu", mem_limit=cap, allocator=alloc)
    with pytest.raises(runtime.OutOfMemory) as e:
        r()
    msg = str(e.value)
    assert msg.startswith("out of memory on cpu at node '") and "\n" not in msg
    assert "remc's buffer" in msg and e.value.requested is not None


def test_initializers_that_do_not_fit_fail_the_session(lowered):
    with pytest.raises(runtime.OutOfMemory) as e:
        runtime.capped_session(lowered, "cpu", 512)
    assert "at session creation" in str(e.value)


@pytest.mark.parametrize("placement", ["remc", "arena"])
def test_uncapped_cpu_run_is_the_predicted_configuration(tmp_path, placement):
    """Without a cap, ``remc run`` on CPU runs the configuration it predicts, sized to the prediction: measured =
    predicted (was: ONNX Runtime's default arena, MobileNetV2 b2 measured 8964008 vs predicted 8250536)."""
    from remc.ir.onnx_io import save_model
    from remc.run_cli import run_graph
    cfg = dict(zoo.small_config("mobilenet_v2"))
    cfg.pop("batch")
    path = tmp_path / "m.onnx"
    save_model(zoo.export("mobilenet_v2", 1, train=True, **cfg), path)
    rep = run_graph(str(path), device="cpu", iters=1, settings=runtime.DeviceSettings(placement=placement))
    assert rep["cap_from_prediction"] and rep["mem_limit"] is None
    assert rep["placement"] == placement
    assert rep["measured_peak"] == rep["predicted_peak"]


def test_unavailable_cpu_placement_is_said(monkeypatch, capsys):
    """Where the C library cannot be driven, CPU runs use the arena and the CLI says why (no silent fallback)."""
    import argparse

    from remc.cli import device_settings
    from remc.ir.errors import RuntimeFailure

    def broken():
        raise RuntimeFailure("the session options are not laid out as remc expects")

    monkeypatch.setattr(capi, "available", lambda: False)
    monkeypatch.setattr(capi, "api", broken)
    s = device_settings(argparse.Namespace(placement="remc", device="cpu"))
    assert not s.placed("cpu")
    err = capsys.readouterr().err
    assert err.startswith("remc: note: remc's CPU placement is not available (") and "not laid out" in err


def test_no_prepack_is_measured_and_predicted(lowered):
    """``DeviceSettings(prepack=False)`` (``--no-prepack``): the sessions set ``session.disable_prepacking``,
    kernel memory is measured that way (no packed copies: session creation requests fewer bytes), the layout
    follows it to the byte, the outputs are the pre-packing session's, and the need is smaller."""
    import numpy as np

    from remc.fit import predict
    on, off = runtime.DeviceSettings(), runtime.DeviceSettings(prepack=False)
    p_on, p_off = predict(lowered, "cpu", settings=on), predict(lowered, "cpu", settings=off)
    assert p_off.placement == p_on.placement == "remc" and p_off.total < p_on.total
    lay_on, lay_off = model_layout(lowered, "cpu", on), model_layout(lowered, "cpu", off)
    assert lay_off.height == p_off.arena and lay_on.height == p_on.arena
    created = {}
    outs = {}
    for tag, st, lay in (("on", on, lay_on), ("off", off, lay_off)):
        sess, alloc = runtime.capped_session(lowered, "cpu", lay.height, st, layout=lay)
        created[tag] = alloc.in_use
        r = runtime.Runner(sess, runtime.random_inputs(lowered, 0), "cpu", mem_limit=lay.height, allocator=alloc)
        r()
        outs[tag] = r.outputs()
        s = alloc.stats
        assert s.planned == s.calls and s.fallback == 0 and s.high_water == lay.height, (tag, s)
    assert created["off"] < created["on"]  # no packed weight copies at session creation
    for name, v in outs["on"].items():
        np.testing.assert_allclose(outs["off"][name], v, rtol=1e-4, atol=1e-6, err_msg=name)


def _remc(*args: str):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "remc.cli", *args], capture_output=True, text=True, timeout=600)


def test_compiled_model_carries_its_layout_and_the_run_follows_it(tmp_path):
    """``remc compile`` stores its layout in the model; ``remc run`` uses it when its own events are the same:
    a stored layout that differs from the one remc derives (the greedy 'time' order, valid) is followed to the
    byte (the buffer's high-water mark is its height); under other settings (``--no-prepack``) it is set aside
    with a note and the layout derived again."""
    import onnx

    from remc.backends.placement import model_layout, store_layout
    from remc.backends.scratch import kernel_memory
    from remc.passes.arena import graph_events
    from remc.passes.placement import LAYOUT_KEY, layout
    train, out = tmp_path / "train.onnx", tmp_path / "out.onnx"
    assert _remc("zoo", "export", "gpt2", "--size", "small", "--batch", "2", "--train", "-o", str(train)).returncode == 0
    res = _remc("compile", str(train), "--budget", "150000", "--strategy", "checkpoint-all", "-o", str(out))
    assert res.returncode == 0, res.stderr
    m = onnx.load(out)
    assert LAYOUT_KEY in {p.key for p in m.metadata_props}
    res = _remc("run", str(out), "--mem-limit", "150000", "--json")
    assert res.returncode == 0, res.stderr
    rep = json.loads(res.stdout)
    assert rep["layout_source"] == "stored in the model" and "layout_note" not in rep
    assert rep["measured_peak"] == rep["predicted_peak"]
    derived = model_layout(m, "cpu")  # the stored one (it holds)
    ev = graph_events(m, "cpu", kernel_memory(m, "cpu"))
    other = layout(ev, orders=("time",))
    assert other.offsets != derived.offsets
    store_layout(m, other, "cpu")
    onnx.save(m, out)
    res = _remc("run", str(out), "--json")
    assert res.returncode == 0, res.stderr
    rep = json.loads(res.stdout)
    assert rep["layout_source"] == "stored in the model"
    assert rep["placement_stats"]["high_water"] == other.height and rep["placement_stats"]["fallback"] == 0
    res = _remc("run", str(out), "--no-prepack")
    assert res.returncode == 0, res.stderr
    assert "note: the model's stored layout was not used: the stored layout is for cpu/onnxruntime" in res.stdout
    assert "layout derived here" in res.stdout


def test_the_solver_constant_counts_the_pre_packed_weights():
    """remc's live-bytes model holds the weight copies session creation packs (MLAS' packed B of the training
    graph's MatMul/Gemm with constant weights, one per kernel instance): after the kernels are measured the
    DAG's constant grows by exactly the 'pre-packed weight' blocks of the checkpoint-all plan's layout, and by
    nothing with ``--no-prepack``; and by the 256-byte rounding of the small initializers the layout copies into
    its buffer ('initializer' blocks), with or without."""
    from remc.fit import dag_with_measured_scratch
    from remc.passes.arena import initializer_in_arena
    cfg = dict(zoo.small_config("gpt2"))
    batch = cfg.pop("batch")
    train = zoo.export("gpt2", batch, train=True, **cfg)
    for prepack in (True, False):
        settings = runtime.DeviceSettings(prepack=prepack)
        st = run(compile_pipeline(strategy="checkpoint-all"), State(model=train, budget=1 << 50))
        before = int(st.dag.constant)
        dag_with_measured_scratch(st, "cpu", settings)
        lay = model_layout(st.lowered, "cpu", settings)
        packed = sum(b.size for b in lay.blocks if b.what == "pre-packed weight")
        assert (packed > 0) == prepack
        inits = sum(b.size for b in lay.blocks if b.what == "initializer")
        small = sum(v.nbytes for v in st.graph.params if initializer_in_arena(v.nbytes, "cpu"))
        assert inits > small > 0
        assert int(st.dag.constant) - before == packed + inits - small


def test_a_second_kernel_packing_the_same_weight_frees_its_copy():
    """Two Gemm nodes on one weight (a recomputed copy, as lowering writes it): session creation packs the weight
    twice and frees the second copy at once (the kernels share the first). remc's layout keeps one copy and
    lets the run's tensors use the other's bytes; the run follows it (no planned place found taken) and
    its high-water mark is the layout's height."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    w = numpy_helper.from_array(np.random.RandomState(0).rand(96, 64).astype(np.float32), "W")
    nodes = [helper.make_node("Gemm", ["X", "W"], ["Y0"], name="g0", transB=1),
             helper.make_node("Relu", ["Y0"], ["R"], name="r"),
             helper.make_node("Gemm", ["X", "W"], ["Y1"], name="g1", transB=1),
             helper.make_node("Add", ["R", "Y1"], ["Z"], name="add")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [64, 64])],
                          [helper.make_tensor_value_info("Z", TensorProto.FLOAT, [64, 96])], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    lay = model_layout(m, "cpu")
    whats = [b.what for b in lay.blocks]
    assert whats.count("pre-packed weight") == 1 and whats.count("pre-packed weight (shared)") == 1
    import dataclasses

    from remc.backends.placement import best_layout
    from remc.backends.scratch import kernel_memory
    from remc.passes.arena import graph_events
    both_kept = dataclasses.replace(graph_events(m, "cpu", kernel_memory(m, "cpu")), prepack_shared=())
    assert lay.height < best_layout(both_kept).height  # the run's tensors take the freed copy's bytes
    sess, alloc = capi.placed_session(m, lay.height, lay)
    r = runtime.Runner(sess, {"X": np.ones((64, 64), np.float32)}, "cpu", mem_limit=lay.height, allocator=alloc)
    r()
    r()
    st = alloc.stats
    assert st.rejected == 0 and st.fallback == 0 and st.planned == st.calls
    assert st.high_water == lay.height


def _run_thread_ids(lowered, lay, threads, native):  # noqa: ANN001, ANN202
    """Two runs on ``threads`` intra-op threads: the allocator's statistics, the outputs, and the ids of the
    threads whose requests reached the Python callbacks (every request when ``native`` is False)."""
    import threading
    sess, alloc = capi.placed_session(lowered, lay.height, lay, threads=threads, native=native)
    seen: set[int] = set()
    inner = alloc.alloc

    def alloc_here(n):  # noqa: ANN001, ANN202
        seen.add(threading.get_ident())
        return inner(n)
    alloc.alloc = alloc_here
    r = runtime.Runner(sess, runtime.random_inputs(lowered, 0), "cpu", mem_limit=lay.height, allocator=alloc)
    r()
    r()
    return alloc.stats, r.outputs(), seen


@pytest.mark.parametrize("native", [False, pytest.param(None, marks=needs_native)])
def test_two_intra_op_threads_request_from_the_run_thread_at_the_planned_offsets(lowered, native):
    """With 2 intra-op threads every request still comes from the thread that calls ``Run`` (the Python
    callbacks see no other thread) and lands at its planned offset: measured = predicted, the outputs those of
    one thread."""
    import threading
    lay = model_layout(lowered, "cpu")
    st, outs, seen = _run_thread_ids(lowered, lay, 2, native)
    assert st.planned == st.calls and st.fallback == 0 and st.rejected == 0 and not st.failures
    assert st.high_water == lay.height
    if native is False:
        assert seen == {threading.get_ident()}
    _, ref, _ = _run_thread_ids(lowered, lay, 1, False)
    ok, worst = runtime.compare_outputs(outs, ref)
    assert ok, worst


@needs_native
def test_the_native_side_waits_while_python_holds_the_tables(lowered):
    """A native ``Alloc`` on another thread that the plan would serve waits while the tables' lock is held
    (``NativeTables.held``), then gets its planned place: the native side takes the lock."""
    import ctypes
    import threading
    lay = model_layout(lowered, "cpu")
    sess, alloc = capi.placed_session(lowered, lay.height, lay)
    nt = sess.native
    alloc.begin_run()
    size, off = alloc._plan()[0]
    fn = capi.ALLOC_FN(sess._struct.Alloc)
    this = ctypes.addressof(sess._struct)
    got: list = []
    done = threading.Event()

    def request():  # noqa: ANN202
        got.append(fn(this, size))
        done.set()
    with nt.held():
        assert nt.s[nativealloc.MODE] == 1
        t = threading.Thread(target=request)
        t.start()
        assert not done.wait(0.3)  # it waits for the lock
    assert done.wait(30)
    t.join()
    alloc.native.pull()
    assert got == [alloc.base + off] and alloc.stats.planned >= 1
