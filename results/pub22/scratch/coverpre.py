"""The covering MILP's bound with HiGHS' presolve on (the child process, as checkmate's cover phases run it) and off
(in this process): coverpre.py GRAPH|r50piece RATIO SECONDS DEPTH..."""
import math
import pickle
import sys
import time

from remc.backends.highs import HighsBackend, solve_highs
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.coverbound import cover_bound


class NoPresolve(HighsBackend):
    def solve(self, model, **kw):
        kw.pop("progress", None)
        return solve_highs(model, isolated=False, presolve=False, **kw)


path, ratio, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
dag = pickle.load(open("/tmp/pub22/r50piece_dag.pkl", "rb")) if path == "r50piece" else load_nodelink(path)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
base = float(dag.total_cost)
for d in map(int, sys.argv[4:]):
    for name, mip in (("presolve", HighsBackend()), ("no presolve", NoPresolve())):
        c, t = time.process_time(), time.perf_counter()
        cb = cover_bound(dag, budget, mip, time_limit=secs, threads=1, depth=d, max_columns=None)
        print(f"depth {d} {name:12s} {cb.status} bound {cb.bound:.4f} (+{100 * (cb.bound / base - 1):.6f}%) columns "
              f"{cb.columns} {time.perf_counter() - t:.1f} s wall {time.process_time() - c:.1f} cpu here", flush=True)
