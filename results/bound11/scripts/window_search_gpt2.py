import sys, time, resource; sys.path.insert(0,'tools')
import numpy as np
from bench_scale import _graph
from remc.ir.schedule import checkpoint_all
from remc.passes import evict, window
from remc.passes.milp_model import clean
from remc.backends.highs import HighsBackend
kind = sys.argv[1]; n = int(sys.argv[2]); seed=int(sys.argv[3]); ratio=float(sys.argv[4])
t=time.time(); dag = _graph(kind, n, seed); print("graph", dag.n, f"{time.time()-t:.1f}", flush=True)
budget = int(ratio * checkpoint_all(dag).peak(dag)); base=dag.cost.sum()
t=time.time(); R,S,_,how = evict.evict_search(dag, budget, deadline=time.perf_counter()+float(sys.argv[5]))
R,S = clean(dag,R,S); c0=float(R.sum(0)@dag.cost)
print("stage search", how, 100*(c0/base-1), f"{time.time()-t:.1f}", flush=True)
mip = HighsBackend()
orig_solve = mip.solve
def solve(model, **kw):
    t=time.time(); r = orig_solve(model, **kw)
    print(f"  window cols {model.num_col} rows {model.num_row} {time.time()-t:.1f}s status {getattr(r,'status',None)} rss_self {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss//1024} rss_child {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss//1024}", flush=True)
    return r
mip.solve = solve
t=time.time(); ws = window.window_search(dag, budget, R, S, mip, deadline=time.perf_counter()+60, threads=1)
print("windows", ws.windows, ws.improved, 100*(ws.cost/base-1), f"{time.time()-t:.1f}", flush=True)
