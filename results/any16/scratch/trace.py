"""One strategy on a node-link graph with progress events (wall, CPU). python trace.py GRAPH RATIO STRATEGY SECONDS"""
import math, sys, time
from remc.backends.strategies import make_options, solve
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
g, ratio, strat, T = sys.argv[1], float(sys.argv[2]), sys.argv[3], float(sys.argv[4])
dag = load_nodelink(g); budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
t0, c0 = time.perf_counter(), time.process_time()
def prog(ev):
    print(f"  {time.perf_counter()-t0:6.2f}s cpu {time.process_time()-c0:5.2f} {ev.phase} {ev.incumbent}", flush=True)
try:
    s = solve(strat, dag, budget, make_options(strat, time_limit=T, threads=1), progress=prog)
    print(strat, f"+{100*(s.cost(dag)/dag.total_cost-1):.2f}%", s.report.status, f"{time.perf_counter()-t0:.2f}s", {k: v for k, v in s.report.extras.items() if isinstance(v, str)})
except Exception as e:
    print(strat, type(e).__name__, str(e)[:300], f"{time.perf_counter()-t0:.2f}s")
