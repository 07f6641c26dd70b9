"""Each eviction setting (and the repair, the least-memory starts) of evict_search alone on a graph: rows and CPU
seconds until it fits or gives up. python settings.py GRAPH RATIO"""
import math, sys, time
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import evict
g, ratio = sys.argv[1], float(sys.argv[2])
dag = load_nodelink(g)
budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
print(g.split('/')[-1], ratio, "n", dag.n)
for w, c, net in evict.VARIANTS:
    r = evict.EvictRun(dag, budget, weight=w, closure=c, net=net)
    c0 = time.process_time()
    r.advance(time.perf_counter() + 60)
    print(f"  ({w},{c},{net}): fit={r.result is not None} done={r.done} rows={r.rows} ({r.rows/dag.n:.1f}/unit) cpu {time.process_time()-c0:.2f}s", flush=True)
for cls in (evict._RepairRun, evict._LeastMemoryRun):
    r = cls(dag, budget); c0 = time.process_time()
    r.advance(time.perf_counter() + float(sys.argv[3]) if len(sys.argv) > 3 else time.perf_counter() + 10)
    print(f"  {cls.__name__}: fit={r.result is not None} done={r.done} rows={r.rows} ({r.rows/dag.n:.1f}/unit) cpu {time.process_time()-c0:.2f}s", flush=True)
