#!/usr/bin/env python3
"""Any zoo model (ARGV[3], batch ARGV[4], paper size; strategy ARGV[5]) compiled on CPU for CUDA with the kernel requests measured on the H200 (its cache,
results/gpu_h200_s8/scratch_cache_h200.json, keyed as on the device: GPU name, onnxruntime 1.31.1): the strategy at
solver budget ARGV[1] with time limit ARGV[2] s, the measured workspace in the DAG, then remc's layout of the
lowered graph (greedy height, and ``best_layout``'s, vs the live lower bound); the events are pickled for
tools/layout_orders.py.

    python tools/layout_any_cpu.py 1537982592 40 unet 4 checkmate
    python tools/layout_any_cpu.py 1428169260 30 unet 4 approx
"""
# ruff: noqa: E402, E401, E702, I001
import os, pickle, shutil, sys, time
import onnxruntime
onnxruntime.__version__ = "1.31.1"
from remc.backends import profile, runtime
profile.device_tag = lambda device: "cuda/NVIDIA H200"
from remc.backends import scratch
from remc import zoo, fit
from remc.backends.strategies import make_options
from remc.pipeline import State, compile_pipeline, run, shaped_model
from remc.passes.arena import graph_events
from remc.passes.placement import layout
cache = "/tmp/gpuexp/cache"
os.makedirs(cache, exist_ok=True)
shutil.copy("results/gpu_h200_s8/scratch_cache_h200.json", cache + "/scratch.json")
runtime.cuda_available = lambda: True
train = zoo.export(sys.argv[3], int(sys.argv[4]), train=True, **{k: v for k, v in zoo.paper_config(sys.argv[3]).items() if k != "batch"})
passes = compile_pipeline(strategy=sys.argv[5], device="cuda", options=make_options(sys.argv[5], time_limit=float(sys.argv[2])))
st = run(passes[:3], State(model=train, budget=int(sys.argv[1])))
km_in = scratch.kernel_memory(shaped_model(st.graph), "cuda", cache_dir=cache)
print("nodes with requests", sum(1 for k in km_in.values() if k.requests), "of", len(km_in), flush=True)
orig = scratch.unmeasured_kernels
scratch.unmeasured_kernels = lambda m, d, **k: orig(m, d, cache_dir=cache, **{a: b for a, b in k.items() if a != "cache_dir"})
print("measured-scratch nodes", fit.dag_with_measured_scratch(st, "cuda"), flush=True)
t = time.time(); run(passes[3:], st); print("solve", time.time() - t, flush=True)
km = scratch.kernel_memory(st.lowered, "cuda", cache_dir=cache)
ev = graph_events(st.lowered, "cuda", km)
pickle.dump(ev, open(f"/tmp/gpuexp/ev_{sys.argv[3]}_{sys.argv[1]}.pkl", "wb"))
lay = layout(ev)
print("height", lay.height, "lb", lay.lower_bound, lay.order, "outside", runtime.outside_bytes(st.lowered, "cuda"), flush=True)
from remc.backends.placement import best_layout
best = best_layout(ev)
print("best_layout height", best.height, "lb", best.lower_bound, best.order, flush=True)
