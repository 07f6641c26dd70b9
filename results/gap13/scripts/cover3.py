"""Prototype 3: the retention-gap covering as an integer program with residency of units past their last read
(res[p, k]: resident at over stage k; c[p, k]: computed again in (o_{k-1}, o_k]), nested through parents, by HiGHS.
    python cover3.py GRAPH RATIO [SECONDS] [show]"""
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
t0 = time.time()
fixed = dag.constant + dag.kept_before + dag.kept_first + dag.workspace + dag.mem
fixed = fixed + np.bincount(dag.edges[:, 1], weights=dag.mem[dag.edges[:, 0]].astype(float), minlength=n).round().astype(np.int64)
unit, lo, hi = _gaps(dag)
load = np.zeros(n + 1, dtype=np.int64)
np.add.at(load, lo, dag.mem[unit]); np.add.at(load, hi + 1, -dag.mem[unit])
excess = (fixed + np.cumsum(load)[:n] - budget).astype(float)
over = np.flatnonzero(excess > 0)
nov = len(over)
free = ~dag.no_recompute[unit]
unit, lo, hi = unit[free], lo[free], hi[free]
first = np.searchsorted(over, lo); last = np.searchsorted(over, hi, side="right")
cnt = last - first
G = np.repeat(np.arange(len(unit)), cnt)
K = np.repeat(first - np.cumsum(cnt) + cnt, cnt) + np.arange(len(G))
npair = len(G)
isfirst = np.r_[True, G[1:] != G[:-1]]
islast = np.r_[G[1:] != G[:-1], True]
lastuse = dag.last_use
BIG = 1e12
cost = list(np.where(isfirst, dag.cost[unit][G], 0.0))
ncol = npair
res, comp = {}, {}
rows = []

def col(d, key, c):
    global ncol
    if key not in d:
        d[key] = ncol; cost.append(c); ncol += 1
    return d[key]

def u_of(p):  # first over index after last_p
    return int(np.searchsorted(over, lastuse[p], side="right"))

def need(p, k, lhs):
    """lhs (dict) <= [p resident at o_k past its last read] + [p computed in (o_k, o_{k+1}]]; k = -1: before o_0."""
    lp = lastuse[p]
    if k >= 0 and lp >= over[k]:
        return  # read at or after o_k: not past its last read there (skipped: valid)
    row = dict(lhs)
    if k >= 0 and k >= u_of(p):
        row[col(res, (p, k), 0.0)] = -1.0
    elif k >= 0:
        return  # k < u_p means o_k < last_p... handled above
    row[col(comp, (p, k + 1), float(dag.cost[p]) if not dag.no_recompute[p] else BIG)] = -1.0
    rows.append((row, -np.inf, 0.0))

for j in range(npair):
    i, k = unit[G[j]], K[j]
    lhs = {j: 1.0}
    if not islast[j]:
        lhs[j + 1] = -1.0
    for p in dag.preds[i].tolist():
        need(p, k, lhs)
# residency chains and nesting, until closed
done = set()
while True:
    todo = [key for key in list(res) + [("c",) + kk for kk in comp] if key not in done]
    if not todo:
        break
    for key in todo:
        done.add(key)
        if key[0] == "c":
            _, p, k = key  # p computed in (o_{k-1}, o_k]: its parents at that stage, past their reads at o_{k-1}
            for pp in dag.preds[p].tolist():
                need(pp, k - 1, {comp[p, k]: 1.0})
        else:
            p, k = key  # resident at o_k: resident at o_{k-1} or computed in (o_{k-1}, o_k]
            if k - 1 >= u_of(p):
                rows.append(({res[p, k]: 1.0, col(res, (p, k - 1), 0.0): -1.0,
                              col(comp, (p, k), float(dag.cost[p]) if not dag.no_recompute[p] else BIG): -1.0}, -np.inf, 0.0))
cover = [dict() for _ in range(nov)]
for j in range(npair):
    cover[K[j]][j] = float(dag.mem[unit[G[j]]])
for (p, k), c in res.items():
    cover[k][c] = cover[k].get(c, 0.0) - float(dag.mem[p])
for k in range(nov):
    rows.append((cover[k], excess[over[k]], np.inf))
for j in np.flatnonzero(~isfirst):
    rows.append(({j: 1.0, j - 1: -1.0}, -np.inf, 0.0))
ri, ci, vv = [], [], []
for rr, (d, _, _) in enumerate(rows):
    for c, v in d.items():
        ri.append(rr); ci.append(c); vv.append(v)
A = sp.csc_matrix((vv, (ri, ci)), shape=(len(rows), ncol))
rl = np.array([x[1] for x in rows]); ru = np.array([x[2] for x in rows])
print(f"units {n} over {nov} pairs {npair} res {len(res)} comp {len(comp)} rows {len(rows)} build {time.time()-t0:.1f}s")
for integral in (False, True):
    h = highspy.Highs(); h.silent()
    h.setOptionValue("threads", 1); h.setOptionValue("time_limit", secs); h.setOptionValue("mip_rel_gap", 1e-6)
    h.passModel(ncol, A.shape[0], A.nnz, 1, 1, 0.0, np.array(cost), np.zeros(ncol), np.ones(ncol), rl, ru,
                A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data.astype(float),
                np.ones(ncol, np.int32) if integral else np.zeros(ncol, np.int32))
    t = time.time(); h.run(); info = h.getInfo()
    bnd = info.mip_dual_bound if integral else info.objective_function_value
    print("MILP" if integral else "LP  ", h.getModelStatus().name, f"bound +{100*bnd/base:.3f}%", f"{time.time()-t:.1f}s",
          "nodes", info.mip_node_count if integral else "", f"primal +{100*info.objective_function_value/base:.3f}%")
gb = gap_bound(dag, budget, iterations=2000, deadline=time.perf_counter() + 30)
print(f"lagrangian (main) +{100*(gb.bound/base-1):.3f}%  strong={gb.strong} nested={gb.nested}")
if len(sys.argv) > 4:
    x = np.asarray(h.getSolution().col_value)
    ch = [(int(unit[G[j]]), int(lo[G[j]]), int(hi[G[j]]) + 1, int(over[K[j]])) for j in range(npair) if x[j] > .5 and (islast[j] or x[j + 1] < .5)]
    print("drops (unit, a+1, b, freed through):", ch)
    print("res:", sorted((p, int(over[k])) for (p, k), c in res.items() if x[c] > .5))
    print("comp:", sorted((p, k) for (p, k), c in comp.items() if x[c] > .5))
    from remc.ir.schedule import Schedule, solve_rs, memory_profile
    S = checkpoint_all(dag).S.copy()
    for (i, a1, b, thr) in ch:
        S[a1:thr + 2, i] = False  # not kept into a1..thr+1: recomputed in stage thr+1
        S[thr + 2:b + 1, i] = True
    for (p, k), c in res.items():
        if x[c] > .5:
            S[lastuse[p] + 1:over[k] + 2, p] = True
    R, S2 = solve_rs(dag, S)
    U = memory_profile(dag, R, S2)
    s = Schedule(R, S2)
    print(f"as a schedule: cost +{100*(s.cost(dag)/base-1):.3f}% peak {U.max()} budget {budget}")
    bad = np.argwhere(U > budget)
    print("over budget at (stage, unit):", [(int(t), int(k), int(U[t, k] - budget)) for t, k in bad[:20]])
    print("recomputations:", [(t, int(i)) for t in range(n) for i in np.flatnonzero(R[t, :t])])
