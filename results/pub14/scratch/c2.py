"""The C=2 model from the stage search's schedule, every solution timed (scratch). python c2.py GRAPH RATIO threads secs stall"""
import math, sys, time
import remc.backends.cpsat as cpsat
from remc.backends.strategies import _stage_hint
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.solver_api import Clock
dag = load_nodelink(sys.argv[1]); ratio = float(sys.argv[2]); threads = int(sys.argv[3]); secs = float(sys.argv[4])
stall = None if sys.argv[5] == "none" else float(sys.argv[5])
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
t0 = time.perf_counter(); c0 = time.process_time()
inc = _stage_hint(dag, budget, None, Clock(60.0), share=0.05)
print(f"stage {time.perf_counter()-t0:.2f}s cost {inc.cost(dag):g} {inc.cost(dag)/dag.total_cost-1:+.4%}", flush=True)
t1 = time.perf_counter()
def stop(c):
    print(f"  {time.perf_counter()-t1:6.2f}s best {c:g} {c/dag.total_cost-1:+.4%}", flush=True) if c != stop.last else None
    stop.last = c; return False
stop.last = None
s = cpsat.solve_cpsat(dag, budget, cpsat.CpSatOptions(time_limit=secs, threads=threads, copies=2, stall=stall, presolve=False), hint=inc, stop=stop)
print(f"C=2 {time.perf_counter()-t1:.2f}s cpu {time.process_time()-c0:.1f} {s.report['solver']} cost {s.cost(dag):g} {s.cost(dag)/dag.total_cost-1:+.4%}")
