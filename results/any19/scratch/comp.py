"""comp.py PKL COMPONENT WALL: one component alone on a captured solve's dag and budget, to its first schedule.
COMPONENT: search (EvictSearch.feasible, per producer), milp (find_feasible, HiGHS alone), cpsat (cpsat_first),
lp (approx's LP at the budget and its rounding), baselines."""
import collections
import math
import os
import pickle
import sys
import threading
import time

from remc.backends.strategies import _highs
from remc.passes import evict

d = pickle.load(open(sys.argv[1], "rb"))
dag, budget = d["dag"], d["budget"]
comp, wall = sys.argv[2], float(sys.argv[3])
c0, t0 = time.process_time(), time.perf_counter()
base = float(dag.cost.sum())
print(f"{os.path.basename(sys.argv[1])} n={dag.n} budget={budget} {comp} wall {wall} load {os.getloadavg()[0]:.1f}", flush=True)


def done(what, sched=None, cost=None):
    if sched is not None:
        cost = float(sched.R.sum(axis=0) @ dag.cost) if cost is None else cost
        peak = int(sched.peak(dag)) if hasattr(sched, "peak") else None
        print(f"  {what}: +{100 * (cost / base - 1):.1f}% peak {peak} wall {time.perf_counter() - t0:.1f} cpu {time.process_time() - c0:.1f}")
    else:
        print(f"  {what}: none, wall {time.perf_counter() - t0:.1f} cpu {time.process_time() - c0:.1f}")


if comp == "search":
    acc = collections.defaultdict(float)

    def mk(orig):
        def adv(self, *a, **k):
            c = time.process_time()
            try:
                return orig(self, *a, **k)
            finally:
                acc[id(self)] += time.process_time() - c
        return adv
    for cls in (evict.EvictRun, evict._RepairRun, evict._LeastMemoryRun):
        cls.advance = mk(cls.advance)
    s = evict.EvictSearch(dag, budget)
    got = []

    def take(r):
        got.append((r.name, r.result is not None, round(time.process_time() - c0, 1)))
        if r.result is not None and s.found is None:
            s.found = r.result
    s.feasible(time.perf_counter() + wall, take)
    print(f"  search: {'fit' if s.found is not None else 'none'} cpu {time.process_time() - c0:.1f} wall {time.perf_counter() - t0:.1f} rows {s.rows}"
          + ("" if s.found is None else f" +{100 * (s.found.total_cost() / base - 1):.1f}%"))
    for r in [*s.runs, s.rep, s._least]:
        if r is not None:
            print(f"   {r.name:42s} rows {r.rows:7d} cpu {acc[id(r)]:5.1f} done {r.done} fit {r.result is not None}")
    print("   ended:", got, flush=True)
elif comp == "milp":
    from remc.passes.feasible import find_feasible
    f = find_feasible(dag, budget, _highs(), time_limit=wall)
    done(f"milp {f.status}", f.schedule)
elif comp == "race":
    from remc.backends.strategies import _race
    from remc.passes.feasible import find_feasible
    f = find_feasible(dag, budget, _highs(), time_limit=wall, race=_race())
    done(f"race {f.status} by {f.by}", f.schedule)
elif comp == "cpsat":
    from remc.backends.cpsat import cpsat_first
    s = cpsat_first(dag, budget, wall, threading.Event())
    done("cpsat_first", s)
elif comp == "lp":
    from remc.passes import approx
    from remc.passes.options import ApproxOptions
    from remc.passes.milp_model import model_columns
    print("  columns", model_columns(dag))
    o = ApproxOptions()
    relax = approx._Relaxation(dag, budget, o.free_form, _highs(), None, time.perf_counter() + wall)
    ex = relax.at(budget)
    print(f"  lp at budget: {None if ex is None else ex.objective} wall {time.perf_counter() - t0:.1f} cpu {time.process_time() - c0:.1f}")
    best, over, tried, fb = approx._round(dag, budget, o, relax)
    done("rounding", best, None if best is None else best.cost)
    print("  over:", None if over is None else over.cost, [(t['eps'], t['feasible']) for t in tried])
elif comp == "baselines":
    from remc.passes.strategies import best_baseline
    b = best_baseline(dag, budget, deadline=None, hard=time.perf_counter() + wall)
    done("baselines", b)
