import sys, time, onnx
from remc.backends.runtime import import_model
from remc.pipeline import shaped_model
from remc.backends import scratch
shaped = shaped_model(import_model(onnx.load(sys.argv[1], load_external_data=False)))
keys = {}
for i in range(3):
    t = time.perf_counter(); r = scratch.unmeasured_kernels(shaped, "cpu", deadline=time.perf_counter(), **({"keys": keys} if hasattr(scratch, "kernel_keys") else {})); print(i, round(time.perf_counter() - t, 2), r[1], r[2], flush=True)
