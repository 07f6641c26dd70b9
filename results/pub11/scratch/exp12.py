import sys, time
sys.path.insert(0, __import__("os").path.dirname(__file__))
import exp3
from exp import case, hint_of, pct
import remc.backends.cpsat as cp
from remc.backends.cpsat import CpSatOptions
name, r = sys.argv[1].split(":")
dag, budget = case(name, float(r))
h = hint_of(dag, budget)
t1 = time.perf_counter()
best, b, note = cp.cpsat_phase(dag, budget, incumbent=h, gap=1e-4, threads=2, seconds=30)
print(f"phase {time.perf_counter()-t1:.1f}s {pct(dag,best.cost(dag))} bound {pct(dag,b)} [{note}]", flush=True)
t1 = time.perf_counter()
res = cp.cpsat_bound(dag, budget, CpSatOptions(time_limit=float(sys.argv[2]), threads=2, copies=2), hint=best,
                     stop_at=best.cost(dag) - 1e-4 * (best.cost(dag) - dag.total_cost))
print(f"bound {time.perf_counter()-t1:.1f}s {res.status} {pct(dag,res.bound)}", flush=True)
