"""Trace one bench_portfolio random case: phases (progress events) of approx and checkmate."""
import sys, time, math
import numpy as np
sys.path.insert(0, "tools")
from bench_portfolio import random_small
from remc.backends.strategies import make_options, solve
from remc.ir.schedule import checkpoint_all
from remc.passes.milp_model import simple_lower_bound

k = int(sys.argv[1]); T = float(sys.argv[2]); strategies = sys.argv[3].split(",")
rng = np.random.default_rng(12)
for i in range(k + 1):
    dag, frac = random_small(rng, 50)
peak = checkpoint_all(dag).peak(dag)
budget = max(int(frac * peak), int(simple_lower_bound(dag)))
print(f"case {k}: n={dag.n} frac={frac:.2f} budget={budget} total={dag.total_cost}")
for s in strategies:
    t0 = time.perf_counter()
    def prog(ev):
        print(f"  [{s}] {time.perf_counter()-t0:6.2f}s {ev}", flush=True)
    try:
        r = solve(s, dag, budget, make_options(s, time_limit=T, threads=1), progress=prog)
        print(s, r.cost(dag), r.report.status, f"{time.perf_counter()-t0:.2f}s", {k: v for k, v in r.report.extras.items() if isinstance(v, str)})
    except Exception as e:
        print(s, type(e).__name__, str(e)[:300], f"{time.perf_counter()-t0:.2f}s")
