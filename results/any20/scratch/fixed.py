"""fixed.py MODEL RATIO: the fixed work of `remc compile MODEL --budget RATIOx` before its first solve, each step's
CPU and wall seconds (no time limit: kernels and costs from the cache), then the calls repeated."""
import os
import sys
import time

t_imp = time.process_time()
from remc.pipeline import State, compile_pipeline, run, stages, shaped_model, verify  # noqa: E402
from remc import fit  # noqa: E402
from remc.backends import runtime  # noqa: E402
from remc.backends.scratch import unmeasured_kernels  # noqa: E402
print(f"imports: cpu {time.process_time() - t_imp:.2f}")
model, ratio = sys.argv[1], float(sys.argv[2])
settings = runtime.DEFAULT_SETTINGS


def step(name, f):
    t0, c0 = time.perf_counter(), time.process_time()
    r = f()
    print(f"{name:40s} cpu {time.process_time() - c0:6.2f}  wall {time.perf_counter() - t0:6.2f}  load {os.getloadavg()[0]:.1f}",
          flush=True)
    return r


passes = compile_pipeline(cost="auto" if False else "profile", device="cpu", strategy="approx")
state = step("import", lambda: run(stages(passes, last="import"), State(model=model)))
step("kernel memory first", lambda: unmeasured_kernels(shaped_model(state.graph), "cpu", settings=settings))
step("costs", lambda: run(stages(passes, first="costs", last="costs"), state))
step("units", lambda: run(stages(passes, first="units", last="units"), state))
sm = step("shaped_model", lambda: shaped_model(state.graph))
step("unmeasured_kernels(shaped)", lambda: unmeasured_kernels(sm, "cpu", settings=settings))
step("unmodified_need", lambda: fit.unmodified_need(state, "cpu", settings))
step("dag_with_measured_scratch", lambda: fit.dag_with_measured_scratch(state, "cpu", settings, None))
step("device_floor", lambda: fit.device_floor(state, "cpu", settings))
step("verify(state)", lambda: verify(state, state))
