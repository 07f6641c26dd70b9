"""Prototype: the retention-gap covering as an integer program (prefix drops), solved by HiGHS; its MIP dual
bound against the Lagrangian bound.   python cover_proto.py GRAPH RATIO [SECONDS]"""
import math
import sys
import time

import highspy
import numpy as np
import scipy.sparse as sp

from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.bounds import _gaps, gap_bound

g, r = sys.argv[1], float(sys.argv[2])
secs = float(sys.argv[3]) if len(sys.argv) > 3 else 60
dag = load_nodelink(g)
base = float(dag.cost.sum())
budget = math.ceil(r * checkpoint_all(dag).peak(dag))
n = dag.n
fixed = dag.constant + dag.kept_before + dag.kept_first + dag.workspace + dag.mem
fixed = fixed + np.bincount(dag.edges[:, 1], weights=dag.mem[dag.edges[:, 0]].astype(float), minlength=n).round().astype(np.int64)
unit, lo, hi = _gaps(dag)
load = np.zeros(n + 1, dtype=np.int64)
np.add.at(load, lo, dag.mem[unit]); np.add.at(load, hi + 1, -dag.mem[unit])
excess = (fixed + np.cumsum(load)[:n] - budget).astype(float)
over = np.flatnonzero(excess > 0)
free = ~dag.no_recompute[unit]
unit, lo, hi = unit[free], lo[free], hi[free]
first = np.searchsorted(over, lo); last = np.searchsorted(over, hi, side="right")
cnt = last - first
G = np.repeat(np.arange(len(unit)), cnt)
T = over[np.repeat(first - np.cumsum(cnt) + cnt, cnt) + np.arange(len(G))]
a = np.minimum(dag.mem[unit][G], excess[T])
npair = len(G)
print("units", n, "over stages", len(over), "gaps", len(unit), "pairs", npair)
# columns: one per pair; cost C on the first pair of each gap
isfirst = np.r_[True, G[1:] != G[:-1]]
cost = np.where(isfirst, dag.cost[unit][G], 0.0)
rowidx = np.searchsorted(over, T)
A_cov = sp.csr_matrix((a, (rowidx, np.arange(npair))), shape=(len(over), npair))
# prefix: z[j] - z[j-1] <= 0 for consecutive pairs of one gap
nxt = np.flatnonzero(~isfirst)
m2 = len(nxt)
A_pre = sp.csr_matrix((np.r_[np.ones(m2), -np.ones(m2)], (np.r_[np.arange(m2), np.arange(m2)], np.r_[nxt, nxt - 1])), shape=(m2, npair))
A = sp.vstack([A_cov, A_pre]).tocsc()
rl = np.r_[excess[over], np.full(m2, -np.inf)]
ru = np.r_[np.full(len(over), np.inf), np.zeros(m2)]
for integral in (False, True):
    h = highspy.Highs(); h.silent()
    h.setOptionValue("threads", 1); h.setOptionValue("time_limit", secs); h.setOptionValue("mip_rel_gap", 1e-6)
    h.passModel(npair, A.shape[0], A.nnz, 1, 1, 0.0, cost, np.zeros(npair), np.ones(npair), rl, ru,
                A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data.astype(float),
                np.ones(npair, np.int32) if integral else np.zeros(npair, np.int32))
    t = time.time(); h.run(); info = h.getInfo()
    bnd = info.mip_dual_bound if integral else info.objective_function_value
    print("MILP" if integral else "LP  ", h.getModelStatus().name, f"bound +{100*bnd/base:.3f}%", f"{time.time()-t:.1f}s",
          "nodes", info.mip_node_count if integral else "")
gb = gap_bound(dag, budget, iterations=2000)
print(f"lagrangian (main) +{100*(gb.bound/base-1):.3f}%  strong={gb.strong} nested={gb.nested}")
# the integer covering's solution as a schedule: S = checkpoint-all less each dropped prefix
if len(sys.argv) > 4:
    from remc.ir.schedule import Schedule, solve_rs, memory_profile
    x = np.asarray(h.getSolution().col_value) > 0.5
    S = checkpoint_all(dag).S.copy()
    for j in np.flatnonzero(x):
        S[T[j], unit[G[j]]] = False  # not resident at the start of ... (stage T_j: freed at it)
        S[T[j] + 1, unit[G[j]]] = False
    # freed on stages lo..T_j: not kept into any of them
    for gi in np.unique(G[x]):
        js = np.flatnonzero(x & (G == gi)); tmax = T[js].max()
        S[lo[gi]:tmax + 1, unit[gi]] = False
    R, S2 = solve_rs(dag, S)
    s = Schedule(R, S2)
    prof = memory_profile(dag, R, S2)
    print(f"as a schedule: cost +{100*(s.cost(dag)/base-1):.3f}%, peak {prof.max()} vs budget {budget}")
    drops = [(int(unit[gi]), int(lo[gi]), int(hi[gi]), int(T[np.flatnonzero(x & (G == gi))].max())) for gi in np.unique(G[x])]
    print("drops (unit, lo, hi, last freed stage):", drops)
    rec = [(t, i) for t in range(n) for i in np.flatnonzero(R[t, :t])]
    print("recomputations (stage, unit):", rec)
    over_stages = np.flatnonzero(prof.reshape(-1) > budget) if prof.ndim == 1 else None
