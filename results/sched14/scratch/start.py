"""Save the first fitting eviction schedule (each VARIANT to its end) of GRAPH at RATIO: start_<tag>.npz"""
import math, sys, time
import numpy as np
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.evict import EvictRun, VARIANTS
g, ratio, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
dag = load_nodelink(g)
budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
base = float(dag.cost.sum())
res = {}
for w, c, net in VARIANTS:
    t = time.perf_counter()
    r = EvictRun(dag, budget, weight=w, closure=c, net=net)
    r.advance(time.perf_counter() + 60)
    ok = r.result is not None
    print(w, c, net, f"{time.perf_counter()-t:.1f}s", ok and f"+{100*(r.result.total_cost()/base-1):.2f}%", flush=True)
    if ok:
        res[f"{w}_{c}_{net}"] = r.result.S
np.savez_compressed(out, **res)
