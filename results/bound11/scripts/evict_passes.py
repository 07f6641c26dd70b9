import sys, time; sys.path.insert(0,'tools')
import numpy as np
from layered import layered_dag
from remc.ir.schedule import checkpoint_all
from remc.passes import evict
n, seed, ratio = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
dag = layered_dag(n, 10, seed)
budget = int(ratio * checkpoint_all(dag).peak(dag)); base = dag.cost.sum()
orig = evict._pass
def timed(*a, **k):
    t = time.time(); r = orig(*a, **k); print("  pass", f"{time.time()-t:.2f}", "ok" if r[0] is not None else ("fail %d" % (0 if r[1] is None else r[1].sum())), flush=True); return r
evict._pass = timed
for w,c,net in evict.VARIANTS:
    t=time.time(); st = evict.evict_schedule(dag, budget, deadline=time.perf_counter()+150, weight=w, closure=c, net=net)
    print(w,c,net, None if st is None else 100*(st.total_cost()/base-1), f"{time.time()-t:.1f}", flush=True)
