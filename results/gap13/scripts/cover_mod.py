"""passes/coverbound.py's bound on one graph: python cover_mod.py GRAPH RATIO SECONDS [DEPTH]"""
import math
import sys
import time

from remc.backends.highs import HighsBackend
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.coverbound import build_cover, cover_bound

g, r, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
depth = int(sys.argv[4]) if len(sys.argv) > 4 else 2
if g.endswith(".json"):
    dag = load_nodelink(g)
else:
    sys.path.insert(0, "tools")
    from bench_scale import _graph
    dag = _graph(g, 0, 0)
base = float(dag.cost.sum())
b = math.ceil(r * checkpoint_all(dag).peak(dag))
t = time.time()
cm = build_cover(dag, b, depth=depth, max_columns=None)
print("build", f"{time.time()-t:.1f}s", None if cm is None else (cm.model.num_col, cm.model.num_row, cm.pairs, cm.over))
cb = cover_bound(dag, b, HighsBackend(), time_limit=secs, threads=1, depth=depth, max_columns=None)
print(f"{g.split('/')[-1][:24]} {r} cover +{100*(cb.bound/base-1):.5f}% {cb.status} {cb.seconds:.1f}s cols {cb.columns}")
