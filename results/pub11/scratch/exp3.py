"""Scratch: the bound rounds of n100 in detail."""
import sys, time
sys.path.insert(0, __import__("os").path.dirname(__file__))
from exp import case, hint_of, pct
import remc.backends.cpsat as cp
from remc.backends.cpsat import CpSatOptions

orig = cp._bound_round
def wrapped(dag, budget, copies, options, hint, stop_at, *rest):
    t = time.perf_counter()
    res, grow = orig(dag, budget, copies, options, hint, stop_at, *rest)
    print(f"   round: copies sum {sum(copies)} max {max(copies)} -> {time.perf_counter()-t:.1f}s bound {pct(dag,res.bound)} {res.status} grow {len(grow)} sched {res.schedule is not None}", flush=True)
    return res, grow
cp._bound_round = wrapped
if __name__ == "__main__":
    w = int(sys.argv[1]); cp.GROW = int(sys.argv[2])
    for spec in sys.argv[3:]:
        name, r = spec.split(":")
        dag, budget = case(name, float(r))
        h = hint_of(dag, budget)
        best, b, note = cp.cpsat_phase(dag, budget, incumbent=h, gap=1e-4, threads=2, seconds=60)
        print(name, r, pct(dag, best.cost(dag)))
        t1 = time.perf_counter()
        res = cp.cpsat_bound(dag, budget, CpSatOptions(time_limit=60, threads=w, copies=2), hint=best,
                             stop_at=best.cost(dag) - 1e-4 * (best.cost(dag) - dag.total_cost))
        print(f"w={w} GROW={cp.GROW} {name}:{r} {time.perf_counter()-t1:.1f}s bound {pct(dag,res.bound)}", flush=True)
