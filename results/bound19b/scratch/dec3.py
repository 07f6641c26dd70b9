"""Decode gap_cover_bound's MILP solution as a schedule, dropping only gaps of units >= MINMEM bytes (the tiny BN
statistics kept), each recomputed at s = the stage after its last over stage (MODE=over) or at its read (MODE=read)."""
import pickle, sys
import numpy as np
from remc.passes.coverbound import gap_cover_bound
from remc.passes.bounds import gap_rows, _gaps
from remc.backends.highs import HighsBackend
from remc.ir.schedule import checkpoint_all, check, solve_rs, memory_profile
from remc.passes.milp_model import clean
import os
SKIP_BIG = bool(os.environ.get('SKIP_BIG'))
KEEP_PARENTS = bool(os.environ.get('KEEP_PARENTS'))
name, ratio, mode, minmem = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4])  # argv[5:]: name parts not dropped
dag = pickle.load(open(f"/tmp/bound18/{name}.pkl", "rb"))
budget = int(ratio * checkpoint_all(dag).peak(dag)); base = float(dag.cost.sum())
mip = HighsBackend(); got = {}
orig = mip.solve
def cap(model, **kw):
    r = orig(model, **kw); got["x"] = r.x; return r
mip.solve = cap
cb = gap_cover_bound(dag, budget, mip, time_limit=120, threads=1)
print("bound", f"{100*(cb.bound/base-1):.5f}%")
cov = gap_rows(dag, budget)
cols = np.unique(cov.G)
x = np.asarray(got["x"])[:len(cols)] > 0.5
unit, lo, hi = _gaps(dag)
keep = ~dag.no_recompute[unit]
unit, lo, hi = unit[keep], lo[keep], hi[keep]
S = checkpoint_all(dag).S.copy(); over_ = np.flatnonzero(cov.excess > 0)
for g in cols[x]:
    if dag.mem[unit[g]] < minmem or any(w in dag.names[unit[g]] for w in sys.argv[5:]):
        continue
    ov = over_[(over_ >= lo[g]) & (over_ <= hi[g])]
    s_ = min(int(ov.max()) + 1, hi[g] + 1) if mode == "over" else hi[g] + 1
    S[lo[g]:s_ + 1, unit[g]] = False
    if KEEP_PARENTS:  # the unit's smaller parents (in no chain) past their last read: kept until the recomputation
        i = unit[g]; tree = [i]; k = 0
        while k < len(tree):  # its single-child parents as large (a chain, as bounds._chains' single-child trees)
            for p in dag.preds[tree[k]].tolist():
                if len(dag.succs[p]) == 1 and dag.mem[p] >= dag.mem[i] and p not in tree:
                    tree.append(p)
            k += 1
        need = [p for v in tree for p in dag.preds[v].tolist() if p not in tree and dag.last_use[p] < s_]
        if SKIP_BIG and any(dag.mem[p] >= dag.mem[i] for p in need):
            S[lo[g]:s_ + 1, unit[g]] = True   # its recomputation would need a parent as large, past its last read
            continue
        for p in need:
            if dag.mem[p] < dag.mem[i]:
                S[dag.last_use[p] + 1:s_ + 1, p] = True
R, S2 = solve_rs(dag, S)
R, S2 = clean(dag, R, S2)
print("check", check(dag, R, S2))
P = memory_profile(dag, R, S2)
pk = P.max(axis=1)
cost = float((R.sum(axis=0) * dag.cost).sum())
print(f"{mode} {minmem}: cost +{100*(cost/base-1):.7f}% (bound +{100*(cb.bound/base-1):.7f}%), peak {pk.max()} budget {budget} over by {(pk.max()-budget)/1e6:.1f} MB; stages over: {int((pk>budget).sum())}")
for t in np.flatnonzero(pk > budget)[:30]:
    print("  ", t, dag.names[t], f"{(pk[t]-budget)/1e6:.1f} MB", "at", dag.names[int(P[t].argmax())])
pickle.dump((R, S2), open(f"/tmp/bound19b/dec3_{name}_{ratio}_{mode}_{minmem}.pkl", "wb"))
