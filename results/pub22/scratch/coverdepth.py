"""The covering MILP's bound at depths and with kept-parent rows: coverdepth.py GRAPH RATIO SECONDS VARIANT... (VARIANT d<depth>[k])"""
import math
import sys
import time

from remc.backends.strategies import _highs
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.coverbound import cover_bound

path, ratio, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
dag = load_nodelink(path)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
base = float(dag.total_cost)
for var in sys.argv[4:]:
    depth, kept = int(var[1]), var.endswith("k")
    c, t = time.process_time(), time.perf_counter()
    cb = cover_bound(dag, budget, _highs(), time_limit=secs, threads=1, depth=depth, kept=kept, max_columns=None)
    print(f"{var}: {cb.status} bound {cb.bound:.4f} (+{100 * (cb.bound / base - 1):.4f}%) columns {cb.columns} "
          f"{time.perf_counter() - t:.1f} s wall {time.process_time() - c:.1f} cpu {cb.note}", flush=True)
