"""tools/checkmate_phases.py with CPU seconds beside wall seconds, and cpsat_bound round details."""
import math
import sys
import time

import remc.backends.cpsat as cpsat
import remc.backends.strategies as strategies
from remc.backends.strategies import make_options, solve
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all

import os

for kv in filter(None, os.environ.get("PUB19_SET", "").split(";")):  # e.g. cpsat.STALL_MIN=4
    k, v = kv.split("=")
    mod, name = k.split(".")
    setattr({"cpsat": cpsat, "strategies": strategies}[mod], name, eval(v))
    print("set", k, v)
path, ratio = sys.argv[1], float(sys.argv[2])
tl = float(sys.argv[3]) if len(sys.argv) > 3 else 60.0
dag = load_nodelink(path)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
base = dag.total_cost
t0, c0 = time.perf_counter(), time.process_time()


def timed(module, name):
    f = getattr(module, name)

    def wrapper(*a, **k):
        w, c = time.perf_counter(), time.process_time()
        out = f(*a, **k)
        extra = ""
        if name == "_bound_round":
            extra = f" copies>1 {sum(1 for x in a[2] if x > 1)} status {out[0].status} bound {out[0].bound:g} grow {len(out[1])}"
        if name == "solve_cpsat":
            extra = f" cost {out.cost(dag):g} {out.report.get('solver')}"
        print(f"{time.perf_counter() - t0:6.2f} s {time.process_time() - c0:6.2f} cpu  {name} took "
              f"{time.perf_counter() - w:.2f} s / {time.process_time() - c:.2f} cpu{extra}", flush=True)
        return out
    setattr(module, name, wrapper)


for name in ("_cover_first", "_stage_hint", "cpsat_phase"):
    timed(strategies, name)
for name in ("solve_cpsat", "_bound_round"):
    timed(cpsat, name)
s = solve("checkmate", dag, budget, make_options("checkmate", time_limit=tl))
r = s.report
print(f"{time.perf_counter() - t0:6.2f} s {time.process_time() - c0:6.2f} cpu checkmate {r.status}: "
      f"+{100 * (s.cost(dag) / base - 1):.3f}%, gap {100 * r.gap:.2f}%")
for key in ("stage_search", "cover_bound", "cover_schedule", "cp_sat"):
    print(f"          {key}: {r.extras.get(key)}")
