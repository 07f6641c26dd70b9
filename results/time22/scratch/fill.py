"""Measure every kernel-memory signature of MODEL's input graph with no deadline (the branch's scratch.py), then
profile every op signature; into $HOME's cache. python fill.py MODEL   (scratch; results/time22)"""
import sys
import time

import onnx

from remc.backends.profile import profile_costs
from remc.backends.runtime import import_model
from remc.backends.scratch import unmeasured_kernels
from remc.pipeline import shaped_model

shaped = shaped_model(import_model(onnx.load(sys.argv[1], load_external_data=False)))
t = time.perf_counter()
_, left, total = unmeasured_kernels(shaped, "cpu", deadline=None)
print(f"kernel memory: {left} of {total} left after {time.perf_counter() - t:.0f} s", flush=True)
t = time.perf_counter()
profile_costs(shaped, device="cpu")
print(f"costs profiled in {time.perf_counter() - t:.0f} s", flush=True)
