"""The covering MILP's bound with and without COVER_MERGE (1 thread, this process): bound, columns, status, CPU.
    python mergecmp.py GRAPH RATIO [kept 0/1]"""
import math, sys, time
from remc.ir import nodelink
from remc.ir.schedule import checkpoint_all
from remc.backends.highs import HighsBackend
from remc.passes import coverbound as cb

g, ratio = sys.argv[1], float(sys.argv[2])
kept = len(sys.argv) > 3 and sys.argv[3] == "1"
order = sys.argv[4].split(",") if len(sys.argv) > 4 else ["1", "0"]
dag = nodelink.load_nodelink(g)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
base = float(dag.cost.sum())
for merge in order:
    cb.COVER_MERGE = merge == "1"
    c0 = time.process_time()
    r = cb.cover_bound(dag, budget, HighsBackend(), time_limit=None, threads=1, depth=1, max_columns=None, kept=kept)
    print(f"{g.rsplit('/', 1)[-1][:30]:30s} {ratio} merge={cb.COVER_MERGE!s:5s} kept={kept!s:5s} bound +{100 * (r.bound - base) / base:.4f}% "
          f"{r.status} cols {r.columns} wall {r.seconds:.3f} s cpu {time.process_time() - c0:.3f} s {r.note}", flush=True)
