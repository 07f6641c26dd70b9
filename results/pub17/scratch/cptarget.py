"""CP-SAT's C=2 model from the stage search's schedule, told that its objective is at most the covering MILP's bound
(so a search for a schedule at that bound, not an optimization), against the plain model: CPU seconds.
    python cptarget.py GRAPH RATIO"""
import math, sys, time
import remc.backends.cpsat as cpsat
import remc.backends.strategies as strategies
from remc.ir import nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.solver_api import Clock
from remc.passes.coverbound import cover_bound
from remc.backends.highs import HighsBackend

g, ratio = sys.argv[1], float(sys.argv[2])
dag = nodelink.load_nodelink(g)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
base = dag.total_cost
hint = strategies._stage_hint(dag, budget, None, Clock(60), share=0.3)
cb = cover_bound(dag, budget, HighsBackend(), time_limit=None, threads=1, depth=1, max_columns=None).bound
print(f"stage search +{100*(hint.cost(dag)/base-1):.3f}%, cover bound +{100*(cb/base-1):.3f}%", flush=True)
cp_model = cpsat.load_cp_model()
costs, scale = cpsat._int_costs(dag.cost)
fixed = sum(costs)
orig_min = cp_model.CpModel.minimize
for target in (False, True, False, True):
    def mini(self, obj, target=target):
        if target:
            self.add(obj <= math.floor(cb * scale * (1 + 1e-6)) - fixed)
        return orig_min(self, obj)
    cp_model.CpModel.minimize = mini
    c0, t0 = time.process_time(), time.perf_counter()
    s = cpsat.solve_cpsat(dag, budget, cpsat.CpSatOptions(time_limit=60, threads=1, copies=2, stall=0.5, presolve=False),
                          hint=hint, stop=lambda c: math.isfinite(c) and c - cb <= 1e-9 * c)
    print(f"target={target!s:5s} +{100*(s.cost(dag)/base-1):.3f}% {s.report['solver']} cpu {time.process_time()-c0:.2f} s wall {time.perf_counter()-t0:.2f} s", flush=True)
