"""List the covering MILP's dropped gaps (unit, its tree, cost, stages) and those approx's schedule drops."""
import pickle, sys
import numpy as np
from remc.passes.coverbound import gap_cover_bound
from remc.passes.bounds import gap_rows, _gaps
from remc.backends.highs import HighsBackend
from remc.ir.schedule import checkpoint_all
name, ratio = sys.argv[1], float(sys.argv[2])
dag = pickle.load(open(f"/tmp/bound18/{name}.pkl", "rb"))
budget = int(ratio * checkpoint_all(dag).peak(dag)); base = float(dag.cost.sum())
mip = HighsBackend(); got = {}
orig = mip.solve
def cap(model, **kw):
    r = orig(model, **kw); got["x"] = r.x; got["obj"] = r.objective if hasattr(r, "objective") else None; return r
mip.solve = cap
cb = gap_cover_bound(dag, budget, mip, time_limit=120, threads=1)
print("bound", f"{100*(cb.bound/base-1):.5f}%", cb.status, "budget", budget)
cov = gap_rows(dag, budget)
cols = np.unique(cov.G)
x = np.asarray(got["x"])[:len(cols)] > 0.5
unit, lo, hi = _gaps(dag)
keep = ~dag.no_recompute[unit]
unit, lo, hi = unit[keep], lo[keep], hi[keep]
tot = 0.0
print("covering drops:")
for g in cols[x]:
    tot += cov.cost[g]
    print(f"  {dag.names[unit[g]]:35s} gap {lo[g]}..{hi[g]} cost {cov.cost[g]:.4g} mem {dag.mem[unit[g]]}")
print(f"  total {tot:.5g} = +{100*tot/base:.5f}%  shared x: {np.asarray(got['x'])[len(cols):]}")
over = np.flatnonzero(cov.excess > 0)
print("over stages", len(over), "first/last", over[:3], over[-3:], "max excess", cov.excess.max())
if len(sys.argv) > 3:
    R, S = pickle.load(open(sys.argv[3], "rb"))
    # schedule -> dropped gaps: gap g dropped where unit not kept across some stage t in lo..hi (S[t+1, i] == 0)
    print("schedule's dropped gaps (with an over stage):")
    tot2 = 0.0
    for g in cols:
        i = unit[g]
        tr = [i]
        kept = S[lo[g] + 1:hi[g] + 2, i]
        if not kept.all():
            tot2 += cov.cost[g]
            print(f"  {dag.names[i]:35s} gap {lo[g]}..{hi[g]} cost {cov.cost[g]:.4g} mem {dag.mem[i]} {'COV' if x[np.searchsorted(cols, g)] else ''}")
    print(f"  total (gap costs, unit itself not kept only) {tot2:.5g} = +{100*tot2/base:.5f}%")
    rec = R.sum(axis=0) - 1
    print(f"  schedule overhead +{100*float(rec @ dag.cost)/base:.5f}%")
