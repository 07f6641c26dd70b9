"""Where the cpsat strategy's time goes on one graph: its phases' start times (monkeypatched wrappers)."""
import sys, time
t00 = time.perf_counter()
from remc.ir.nodelink import load_nodelink
import remc.backends.cpsat as cp
import remc.passes.strategies as ps
from remc.backends.strategies import make_options, solve
from remc.ir.schedule import checkpoint_all
path, ratio, limit = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
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
wrap(ps, "best_baseline"); wrap(cp, "_stage_search_hint"); wrap(cp, "_build"); wrap(cp, "solve_cpsat")
try:
    s = solve("cpsat", dag, budget, make_options("cpsat", time_limit=limit, threads=1))
    print("result", s.report.status, s.cost(dag), s.report.extras.get("cp_sat"))
except Exception as e:
    print("error", type(e).__name__, str(e)[:200])
print(f"total {time.perf_counter() - T:.2f} s")
