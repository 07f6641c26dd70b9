#!/usr/bin/env python3
"""``compile_fit`` for CUDA on a machine without the GPU, from a kernel cache measured on it (the H200's,
results/gpu_h200_s8/scratch_cache_h200.json, keyed as on the device: GPU name, onnxruntime 1.31.1): every
kernel request comes from the cache, the prediction is remc's layout (``best_layout``), nothing runs. Prints the
fit's rounds and the predicted need against the budget.

    python tools/fit_from_cache.py unet 4 1537982592 approx 30
"""
# ruff: noqa: E402, I001
import json
import os
import shutil
import sys

import onnxruntime

onnxruntime.__version__ = "1.31.1"  # the cache's keys: the device's onnxruntime and GPU
from remc.backends import profile, runtime, scratch

profile.device_tag = lambda device: "cuda/NVIDIA H200"
runtime.cuda_available = lambda: True
CACHE = "/tmp/gpuexp/cache"
os.makedirs(CACHE, exist_ok=True)
shutil.copy("results/gpu_h200_s8/scratch_cache_h200.json", CACHE + "/scratch.json")
_orig = scratch._kernel_memory
scratch._kernel_memory = lambda m, d, **k: _orig(m, d, **{**k, "cache_dir": CACHE})

from remc import zoo
from remc.backends.strategies import make_options
from remc.fit import compile_fit
from remc.pipeline import State, compile_pipeline, run, stages

name, batch, budget, strategy, limit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
cfg = {k: v for k, v in zoo.paper_config(name).items() if k != "batch"}
if name == "unet":
    cfg.update(height=416, width=608)
opts = make_options(strategy, time_limit=limit) if strategy in ("approx", "checkmate", "cpsat") else None
passes = compile_pipeline(strategy=strategy, device="cuda", options=opts)
st = run(stages(passes, last="units"), State(model=zoo.export(name, batch, train=True, **cfg), budget=budget))
try:
    fit = compile_fit(stages(passes, first="schedule"), st, device="cuda", max_rounds=3,
                      on_round=lambda r: print("round", json.dumps(r, default=str), flush=True))
    p = fit.prediction
    print(json.dumps({"compiled": True, "rounds": fit.rounds, "budget": budget, "solver_budget": fit.solver_budget,
                      "predicted": p.total, "layout_height": p.arena, "outside": p.outside,
                      "live_lower_bound": p.in_use_peak, "fit_history": fit.history}, default=str))
except Exception as e:  # noqa: BLE001 - printed
    print(json.dumps({"compiled": False, "why": str(e)[:1500]}))
