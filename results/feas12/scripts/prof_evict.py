"""Profile one eviction setting on a random layered graph: python prof_evict.py N SEED RATIO W C NET SECONDS"""
import cProfile, pstats, sys, time
sys.path.insert(0, 'tools')
from layered import layered_dag
from remc.ir.schedule import checkpoint_all
from remc.passes import evict
n, seed, ratio, w, c, net, T = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), sys.argv[6] == "1", float(sys.argv[7])
dag = layered_dag(n, 10, seed); budget = int(ratio * checkpoint_all(dag).peak(dag)); base = dag.cost.sum()
print("edges", len(dag.edges), "budget", budget)
pr = cProfile.Profile(); t = time.perf_counter(); pr.enable()
st = evict.evict_schedule(dag, budget, deadline=time.perf_counter() + T, weight=w, closure=c, net=net)
pr.disable()
print(w, c, net, None if st is None else round(100 * (st.total_cost() / base - 1), 2), f"{time.perf_counter()-t:.1f} s")
pstats.Stats(pr).sort_stats("tottime").print_stats(18)
