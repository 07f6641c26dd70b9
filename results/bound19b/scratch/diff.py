"""The decoded schedule's recomputations against the covering MILP's drops, in cost units: python diff.py NAME RATIO"""
import pickle, sys
import numpy as np
from remc.passes.coverbound import gap_cover_bound, cover_schedule
from remc.passes.bounds import gap_rows, _gaps
from remc.backends.highs import HighsBackend
from remc.ir.schedule import checkpoint_all
name, ratio = sys.argv[1], float(sys.argv[2])
dag = pickle.load(open(f"/tmp/bound18/{name}.pkl", "rb"))
budget = int(ratio * checkpoint_all(dag).peak(dag)); base = float(dag.cost.sum())
mip = HighsBackend(); got = {}
orig = mip.solve
def cap(model, **kw):
    r = orig(model, **kw); got["r"] = r; return r
mip.solve = cap
cb = gap_cover_bound(dag, budget, mip, time_limit=60, threads=1, start=True)
sched = cover_schedule(dag, budget, cb.start)
r = got["r"]
cov = gap_rows(dag, budget); cols = np.unique(cov.G)
x = np.asarray(r.x)[:len(cols)] > 0.5
print("MILP: bound (scaled)", r.bound, "objective", getattr(r, "objective", None), "status", r.status)
print("bound - base", cb.bound - base, " drops' cost", cov.cost[cols][x].sum(), " schedule - base", sched.cost(dag) - base,
      " R-1 @ cost", float((sched.R.sum(axis=0) - 1) @ dag.cost), "base", base, "dag.total_cost", float(dag.total_cost))
unit, lo, hi = _gaps(dag); keep = ~dag.no_recompute[unit]; unit = unit[keep]
rec = sched.R.sum(axis=0) - 1
print("tiny drops' cost", cov.cost[cols][x][dag.mem[unit[cols][x]] < 1e6].sum())
for g in cols[x]:
    if dag.mem[unit[g]] >= 1e6:
        print(f"  {dag.names[unit[g]]:30s} covering {cov.cost[g]:.6g}")
for i in np.flatnonzero(rec > 0):
    print(f"  rec {dag.names[i]:30s} x{rec[i]} {dag.cost[i]:.6g}")
