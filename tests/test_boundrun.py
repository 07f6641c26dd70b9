"""Graph outputs bound at their planned offsets inside remc's buffer (``backends.boundrun``, the route CUDA graph
takes on the compiled layout): the allocator sees the layout's requests less the outputs', each at its planned
offset, and the run holds exactly the layout's height. On CPU the same child runs without CUDA graph."""
from __future__ import annotations

import subprocess
import sys

import pytest

from remc import zoo
from remc.backends import capi, runtime
from remc.backends.boundrun import run_bound
from remc.backends.placement import PlacedAllocator, model_layout
from remc.passes.placement import RUN, Block, Layout, bind_outputs, overlaps
from remc.pipeline import State, compile_pipeline, run


def _layout() -> Layout:
    """Three run blocks: 'y' (a graph output) lives 2..9, 't' 0..2 below it in address, 'u' 3..5 beside it."""
    blocks = (Block(512, 0, 2, RUN, what="t"), Block(256, 2, 9, RUN, what="y"), Block(256, 3, 5, RUN, what="u"))
    return Layout(blocks, (0, 0, 256), 512, 512)


def test_bind_outputs_drops_exactly_the_outputs_requests_and_keeps_every_other_offset() -> None:
    lay = _layout()
    assert not overlaps(lay)
    b = bind_outputs(lay, ["y", "z"])
    assert b.at == {"y": (0, 256)}
    assert b.outside == ("z",)  # no allocation of its own: bound outside the buffer
    assert b.layout.sequence(RUN) == [(512, 0), (256, 256)]  # t and u at their planned offsets, y's request gone
    assert b.layout.height == lay.height and b.extent() == 256


def test_a_request_off_the_layout_never_lands_in_a_bound_output() -> None:
    # 'y' is bound at [0, 256): the allocator never sees it; a request the layout lacks must not take that range
    fenced = PlacedAllocator(0, 1024, {"run": [(512, 512)]}, fenced=[(0, 256)])
    fenced.begin_run()
    assert fenced.alloc(200) == 256  # off the layout: best fit, above the fence
    plain = PlacedAllocator(0, 1024, {"run": [(512, 512)]})
    plain.begin_run()
    assert plain.alloc(200) == 0  # without the fence the same request would overwrite the bound output
    assert fenced.largest_gap() == 512 and plain.largest_gap() == 768


pytestmark_capi = pytest.mark.skipif(not capi.available(), reason="no usable onnxruntime C library")


@pytestmark_capi
@pytest.mark.parametrize("name", ["gpt2", "resnet50"])
def test_outputs_bound_at_their_planned_offsets_hold_the_compiled_layout(name: str) -> None:
    cfg = dict(zoo.small_config(name))
    batch = cfg.pop("batch")
    train = zoo.export(name, batch, train=True, **cfg)
    lowered = run(compile_pipeline(strategy="checkpoint-all"), State(model=train, budget=1 << 50)).lowered
    lay = model_layout(lowered, "cpu")
    outputs = [o.name for o in lowered.graph.output]
    b = bind_outputs(lay, outputs)
    assert len(b.at) == len(outputs) and not b.outside  # every output has its block in the compiled layout
    feeds = runtime.random_inputs(lowered, 0)
    r = run_bound(lowered, lay, lay.height, feeds, device="cpu", cuda_graph=False, iters=2, warmup=0)
    assert r.bound == len(outputs) and r.outside_outputs == 0
    assert r.requests_per_run == [len(b.layout.sequence(RUN))] * 2  # the outputs' requests never reach remc
    assert r.planned == r.calls and r.fallback == 0  # every other request at its planned offset
    assert r.held == lay.height  # measured = predicted, to the byte
    ref = runtime.measure(lowered, "cpu", feeds=feeds, warmup=0, iters=2, mem_method=None)
    ok, worst = runtime.compare_outputs(r.outputs, ref.outputs)
    assert ok, worst


@pytestmark_capi
@pytest.mark.parametrize("where", ["below an output", "below the live bytes"])
def test_a_buffer_below_the_layout_is_out_of_memory(where: str) -> None:
    cfg = dict(zoo.small_config("gpt2"))
    batch = cfg.pop("batch")
    train = zoo.export("gpt2", batch, train=True, **cfg)
    lowered = run(compile_pipeline(strategy="checkpoint-all"), State(model=train, budget=1 << 50)).lowered
    lay = model_layout(lowered, "cpu")
    b = bind_outputs(lay, [o.name for o in lowered.graph.output])
    # below a bound output's planned range: out of memory before any run; above it but below the live bytes: a
    # request mid-run finds no room (the run stops there, ONNX Runtime's CPU kernels take no NULL)
    cap = b.extent() - 256 if where == "below an output" else max(b.extent(), lay.lower_bound - 256)
    with pytest.raises(runtime.OutOfMemory, match=r"out of memory on cpu \(the run with outputs at their planned "
                                                  r"offsets\): needed \d+ bytes"):
        run_bound(lowered, lay, cap // 256 * 256, runtime.random_inputs(lowered, 0), device="cpu", cuda_graph=False,
                  iters=1, warmup=0)


def test_cuda_graph_on_cpu_is_one_line(tmp_path) -> None:  # noqa: ANN001
    m = tmp_path / "t.onnx"
    res = subprocess.run([sys.executable, "-m", "remc.cli", "zoo", "export", "gpt2", "--size", "small", "--batch", "2",
                          "--train", "-o", str(m)], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    res = subprocess.run([sys.executable, "-m", "remc.cli", "run", str(m), "--cuda-graph", "--iters", "1"],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 1
    assert res.stderr.strip() == "remc: error: --cuda-graph needs --device cuda (CUDA graph captures the GPU's kernels)"


def test_the_cuda_graph_line_says_measured_predicted_and_where_the_allocations_were() -> None:
    from remc.run_cli import format_run
    rep = {"model": "m.onnx", "device": "cuda", "median_seconds": 0.1, "median_seconds_cuda_graph": 0.09,
           "measured_peak": 1000, "placement": "remc", "outside_arena": 200, "predicted_peak": 1000, "mem_limit": 1200,
           "budget": 1200, "predicted_held": 1000, "placement_stats": {"planned": 5}, "outputs_match": None,
           "predicted_cost": None,
           "cuda_graph": {"measured_peak": 1000, "predicted_peak": 1000, "outputs_bound": 3, "planned": 7, "requests": 7,
                          "requests_per_run": [7, 0, 0], "outputs_match_normal_run": True}}
    line = format_run(rep).splitlines()[2]
    assert line.startswith("  with CUDA graph: measured 1000 B (1000 bytes: remc's buffer in use, 3 outputs bound")
    assert "vs predicted 1000 B (1000 bytes); 7 of 7 allocations at their planned address, 7 in the first Run call" in line
    assert "none in the 2 replays" in line
