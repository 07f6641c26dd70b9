import sys, time; sys.path.insert(0,'tools')
from layered import layered_dag
from remc.ir.schedule import checkpoint_all
from remc.passes import evict
n, seed, ratio, T = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
dag = layered_dag(n, 10, seed); budget = int(ratio * checkpoint_all(dag).peak(dag)); base=dag.cost.sum()
for w,c,net in evict.VARIANTS:
    t=time.time(); st = evict.evict_schedule(dag, budget, deadline=time.perf_counter()+T, weight=w, closure=c, net=net)
    print(w,c,net, None if st is None else round(100*(st.total_cost()/base-1),2), f"{time.time()-t:.1f}", flush=True)
t=time.time(); r = evict.evict_search(dag, budget, deadline=time.perf_counter()+T)
print("search", None if r is None else (round(100*(float(r[0].sum(axis=0)@dag.cost)/base-1),2), r[3]), f"{time.time()-t:.1f}", flush=True)
