"""A solve's phases and its stage searches: python trace.py GRAPH RATIO STRATEGY LIMIT (from a folder with no remc/)."""
import math, sys, time
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import evict, approx as approx_mod, feasible
from remc.backends import strategies
g, ratio, strat, limit = sys.argv[1], float(sys.argv[2]), sys.argv[3], float(sys.argv[4])
dag = load_nodelink(g); B = math.ceil(ratio * checkpoint_all(dag).peak(dag))
t0 = time.perf_counter(); c0 = time.process_time()
def stamp():
    return f"[{time.perf_counter() - t0:6.1f} s wall {time.process_time() - c0:6.1f} s cpu]"
real = evict.evict_search
def traced(*a, **k):
    s = k.get("search")
    dl = k.get("deadline")
    r0 = None if s is None else s.rows
    print(stamp(), "evict_search start, share", None if dl is None else round(dl - time.perf_counter(), 1), "s, start", k.get("start") is not None, "search rows", r0, flush=True)
    c = time.process_time()
    out = real(*a, **k)
    print(stamp(), "evict_search end", "found" if out is not None else "none", f"{time.process_time() - c:.1f} s cpu", "rows", None if s is None else s.rows, flush=True)
    return out
evict.evict_search = traced
approx_mod.evict_search = traced
rf = feasible.find_feasible
def tf(*a, **k):
    print(stamp(), "find_feasible start, limit", k.get("time_limit"), flush=True)
    out = rf(*a, **k)
    print(stamp(), "find_feasible end", out.status, flush=True)
    return out
feasible.find_feasible = tf
approx_mod.find_feasible = tf
import remc.passes.approx as _ap
_rs = _ap._stage_search
def _ts(*a, **k):
    print(stamp(), "_stage_search share", a[4] if len(a) > 4 else k.get("share"), "left", a[3].left(), flush=True)
    return _rs(*a, **k)
_ap._stage_search = _ts
def prog(ev):
    print(stamp(), "phase", ev.phase, "cost", ev.incumbent, flush=True)
opts = strategies.make_options(strat, time_limit=limit, threads=1)
try:
    s = strategies.solve(strat, dag, B, opts, progress=prog)
    print(stamp(), "result", s.report.status, s.report.cost / dag.cost.sum() - 1)
except Exception as e:
    print(stamp(), "error", type(e).__name__, str(e)[:300])
