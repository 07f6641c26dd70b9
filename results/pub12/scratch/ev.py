import math, sys, time
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
import remc.backends.strategies as bs
from remc.passes.solver_api import Clock
from remc.passes.strategies import best_baseline
for g in sys.argv[1:]:
    dag = load_nodelink(g)
    for r in (0.8, 0.9):
        budget = math.ceil(checkpoint_all(dag).peak(dag) * r)
        t = time.perf_counter(); b = best_baseline(dag, budget); tb = time.perf_counter() - t
        t = time.perf_counter(); s = bs._stage_hint(dag, budget, None, Clock(60.0)); ts = time.perf_counter() - t
        print(g[-30:], r, "baseline", None if b is None else b.cost(dag), f"{tb:.2f}s", "stage", None if s is None else f"+{100*(s.cost(dag)/dag.total_cost-1):.3f}%", f"{ts:.2f}s", flush=True)
