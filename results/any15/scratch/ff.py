"""evict_search alone: CPU seconds to the first fit, cost at the end. python ff.py GRAPH RATIO SECONDS"""
import math, sys, time
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.evict import evict_search
g, ratio, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
dag = load_nodelink(g)
budget = math.ceil(ratio * checkpoint_all(dag).peak(dag)); base = dag.cost.sum()
c0, t0 = time.process_time(), time.perf_counter()
seen = []
def on_best(c):
    seen.append((time.process_time() - c0, time.perf_counter() - t0, c))
info = {}
out = evict_search(dag, budget, deadline=time.perf_counter() + secs, info=info, on_best=on_best)
print(g.split('/')[-1][:30], ratio, "first fit cpu %.1fs wall %.1fs +%.1f%%" % (seen[0][0], seen[0][1], 100*(seen[0][2]/base-1)) if seen else "no fit",
      "| end +%.2f%% cpu %.1f" % (100*(seen[-1][2]/base-1), time.process_time()-c0) if seen else "", out and out[3], flush=True)
