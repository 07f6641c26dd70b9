import sys, time, resource, tracemalloc; sys.path.insert(0,'tools')
import numpy as np
from bench_scale import _graph
from remc.ir.schedule import checkpoint_all
from remc.passes import evict, window
from remc.passes.milp_model import clean
def rss(): return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss//1024
print("start", rss(), flush=True)
dag = _graph("gpt2", 0, 0); print("graph", rss(), flush=True)
budget = int(0.8 * checkpoint_all(dag).peak(dag))
R,S,_,how = evict.evict_search(dag, budget, deadline=time.perf_counter()+20)
R,S = clean(dag,R,S); print("stage search", rss(), flush=True)
a = window.windows_by_recompute(dag, R, 12)[0]
tracemalloc.start()
t=time.time(); m = window.window_model(dag, budget, R, S, a, a+12); x = window.window_start(m, R, S, a, a+12)
cur, peak = tracemalloc.get_traced_memory(); print("window model", f"{time.time()-t:.1f}s", "traced peak MiB", peak>>20, "rss", rss(), flush=True)
