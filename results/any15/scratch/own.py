import sys, time
import numpy as np
sys.path.insert(0, "tools")
from bench_portfolio import random_small
from remc.backends import strategies as st
from remc.passes import approx
from remc.passes.options import ApproxOptions
from remc.passes.solver_api import Clock
from remc.ir.schedule import checkpoint_all
from remc.passes.milp_model import simple_lower_bound
k = int(sys.argv[1]); T = float(sys.argv[2]); searched = sys.argv[3] == "1"
rng = np.random.default_rng(12)
for i in range(k + 1):
    dag, frac = random_small(rng, 50)
budget = max(int(frac * checkpoint_all(dag).peak(dag)), int(simple_lower_bound(dag)))
t0 = time.perf_counter()
try:
    s = approx.solve_approx(dag, budget, ApproxOptions(time_limit=T, threads=1), lp=st._highs(), clock=Clock(T), race=st._race(),
                            searched=searched, progress=lambda ev: print(f"{time.perf_counter()-t0:.2f}", ev.phase, ev.incumbent, flush=True))
    print(s.cost(dag), {k: v for k, v in s.report.extras.items() if isinstance(v, str)})
except Exception as e:
    print(type(e).__name__, e)
print(f"{time.perf_counter()-t0:.2f}s")
