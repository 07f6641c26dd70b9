"""checkmate on a pickled DAG with a timeline: each progress event and each _approx_alone phase's seconds.
python trace.py PKL RATIO LIMIT [gap]"""
import functools
import pickle
import sys
import time

from remc.backends import strategies as st
from remc.backends.strategies import make_options, solve
from remc.ir.schedule import checkpoint_all

pkl, ratio, limit = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
gap = float(sys.argv[4]) if len(sys.argv) > 4 else None
dag = pickle.load(open(pkl, "rb"))
budget = int(ratio * checkpoint_all(dag).peak(dag))
base = float(dag.cost.sum())
t0 = time.perf_counter()


def pct(c):
    return None if c is None else f"+{100 * (c / base - 1):.6f}%"


def wrap(name):
    f = getattr(st, name)

    @functools.wraps(f)
    def g(*a, **k):
        s = time.perf_counter()
        print(f"[{s - t0:7.1f}] > {name}", flush=True)
        r = f(*a, **k)
        print(f"[{time.perf_counter() - t0:7.1f}] < {name} ({time.perf_counter() - s:.1f} s)", flush=True)
        return r
    setattr(st, name, g)


for n in ("_gap_cover_first", "_approx_fn", "_deep_improve", "_refine", "_cover_phase", "_last_bound"):
    wrap(n)


def prog(e):
    print(f"[{time.perf_counter() - t0:7.1f}] {e.phase} inc {pct(e.incumbent)} bound {pct(e.bound)} gap {e.gap}", flush=True)


kw = dict(time_limit=limit, threads=1)
if gap is not None:
    kw["gap"] = gap
s = solve("checkmate", dag, budget, make_options("checkmate", **kw), progress=prog)
r = s.report
print(f"END wall {time.perf_counter() - t0:.1f} report {r.seconds:.1f} status {r.status} cost {pct(r.cost)} "
      f"bound {pct(r.bound)} gap {r.gap} src {r.bound_source}")
for k, v in r.extras.items():
    if k in ("portfolio", "cover_bound", "last_bound", "rule", "window_search", "stage_search"):
        print(" ", k, ":", v)
