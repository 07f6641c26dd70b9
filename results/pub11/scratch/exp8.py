"""Scratch: when the C=2 model finds its last solution vs when it ends."""
import sys, time
sys.path.insert(0, __import__("os").path.dirname(__file__))
from exp import case, hint_of, pct
import remc.backends.cpsat as cp
from remc.backends.cpsat import CpSatOptions
orig = cp._solve_watched
def watched(cp_model, solver, m, stall):
    t0 = time.perf_counter(); times = []
    class CB(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self):
            times.append((round(time.perf_counter() - t0, 2), self.ObjectiveValue()))
    st = solver.Solve(m, CB())
    print(f"   solve {time.perf_counter()-t0:.2f}s status {solver.StatusName(st)} sols {[t for t, _ in times]}", flush=True)
    return st
cp._solve_watched = watched
for spec in sys.argv[1:]:
    name, r = spec.split(":")
    dag, budget = case(name, float(r))
    h = hint_of(dag, budget)
    t1 = time.perf_counter()
    best, b, note = cp.cpsat_phase(dag, budget, incumbent=h, gap=1e-4, threads=2, seconds=60)
    print(f"{name}:{r} {time.perf_counter()-t1:.1f}s {pct(dag,h.cost(dag))} -> {pct(dag,best.cost(dag))}", flush=True)
