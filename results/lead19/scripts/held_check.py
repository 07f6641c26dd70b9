"""``fit.device_floor`` (a lower bound on what every plan needs on the device) against what plans need there: the
unmodified graph's need (``fit.unmodified_need``), and a compiled plan's prediction at ``ratio`` x that need (approx,
``limit`` s, the budget raised to the floor where it is below), neither of which may be below it. One JSON line per
model.

    python held_check.py MODEL.onnx [RATIO [LIMIT]]   # RATIO "f1.03": the budget is 1.03 x the floor
"""
import json
import sys
import time

from remc.backends.runtime import DEFAULT_SETTINGS
from remc.backends.strategies import make_options
from remc.fit import compile_fit, dag_with_measured_scratch, device_floor, measure_kernels_first, unmodified_need
from remc.ir.errors import RemcError
from remc.pipeline import State, compile_pipeline, run, stages

path = sys.argv[1]
spec = sys.argv[2] if len(sys.argv) > 2 else "0.9"
limit = float(sys.argv[3]) if len(sys.argv) > 3 else 30.0
t0 = time.perf_counter()
passes = compile_pipeline(strategy="approx", options=make_options("approx", time_limit=limit))
st = run(stages(passes, last="import"), State(model=path))
measure_kernels_first(st, "cpu", DEFAULT_SETTINGS)
st = run(stages(passes, first="costs", last="units"), st)
need = unmodified_need(st, "cpu", DEFAULT_SETTINGS)
dag_with_measured_scratch(st, "cpu", DEFAULT_SETTINGS)
held, why = device_floor(st, "cpu", DEFAULT_SETTINGS)
out = {"model": path.rsplit("/", 1)[-1], "floor": held, "unmodified_need": need, "floor_le_need": held <= need,
       "floor_over_need": round(held / need, 4), "why": why[:160]}
st.budget = int(float(spec[1:]) * held) if spec.startswith("f") else max(int(float(spec) * need), held)
out["budget"] = st.budget
try:
    fit = compile_fit(stages(passes, first="schedule"), st, device="cpu", settings=DEFAULT_SETTINGS)
    out.update(predicted=fit.prediction.total, floor_le_predicted=held <= fit.prediction.total, rounds=fit.rounds)
except RemcError as e:
    out.update(error=str(e)[:200])
out["seconds"] = round(time.perf_counter() - t0, 1)
print(json.dumps(out), flush=True)
