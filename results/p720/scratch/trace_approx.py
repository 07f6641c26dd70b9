"""approx on a pickled DAG with a timeline of its phases. python trace_approx.py PKL BUDGET_OR_RATIO LIMIT"""
import functools
import pickle
import sys
import time

from remc.backends import strategies as st
from remc.backends.strategies import make_options, solve
from remc.ir.schedule import checkpoint_all
from remc.passes import approx

dag = pickle.load(open(sys.argv[1], "rb"))
b = float(sys.argv[2])
peak = checkpoint_all(dag).peak(dag)
budget = int(b * peak) if b < 10 else int(b)
base = float(dag.cost.sum())
print(f"n {dag.n} checkpoint-all peak {peak} budget {budget} ({budget / peak:.3f})")
t0 = time.perf_counter()


def wrap(mod, name):
    f = getattr(mod, name)

    @functools.wraps(f)
    def g(*a, **k):
        s = time.perf_counter()
        print(f"[{s - t0:6.1f}] > {name}", flush=True)
        r = f(*a, **k)
        extra = ""
        if name == "_stage_search" and r is not None:
            extra = f" +{100 * (r.cost / base - 1):.4f}% {r.rule}"
        if name == "_incumbent" and r is not None:
            extra = f" {r.strategy} +{100 * (r.cost(dag) / base - 1):.4f}%"
        print(f"[{time.perf_counter() - t0:6.1f}] < {name} ({time.perf_counter() - s:.1f} s){extra}", flush=True)
        return r
    setattr(mod, name, g)


for mod, n in [(st, "_incumbent"), (approx, "gap_bound"), (approx, "_stage_search"), (approx, "window_search")]:
    wrap(mod, n)
s = solve("approx", dag, budget, make_options("approx", time_limit=float(sys.argv[3]), threads=1))
r = s.report
print(f"END {time.perf_counter() - t0:.1f} s status {r.status} +{100 * (r.cost / base - 1):.4f}% rule {r.extras.get('rule')}")
