"""The covering MILP with and without the kept-parent rows (COVER_KEPT) on Moccasin's graphs: bound (over computing
each unit once), columns, HiGHS status and CPU seconds (1 thread, this process).
    python coverkept.py GRAPH RATIO [time limit]"""
import math, sys, time
from remc.ir import nodelink
from remc.ir.schedule import checkpoint_all
from remc.backends.highs import HighsBackend
from remc.passes import coverbound as cb

g, ratio = sys.argv[1], float(sys.argv[2])
lim = float(sys.argv[3]) if len(sys.argv) > 3 else 60.0
dag = nodelink.load_nodelink(g)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
base = float(dag.cost.sum())
for kept in (False, True):
    cb.COVER_KEPT = kept
    c0 = time.process_time()
    r = cb.cover_bound(dag, budget, HighsBackend(), time_limit=None if lim <= 0 else lim, threads=1, depth=1,
                       max_columns=None)
    c1 = time.process_time() - c0
    print(f"{g.rsplit('/', 1)[-1][:30]:30s} {ratio} kept={kept!s:5s} bound +{100 * (r.bound - base) / base:.4f}% "
          f"{r.status} cols {r.columns} wall {r.seconds:.3f} s cpu {c1:.3f} s", flush=True)
