import math, pickle, sys, time
import numpy as np
sys.path.insert(0, "/work/wt/pub22/results/pub22/scratch")
from mapcheck import mapcheck
from remc.ir.schedule import checkpoint_all
from remc.backends.highs import _load_highs, _run_highs
dag = pickle.load(open("/tmp/pub22/r50piece_dag.pkl", "rb"))
s = pickle.load(open("/tmp/pub22/r50piece_0.9.pkl", "rb"))
budget = math.ceil(0.9 * checkpoint_all(dag).peak(dag))
cm, x, bad, ax, obj, overhead, info = mapcheck(dag, budget, s.R, s.S, 2)
m = cm.model
print("x obj", m.col_cost @ x, flush=True)
for var in sys.argv[1:]:
    h, clock = _load_highs(m, True, 1, 1e-6)
    for kv in filter(None, var.split(",")):
        k, v = kv.split("=")
        v = {"true": True, "false": False}.get(v, v)
        try:
            v = float(v) if "." in v or "e" in v else int(v)
        except (TypeError, ValueError):
            pass
        h.setOptionValue(k, v)
    t = time.perf_counter()
    r = _run_highs(h, clock, True, 120, [], m)
    print(f"{var:50s} {r.status} obj {r.objective:.9f} bound {r.bound:.9f} {'ABOVE' if r.bound > m.col_cost @ x else 'ok'} {time.perf_counter()-t:.1f} s", flush=True)
