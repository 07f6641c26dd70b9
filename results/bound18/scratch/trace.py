"""approx alone on a pickled DAG with approx's evict_search calls traced: python trace.py NAME RATIO T [strategy]"""
import math, pickle, sys, time
import remc
import remc.passes.approx as ap
from remc.backends.strategies import make_options, solve
from remc.ir.schedule import checkpoint_all
name, ratio, T = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
st = sys.argv[4] if len(sys.argv) > 4 else "approx"
dag = pickle.load(open(f"/tmp/bound18/{name}.pkl", "rb"))
base = float(dag.cost.sum()); budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
pct = lambda c: f"+{100 * (c / base - 1):.5f}%"
t0 = time.perf_counter()
_ev, _clean = ap.evict_search, ap.clean
def ev(dag_, b, *, deadline=None, start=None, **k):
    from remc.ir.schedule import Schedule
    sc = None
    if start is not None:
        from remc.passes.stagesearch import StageState
        s_ = StageState(dag_, b, start); sc = pct(s_.total_cost())
    print(f"{time.perf_counter() - t0:6.1f}s evict_search start={sc} for {deadline - time.perf_counter():.1f}s", flush=True)
    r = _ev(dag_, b, deadline=deadline, start=start, **k)
    print(f"{time.perf_counter() - t0:6.1f}s   -> {None if r is None else pct(float(r[0].sum(axis=0) @ dag_.cost))} {None if r is None else r[3]}", flush=True)
    return r
def cl(dag_, R, S):
    R2, S2 = _clean(dag_, R, S)
    print(f"{time.perf_counter() - t0:6.1f}s   clean {pct(float(R.sum(axis=0) @ dag_.cost))} -> {pct(float(R2.sum(axis=0) @ dag_.cost))}", flush=True)
    return R2, S2
ap.evict_search, ap.clean = ev, cl
s = solve(st, dag, budget, make_options(st, time_limit=T, threads=1))
print(remc.__file__, s.report.status, pct(s.report.cost), flush=True)
