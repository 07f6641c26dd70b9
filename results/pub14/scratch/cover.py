"""The covering MILP alone on a case, timed (scratch). python cover.py GRAPH RATIO [threads] [seconds]"""
import math, sys, time
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.coverbound import cover_bound, build_cover
from remc.backends.highs import HighsBackend

dag = load_nodelink(sys.argv[1]); ratio = float(sys.argv[2])
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
secs = float(sys.argv[4]) if len(sys.argv) > 4 else 30.0
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
t = time.perf_counter(); cm = build_cover(dag, budget, depth=1, max_columns=None)
print(f"build {time.perf_counter()-t:.2f}s cols {None if cm is None else cm.model.num_col}", flush=True)
t = time.perf_counter()
cb = cover_bound(dag, budget, HighsBackend(), time_limit=secs, threads=threads, depth=1, max_columns=None)
print(f"{sys.argv[1].split('/')[-1][:30]} {ratio} cover {cb.status} {cb.bound/dag.total_cost-1:+.4%} cols {cb.columns} {time.perf_counter()-t:.1f}s")
