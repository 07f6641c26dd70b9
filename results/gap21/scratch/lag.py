"""The Lagrangian relaxations one by one: python lag.py GRAPH RATIO SECS ITERS [nestedcap]"""
import math
import sys
import time

from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import bounds as B

g, ratio, secs, iters = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
if len(sys.argv) > 5:
    B.MAX_NESTED_CELLS = int(sys.argv[5])
dag = load_nodelink(g)
budget = max(1, math.ceil(ratio * checkpoint_all(dag).peak(dag)))
base = float(dag.cost.sum())
over = (B.gap_excess(dag, budget)[3] > 0).sum()
print(g.split('/')[-1], ratio, "over stages", over, "cells", dag.n * over, flush=True)
for kw in (dict(strong=True, nested=False), dict(strong=False, nested=True)):
    t = time.perf_counter()
    gb = B.gap_bound(dag, budget, iterations=iters, deadline=time.perf_counter() + secs, **kw)
    print(kw, gb.kind, f"+{100 * (gb.bound / base - 1):.4f}%", gb.iterations, f"{time.perf_counter() - t:.1f}s", flush=True)
