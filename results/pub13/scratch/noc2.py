"""Variant: no probe and no C=2 model, only quick bound rounds from the stage search's schedule, each schedule
found below the target starting the next with its own target (scratch). python noc2.py GRAPH RATIO"""
import math, sys, time
import remc.backends.cpsat as cpsat
from remc.backends.strategies import _stage_hint
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.solver_api import Clock

dag = load_nodelink(sys.argv[1]); ratio = float(sys.argv[2])
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
cp_model = cpsat.load_cp_model()
inc = _stage_hint(dag, budget, None, Clock(60.0), share=0.05)
base = float(dag.total_cost)
orig_solve = cp_model.CpSolver.Solve
def solve(self, m, *a, **k):
    t = time.perf_counter(); c = time.process_time(); st = orig_solve(self, m, *a, **k)
    print(f"  solve {time.perf_counter()-t:.3f}s cpu {time.process_time()-c:.3f} {self.StatusName(st)}", flush=True)
    return st
cp_model.CpSolver.Solve = solve
t0 = time.perf_counter(); c0 = time.process_time()
best = inc
target = lambda s: s.cost(dag) - 1e-4 * max(s.cost(dag) - base, 0.0)
while True:
    left = 60 - (time.perf_counter() - t0)
    res = cpsat.cpsat_bound(dag, budget, cpsat.CpSatOptions(time_limit=left, threads=1, copies=2, presolve=False),
                            hint=best, stop_at=target(best), quick=True)
    print(f" round set: {res.status} sched={None if res.schedule is None else res.schedule.cost(dag)/base-1:}")
    if res.schedule is not None and res.schedule.cost(dag) < best.cost(dag):
        best = res.schedule
        continue
    break
cost = best.cost(dag)
print(f"noc2 {time.perf_counter()-t0:.2f}s cpu {time.process_time()-c0:.2f} cost {cost/base-1:+.4%} bound {res.bound/base-1:+.4%} {res.status}")
