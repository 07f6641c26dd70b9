"""Which phases run, with times: python tr2.py GRAPH RATIO SECONDS"""
import math, sys, time
import remc.passes.evict as ev
import remc.passes.approx as ap
from remc.backends.strategies import make_options, solve
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
g, ratio, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
dag = load_nodelink(g)
budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
t0 = time.perf_counter()
def wrap(mod, name):
    f = getattr(mod, name)
    def w(*a, **k):
        s = time.perf_counter()
        try:
            r = f(*a, **k)
            return r
        finally:
            d = k.get("deadline")
            print(f"{name}: {s-t0:.1f} -> {time.perf_counter()-t0:.1f} deadline {None if d is None else round(d-t0,1)}", flush=True)
    setattr(mod, name, w)
wrap(ev, "evict_search"); wrap(ap, "evict_search"); wrap(ap, "find_feasible"); wrap(ap, "_round"); wrap(ap, "_refine")
import remc.passes.feasible as fe; wrap(fe, "find_feasible")
try:
    s = solve("checkmate", dag, budget, make_options("checkmate", time_limit=secs, threads=1))
    print("done", time.perf_counter() - t0, s.report.cost)
except Exception as e:
    print("ERR", time.perf_counter() - t0, str(e)[:100])
