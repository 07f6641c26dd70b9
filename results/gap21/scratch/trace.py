"""checkmate on GRAPH at RATIO for SECS with each phase of _approx_alone timed. python trace.py GRAPH RATIO SECS"""
import functools
import math
import sys
import time

import remc.backends.strategies as st
from remc.backends.strategies import make_options, solve
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all

T0 = time.perf_counter()
g, ratio, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
dag = load_nodelink(g)
base = float(dag.cost.sum())


def wrap(name):
    f = getattr(st, name)

    @functools.wraps(f)
    def w(*a, **k):
        t = time.perf_counter()
        r = f(*a, **k)
        out = r[0] if isinstance(r, tuple) else r
        c = getattr(out, "cost", None)
        cs = f" cost +{100 * (out.cost(dag) / base - 1):.4f}%" if callable(c) else ""
        print(f"{name}: {t - T0:.1f} -> {time.perf_counter() - T0:.1f}{cs}", flush=True)
        return r
    setattr(st, name, w)


for nm in ("_gap_cover_first", "_approx_fn", "_deep_improve", "_refine", "_cover_phase", "_last_bound"):
    wrap(nm)
budget = max(1, math.ceil(ratio * checkpoint_all(dag).peak(dag)))
T0 = time.perf_counter()
def prog(e):
    inc = "" if e.incumbent is None else f" +{100 * (e.incumbent / base - 1):.4f}%"
    print(f"  [{e.elapsed:.1f}] {e.phase}{inc}", flush=True)


s = solve("checkmate", dag, budget, make_options("checkmate", time_limit=secs, threads=1), progress=prog)
rep = s.report
print("final", rep.status, f"+{100 * (rep.cost / base - 1):.4f}%", f"bound +{100 * (rep.bound / base - 1):.4f}%",
      f"{time.perf_counter() - T0:.1f}s", rep.extras.get("portfolio"))
