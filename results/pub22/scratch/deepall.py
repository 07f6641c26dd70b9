"""The covering MILP at depths 1 and 2 without HiGHS' presolve, in this process (CPU seconds), on graphs at ratios:
deepall.py SECONDS RATIOS(comma) GRAPH..."""
import math
import sys
import time

from remc.backends.highs import HighsBackend, solve_highs
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.coverbound import build_cover, cover_bound


class NoPresolve(HighsBackend):
    def solve(self, model, **kw):
        kw.pop("progress", None)
        return solve_highs(model, isolated=False, presolve=False, **kw)


secs = float(sys.argv[1])
for path in sys.argv[3:]:
    dag = load_nodelink(path)
    base = float(dag.total_cost)
    for ratio in map(float, sys.argv[2].split(",")):
        budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
        out = []
        for d in (1, 2):
            c = time.process_time()
            cb = cover_bound(dag, budget, NoPresolve(), time_limit=secs, threads=1, depth=d, max_columns=None)
            out.append(f"d{d} {cb.status[:8]:8s} +{100 * (cb.bound / base - 1):.4f}% {cb.columns:6d} col {time.process_time() - c:6.2f} cpu")
        print(f"{path.split('/')[-1][:40]:40s} {ratio}  " + "  |  ".join(out), flush=True)
