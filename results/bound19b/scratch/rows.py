"""The decoded schedule's 0/1 point in the covering (a gap dropped where its unit is not resident at the start of a
stage t+1, t in its range): rows it violates, and the schedule's memory there: python rows.py NAME RATIO"""
import pickle, sys
import numpy as np
from remc.passes.coverbound import gap_cover_bound, cover_schedule
from remc.passes.bounds import gap_rows, _gaps
from remc.backends.highs import HighsBackend
from remc.ir.schedule import checkpoint_all, memory_profile
name, ratio = sys.argv[1], float(sys.argv[2])
dag = pickle.load(open(f"/tmp/bound18/{name}.pkl", "rb"))
budget = int(ratio * checkpoint_all(dag).peak(dag))
cb = gap_cover_bound(dag, budget, HighsBackend(), time_limit=60, threads=1, start=True)
sched = cover_schedule(dag, budget, cb.start)
S = sched.S
cov = gap_rows(dag, budget)
unit, lo, hi = _gaps(dag); keep = ~dag.no_recompute[unit]; unit, lo, hi = unit[keep], lo[keep], hi[keep]
y = np.array([not S[lo[g] + 1:hi[g] + 2, unit[g]].all() for g in range(len(unit))])
lhs = np.zeros(dag.n)
np.add.at(lhs, cov.T, cov.a * y[cov.G])
over = np.flatnonzero(cov.excess > 0)
bad = over[lhs[over] < cov.excess[over] - 1e-9]
P = memory_profile(dag, sched.R, S)
print(len(bad), "rows violated of", len(over))
for t in bad[:15]:
    print(f"  {t} {dag.names[t]} excess {cov.excess[t]:.0f} freed {lhs[t]:.0f} short {cov.excess[t]-lhs[t]:.0f}; schedule peak at t {P[t].max()} budget {budget} margin {budget-P[t].max()}")
base = float(dag.cost.sum())
print(f"point's covering cost {cov.cost[y].sum():.0f}; schedule's recomputations {sched.cost(dag) - base:.0f}; bound - base {cb.bound - base:.0f}")
for g in np.flatnonzero(y):
    if dag.mem[unit[g]] < 1e6 and cov.cost[g] > 1:
        print(f"  small drop {dag.names[unit[g]]} cost {cov.cost[g]:.0f} rec {int(sched.R[:, unit[g]].sum()) - 1}")
