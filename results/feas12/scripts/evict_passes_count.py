"""Passes (retries) each eviction setting runs, and its time, on a random layered graph:
python evict_passes_count.py N SEED RATIO"""
import sys, time; sys.path.insert(0, 'tools')
from layered import layered_dag
from remc.ir.schedule import checkpoint_all
from remc.passes import evict
n, seed, ratio = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
dag = layered_dag(n, 10, seed); budget = int(ratio * checkpoint_all(dag).peak(dag)); base = dag.cost.sum()
real = evict._pass
starts = []
def counting(*a, **k):
    starts.append(time.perf_counter())
    return (yield from real(*a, **k))
evict._pass = counting
for w, c, net in evict.VARIANTS:
    starts.clear(); t = time.perf_counter()
    st = evict.evict_schedule(dag, budget, weight=w, closure=c, net=net)
    print(w, c, net, None if st is None else round(100 * (st.total_cost() / base - 1), 2), f"{time.perf_counter()-t:.1f} s",
          "passes", len(starts), "pass starts at s", [round(s - t, 1) for s in starts], flush=True)
t = time.perf_counter(); r = evict._RepairRun(dag, budget); r.advance(None)
print("repair", None if r.result is None else round(100 * (r.result.total_cost() / base - 1), 2), f"{time.perf_counter()-t:.1f} s")
t = time.perf_counter(); r = evict._LeastMemoryRun(dag, budget); r.advance(time.perf_counter() + 100)
print("least-memory", None if r.result is None else round(100 * (r.result.total_cost() / base - 1), 2), f"{time.perf_counter()-t:.1f} s")
