"""checkmate's CP-SAT phase from the stage search's schedule, each model build and each CP-SAT solve timed (wall and
process CPU), scratch. python cpphase.py GRAPH RATIO [threads]"""
import math, sys, time
import remc.backends.cpsat as cpsat
from remc.backends.strategies import _stage_hint
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.solver_api import Clock

dag = load_nodelink(sys.argv[1]); ratio = float(sys.argv[2]); threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
cp_model = cpsat.load_cp_model()
t0 = time.perf_counter(); c0 = time.process_time()
inc = _stage_hint(dag, budget, None, Clock(60.0), share=0.05)
print(f"stage {time.perf_counter()-t0:.2f}s cpu {time.process_time()-c0:.2f} cost {inc.cost(dag)/dag.total_cost-1:+.4%}")
orig_build, orig_solve = cpsat._build, cp_model.CpSolver.Solve
def build(*a, **k):
    t = time.perf_counter(); c = time.process_time(); out = orig_build(*a, **k)
    print(f"  build {time.perf_counter()-t:.3f}s cpu {time.process_time()-c:.3f} vars {len(out[0].Proto().variables)}", flush=True)
    return out
def solve(self, m, *a, **k):
    t = time.perf_counter(); c = time.process_time(); st = orig_solve(self, m, *a, **k)
    print(f"  solve {time.perf_counter()-t:.3f}s cpu {time.process_time()-c:.3f} {self.StatusName(st)} first={self.parameters.stop_after_first_solution}", flush=True)
    return st
cpsat._build = build; cp_model.CpSolver.Solve = solve
t0 = time.perf_counter(); c0 = time.process_time()
best, bound, note = cpsat.cpsat_phase(dag, budget, incumbent=inc, gap=1e-4, threads=threads, seconds=60.0)
cost = best.cost(dag)
print(f"phase {time.perf_counter()-t0:.2f}s cpu {time.process_time()-c0:.2f} cost {cost/dag.total_cost-1:+.4%} gap {(cost-bound)/max(cost-dag.total_cost,1e-9):.2e} | {note}")
