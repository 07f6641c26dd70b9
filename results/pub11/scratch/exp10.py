"""Scratch: a first cutoff round from the stage hint (stops at its first relaxation below the hint) before the C=2 model."""
import sys, time
sys.path.insert(0, __import__("os").path.dirname(__file__))
from exp import case, hint_of, pct
import remc.backends.cpsat as cp
from remc.backends.cpsat import CpSatOptions
orig = cp._solver
def first(cp_model, options, t0, presolve):
    s = orig(cp_model, options, t0, presolve); s.parameters.stop_after_first_solution = True; return s
for spec in sys.argv[1:]:
    name, r = spec.split(":")
    dag, budget = case(name, float(r))
    h = hint_of(dag, budget)
    t1 = time.perf_counter()
    cp._solver = first
    c = h.cost(dag); target = c - 1e-4 * (c - dag.total_cost)
    n = dag.n
    copies = [1 if dag.no_recompute[v] else max(1, min(2, n - v)) for v in range(n)]
    res, grow = cp._bound_round(dag, budget, copies, CpSatOptions(time_limit=60, threads=2, copies=2), h, target)
    t2 = time.perf_counter()
    cp._solver = orig
    print(f"{name}:{r} hint {pct(dag,c)} probe {t2-t1:.1f}s {res.status} bound {pct(dag,res.bound)} sched {None if res.schedule is None else pct(dag,res.schedule.cost(dag))}", flush=True)
