"""The stage search's schedule against the retention-gap (Lagrangian) bound, timed (scratch). python gapb.py GRAPH RATIO"""
import math, sys, time
from remc.backends.strategies import _stage_hint
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.solver_api import Clock
from remc.passes.bounds import gap_bound
dag = load_nodelink(sys.argv[1]); ratio = float(sys.argv[2])
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
t0 = time.process_time()
inc = _stage_hint(dag, budget, None, Clock(60.0), share=0.05)
t1 = time.process_time()
c = inc.cost(dag); base = dag.total_cost
for it in (50, 200, 2000):
    t2 = time.process_time()
    b = gap_bound(dag, budget, upper=c, iterations=it).bound
    print(f"{sys.argv[1].split('/')[-1][:10]} {ratio} stage cpu {t1-t0:.2f} cost {c/base-1:+.4%} | it {it}: bound {b/base-1:+.4%} gap {(c-b)/max(c-base,1e-9):.2e} cpu {time.process_time()-t2:.2f}", flush=True)
