"""The bound rounds of checkmate's CP-SAT phase from the optimum (C=2 model's), with CP-SAT parameter variants:
CPU seconds of each round and in all.  proof.py GRAPH RATIO VARIANT..."""
import math
import pickle
import sys
import time
from pathlib import Path

import remc.backends.cpsat as cpsat
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all

path, ratio = sys.argv[1], float(sys.argv[2])
variants = sys.argv[3:] or ["default"]
dag = load_nodelink(path)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
cache = Path(f"/tmp/pub19/opt_{Path(path).stem}_{ratio}.pkl")
if cache.exists():
    best = pickle.loads(cache.read_bytes())
else:
    from remc.backends.strategies import make_options, solve
    best = solve("checkmate", dag, budget, make_options("checkmate", time_limit=120))
    cache.write_bytes(pickle.dumps(best))
base = dag.total_cost
print("opt", best.cost(dag), f"+{100 * (best.cost(dag) / base - 1):.3f}%")
orig = cpsat._solver
cur = {}


def patched(cp_model, options, t0, presolve):
    s = orig(cp_model, options, t0, presolve)
    for k, v in cur.items():
        setattr(s.parameters, k, v)
    return s


cpsat._solver = patched
ob = cpsat._bound_round


def br(dag, budget, copies, *a, **k):
    c = time.process_time()
    out = ob(dag, budget, copies, *a, **k)
    print(f"   round: sum copies {sum(copies)} status {out[0].status} grow {len(out[1])} {time.process_time() - c:.2f} cpu", flush=True)
    return out


cpsat._bound_round = br
for var in variants:
    cur = {}
    if var != "default":
        for kv in var.split(","):
            k, v = kv.split("=")
            cur[k] = eval(v)
    c = time.process_time()
    w = time.perf_counter()
    res = cpsat.cpsat_bound(dag, budget, cpsat.CpSatOptions(time_limit=60, threads=1, copies=2, presolve=False),
                            hint=best, stop_at=best.cost(dag), quick=3)
    print(f"{var}: {res.status} bound {res.bound:g} {time.process_time() - c:.2f} cpu {time.perf_counter() - w:.2f} s", flush=True)
