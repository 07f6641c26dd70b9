"""Trace one solve: progress events with times, and a cProfile summary.
    python trace.py GRAPH RATIO STRATEGY SECONDS [--prof]"""
import cProfile, math, pstats, sys, time
from remc.backends.strategies import make_options, solve
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all

g, ratio, strat, secs = sys.argv[1], float(sys.argv[2]), sys.argv[3], float(sys.argv[4])
dag = load_nodelink(g)
budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
base = float(dag.cost.sum())
t0 = time.perf_counter()
def prog(ev):
    inc = None if ev.incumbent is None else f"{100*(ev.incumbent/base-1):.3f}%"
    print(f"{time.perf_counter()-t0:7.1f} {ev.phase:20s} inc={inc}", flush=True)
pr = cProfile.Profile() if "--prof" in sys.argv else None
if pr: pr.enable()
s = solve(strat, dag, budget, make_options(strat, time_limit=secs, threads=1), progress=prog)
if pr: pr.disable()
r = s.report
print(f"done {time.perf_counter()-t0:.1f}s {r.status} +{100*(r.cost/base-1):.3f}% extras={ {k: v for k, v in r.extras.items() if k not in ('eps_tried',)} }")
if pr:
    pstats.Stats(pr).sort_stats("cumulative").print_stats(45)
