"""approx on a node-link file: its phases' start and end (wrapped calls), to find where a time limit is overrun."""
import sys, time
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
import remc.backends.strategies as st
import remc.passes.approx as ap
import remc.passes.strategies as ps
from remc.backends.strategies import make_options, solve
path, ratio, tl = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
dag = load_nodelink(path)
budget = int(ratio * checkpoint_all(dag).peak(dag))
T = time.perf_counter()
def wrap(mod, name):
    f = getattr(mod, name)
    def g(*a, **k):
        t = time.perf_counter(); print(f"  {t - T:6.2f} {name} start", flush=True)
        try:
            return f(*a, **k)
        finally:
            print(f"  {time.perf_counter() - T:6.2f} {name} end ({time.perf_counter() - t:.2f} s)", flush=True)
    setattr(mod, name, g)
wrap(st, "best_baseline"); wrap(ap, "gap_bound"); wrap(ap, "_stage_search"); wrap(ap, "window_search"); wrap(ap, "_refine")
try:
    s = solve("approx", dag, budget, make_options("approx", time_limit=tl, threads=1))
    print("result", s.report.status, s.cost(dag))
except Exception as e:
    print("error", type(e).__name__, str(e)[:150])
print(f"total {time.perf_counter() - T:.2f} s")
