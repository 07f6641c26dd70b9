import sys, time; sys.path.insert(0,'tools')
import numpy as np
from layered import layered_dag
from remc.ir.schedule import checkpoint_all
from remc.passes import evict, stagesearch as ss
n, seed, ratio = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
dag = layered_dag(n, 10, seed)
budget = int(ratio * checkpoint_all(dag).peak(dag)); base = dag.cost.sum()
for w,c,net in evict.VARIANTS:
    t=time.time(); st = evict.evict_schedule(dag, budget, deadline=None, weight=w, closure=c, net=net)
    print(w,c,net, None if st is None else 100*(st.total_cost()/base-1), f"{time.time()-t:.1f}", flush=True)
t=time.time(); rep = ss.StageState(dag, budget, checkpoint_all(dag).S); ok = ss.repair(rep, time.perf_counter()+60)
print("repair", ok, 100*(rep.total_cost()/base-1), f"{time.time()-t:.1f}")
