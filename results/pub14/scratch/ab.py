"""checkmate in-process with module constants set (scratch). python ab.py GRAPH RATIO NAME=VALUE..."""
import math, sys, time
import remc.backends.strategies as st
import remc.backends.cpsat as cps
from remc.backends.strategies import make_options, solve
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
dag = load_nodelink(sys.argv[1]); ratio = float(sys.argv[2])
for kv in sys.argv[3:]:
    if kv == "WALLSTALL":
        cps._search_clock = lambda w: time.perf_counter
        continue
    k, v = kv.split("=", 1); mod = st if hasattr(st, k) else cps; setattr(mod, k, eval(v))
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
t0 = time.perf_counter(); c0 = time.process_time()
s = solve("checkmate", dag, budget, make_options("checkmate", time_limit=60.0))
r = s.report
print(f"{sys.argv[1].split('/')[-1][:12]} {ratio} {' '.join(sys.argv[3:])}: {r.status} {s.cost(dag)/dag.total_cost-1:+.4%} gap {r.gap} "
      f"{time.perf_counter()-t0:.2f}s cpu {time.process_time()-c0:.2f} | {r.extras.get('cp_sat')} | {r.extras.get('cover_bound')}", flush=True)
