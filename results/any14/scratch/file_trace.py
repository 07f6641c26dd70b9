"""One strategy on a node-link file with per-phase progress and wrapped hot calls: where the time goes.
usage: file_trace.py FILE RATIO LIMIT STRATEGY"""
import sys, time
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.backends.strategies import make_options, solve
import remc.passes.approx as ap
import remc.passes.feasible as fe
path, ratio, tl, strat = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
dag = load_nodelink(path)
budget = int(ratio * checkpoint_all(dag).peak(dag))
T = time.perf_counter()
def wrap(mod, name):
    f = getattr(mod, name)
    def g(*a, **k):
        t = time.perf_counter(); print(f"  {t - T:6.2f} {mod.__name__}.{name} start", flush=True)
        try:
            return f(*a, **k)
        finally:
            print(f"  {time.perf_counter() - T:6.2f} {name} end ({time.perf_counter() - t:.2f} s)", flush=True)
    setattr(mod, name, g)
for n in ("gap_bound", "_stage_search", "_refine", "find_feasible", "_round"):
    if hasattr(ap, n): wrap(ap, n)
wrap(ap._Relaxation, "at") if hasattr(ap, "_Relaxation") else None
def prog(ev):
    print(f"  [{time.perf_counter()-T:6.2f}] {ev.phase:<14} cost={ev.incumbent} bound={ev.bound}", flush=True)
try:
    s = solve(strat, dag, budget, make_options(strat, time_limit=tl, threads=1), progress=prog)
    print("result", s.report.status, s.cost(dag), {k: v for k, v in s.report.extras.items() if k in ("lp", "feasibility_milp", "refine_seconds", "refine_stopped", "stage_search", "approx", "cp_sat", "refine")})
except Exception as e:
    print("error", type(e).__name__, str(e)[:300])
print(f"total {time.perf_counter() - T:.2f} s")
