import sys, time; sys.path.insert(0,'tools')
import numpy as np
from layered import layered_dag
from remc.ir.schedule import checkpoint_all
import remc.passes.stagesearch as ss
from remc.passes import evict
n, seed, ratio, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
dag = layered_dag(n, 10, seed)
budget = int(ratio * checkpoint_all(dag).peak(dag)); base = dag.cost.sum()
orig = ss.improve
for order in sys.argv[5].split(","):
    def imp(st, deadline, order=order):
        t=time.perf_counter(); c0 = st.total_cost()
        orig(st, deadline, order); print("  improve", order, f"{time.perf_counter()-t:.1f}s", 100*(c0/base-1), "->", 100*(st.total_cost()/base-1), flush=True)
    ss.improve = imp
    t=time.time()
    r = evict.evict_search(dag, budget, deadline=time.perf_counter()+secs)
    print(order, 100*(r[0].sum(0)@dag.cost/base-1), r[3], f"{time.time()-t:.1f}", flush=True)
