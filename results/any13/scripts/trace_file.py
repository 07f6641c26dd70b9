"""Trace a strategy's phases on a node-link file: python trace_file.py FILE RATIO STRATEGY LIMIT"""
import sys, time, math
t00 = time.perf_counter()
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.backends.strategies import make_options, solve
f, ratio, st, lim = sys.argv[1], float(sys.argv[2]), sys.argv[3], float(sys.argv[4])
dag = load_nodelink(f)
budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
t0 = time.perf_counter()
print(f"setup {t0 - t00:.2f}s n={dag.n}", flush=True)
def prog(ev):
    print(f"  [{time.perf_counter()-t0:6.2f}] {ev.phase:<14} cost={ev.incumbent} bound={ev.bound}", flush=True)
try:
    s = solve(st, dag, budget, make_options(st, time_limit=lim, threads=1), progress=prog)
    print(f"{st}: {s.report.status} {s.cost(dag)} {time.perf_counter()-t0:.2f}s rep={s.report.seconds}")
    print({k: v for k, v in s.report.extras.items() if isinstance(v, (str, float, int)) })
except Exception as e:
    print(f"{st}: {type(e).__name__}: {str(e)[:300]} after {time.perf_counter()-t0:.2f}s")
