"""Decode gap_cover_bound's MILP solution into a schedule (each dropped gap: not kept lo..b-1; the least R), check it."""
import pickle, sys, time
import numpy as np
from remc.passes.coverbound import gap_cover_bound
from remc.passes.bounds import gap_rows, _gaps
from remc.backends.highs import HighsBackend
from remc.ir.schedule import checkpoint_all, check, solve_rs, memory_profile
from remc.passes.milp_model import clean
dag = pickle.load(open(f"/tmp/bound18/{sys.argv[1]}.pkl", "rb")); ratio = float(sys.argv[2])
budget = int(ratio * checkpoint_all(dag).peak(dag)); base = float(dag.cost.sum())
mip = HighsBackend(); got = {}
orig = mip.solve
def cap(model, **kw):
    r = orig(model, **kw); got["x"] = r.x; return r
mip.solve = cap
cb = gap_cover_bound(dag, budget, mip, time_limit=60, threads=1)
print("bound", f"{100*(cb.bound/base-1):.5f}%")
cov = gap_rows(dag, budget)
cols = np.unique(cov.G)
x = np.asarray(got["x"])[:len(cols)] > 0.5
unit, lo, hi = _gaps(dag)
keep = ~dag.no_recompute[unit]
unit, lo, hi = unit[keep], lo[keep], hi[keep]
S = checkpoint_all(dag).S.copy(); over_ = np.flatnonzero(cov.excess > 0)
for g in cols[x]:
    ov = over_[(over_ >= lo[g]) & (over_ <= hi[g])]; s_ = min(int(ov.max()) + 1, hi[g] + 1); S[lo[g]:s_ + 1, unit[g]] = False
R, S2 = solve_rs(dag, S)
R, S2 = clean(dag, R, S2)
print("check", check(dag, R, S2))
P = memory_profile(dag, R, S2)
pk = P.max(axis=1)
cost = float((R.sum(axis=0) * dag.cost).sum())
print(f"cost +{100*(cost/base-1):.5f}%, peak {pk.max()} budget {budget} over by {(pk.max()-budget)/402653184:.3f} U; stages over: {int((pk>budget).sum())}")
for t in np.flatnonzero(pk > budget)[:30]:
    print("  ", t, dag.names[t], f"{(pk[t]-budget)/402653184:.3f} U", "at", dag.names[int(P[t].argmax())])
pickle.dump((R, S2), open(f"/tmp/bound19b/dec2_{sys.argv[1]}_{ratio}.pkl", "wb"))
