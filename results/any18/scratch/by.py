"""The stage search's feasibility phase alone (EvictSearch.feasible) to its first schedule: per producer CPU s, rows,
done, result. python by.py GRAPH RATIO WALL_S"""
import math, sys, time, collections
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import evict
acc = collections.defaultdict(float)
def mk(orig):
    def adv(self, *a, **k):
        c = time.process_time()
        try:
            return orig(self, *a, **k)
        finally:
            acc[id(self)] += time.process_time() - c
    return adv
for cls in (evict.EvictRun, evict._RepairRun, evict._LeastMemoryRun):
    cls.advance = mk(cls.advance)
g, ratio = sys.argv[1], float(sys.argv[2])
if g.startswith("L:"):
    sys.path.insert(0, "/work/wt/any18/tools")
    from layered import layered_dag
    dag = layered_dag(int(g.split(":")[1]), 10, int(g.split(":")[2]))
else:
    dag = load_nodelink(g)
B = math.ceil(ratio * checkpoint_all(dag).peak(dag))
s = evict.EvictSearch(dag, B)
c0 = time.process_time()
got = []
def take(r):
    got.append((r.name, r.result is not None, round(time.process_time() - c0, 1)))
    if r.result is not None and s.found is None:
        s.found = r.result
s.feasible(time.perf_counter() + float(sys.argv[3]), take)
name = g.split('/')[-1]
print(f"{name} {ratio} n={dag.n}: {'fit' if s.found is not None else 'none'} cpu {time.process_time()-c0:.1f} s rows {s.rows}"
      + ("" if s.found is None else f" +{100*(s.found.total_cost()/dag.cost.sum()-1):.1f}%"))
for r in [*s.runs, s.rep, s._least]:
    if r is None:
        continue
    print(f"   {r.name:42s} rows {r.rows:7d} cpu {acc[id(r)]:5.1f} done {r.done} fit {r.result is not None}")
print("   ended:", got, flush=True)
