"""The covering MILP's solution decoded into a start (passes/coverbound.py cover_start), then the stage search from
it (evict_search), against the stage search from nothing: cost, peak, CPU.   python decode.py GRAPH RATIO"""
import math, sys, time
import numpy as np
import remc.backends.strategies as strategies
from remc.ir import nodelink
from remc.ir.schedule import checkpoint_all, solve_rs, Schedule
from remc.passes.solver_api import Clock
from remc.passes.coverbound import cover_bound
from remc.passes.evict import evict_search
from remc.passes.milp_model import clean
from remc.backends.highs import HighsBackend

g, ratio = sys.argv[1], float(sys.argv[2])
dag = nodelink.load_nodelink(g)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
base = dag.total_cost
pct = lambda c: f"+{100*(c/base-1):.3f}%"
c0 = time.process_time()
hint = strategies._stage_hint(dag, budget, None, Clock(60), share=0.3)
print(f"stage search {pct(hint.cost(dag))} cpu {time.process_time()-c0:.2f}", flush=True)
c0 = time.process_time()
cb = cover_bound(dag, budget, HighsBackend(), time_limit=None, threads=1, depth=1, max_columns=None, kept=True, start=True)
print(f"cover bound {pct(cb.bound)} {cb.status} {cb.note} cpu {time.process_time()-c0:.2f}", flush=True)
c0 = time.process_time()
R, S = solve_rs(dag, cb.start)
sch = Schedule(*clean(dag, R, S))
print(f"decoded: {pct(sch.cost(dag))} peak/budget {sch.peak(dag)/budget:.4f} cpu {time.process_time()-c0:.2f}", flush=True)
c0 = time.process_time()
found = evict_search(dag, budget, deadline=time.perf_counter() + 20, start=cb.start)
if found is None:
    print("evict_search from decoded: none")
else:
    R, S = clean(dag, found[0], found[1])
    s2 = Schedule(R, S)
    print(f"stage search from decoded: {pct(s2.cost(dag))} peak/budget {s2.peak(dag)/budget:.4f} ({found[3]}) cpu {time.process_time()-c0:.2f}", flush=True)
