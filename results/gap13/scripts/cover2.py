"""Prototype 2: the retention-gap covering as an integer program with parents (keep past the last read, or one
recomputation after it), solved by HiGHS.   python cover2.py GRAPH RATIO [SECONDS]"""
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
dag = load_nodelink(g) if g.endswith(".json") else None
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
K = np.repeat(first - np.cumsum(cnt) + cnt, cnt) + np.arange(len(G))  # over index of each pair
npair = len(G)
isfirst = np.r_[True, G[1:] != G[:-1]]
islast = np.r_[G[1:] != G[:-1], True]
lastuse = dag.last_use
cols_cost = list(np.where(isfirst, dag.cost[unit][G], 0.0))
ncol = npair
keep = {}  # (p, k) -> column
qp = {}    # p -> column
rows = []  # (dict col->coef, lo, hi)

def col_keep(p, k):
    global ncol
    if (p, k) not in keep:
        keep[p, k] = ncol; cols_cost.append(0.0); ncol += 1
    return keep[p, k]

def col_qp(p):
    global ncol
    if p not in qp:
        qp[p] = ncol; cols_cost.append(float(dag.cost[p]) if not dag.no_recompute[p] else 1e12); ncol += 1
    return qp[p]

for j in range(npair):
    i, k = unit[G[j]], K[j]
    for p in dag.preds[i].tolist():
        if lastuse[p] < over[k]:
            row = {j: 1.0, col_keep(p, k): -1.0, col_qp(p): -1.0}
            if not islast[j]:
                row[j + 1] = row.get(j + 1, 0.0) - 1.0
            rows.append((row, -np.inf, 0.0))
# nested: a recomputation of p after its last read needs p's parents kept past their last reads, or recomputed
done_q = set()
todo = list(qp)
while todo:
    p = todo.pop()
    if p in done_q:
        continue
    done_q.add(p)
    kstar = int(np.searchsorted(over, lastuse[p], side="right")) - 1  # last over stage <= last_p
    for pp in dag.preds[p].tolist():
        if lastuse[pp] <= lastuse[p]:
            need_keep = kstar >= 0 and over[kstar] > lastuse[pp]
            row = {col_qp(p): 1.0, col_qp(pp): -1.0}
            if need_keep:
                row[col_keep(pp, kstar)] = -1.0
                rows.append((row, -np.inf, 0.0))
            # (else kept for free: no over stage in between)
            if pp not in done_q:
                todo.append(pp)
# keep monotone and memory
for (p, k), c in list(keep.items()):
    u = int(np.searchsorted(over, lastuse[p] + 1))
    for kk in range(u, k):
        rows.append(({col_keep(p, kk + 1): 1.0, col_keep(p, kk): -1.0}, -np.inf, 0.0))
cover = [dict() for _ in range(nov)]
for j in range(npair):
    cover[K[j]][j] = float(dag.mem[unit[G[j]]])
for (p, k), c in keep.items():
    cover[k][c] = -float(dag.mem[p])
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
print(f"units {n} over {nov} pairs {npair} keeps {len(keep)} qp {len(qp)} rows {len(rows)} build {time.time()-t0:.1f}s")
for integral in (False, True):
    h = highspy.Highs(); h.silent()
    h.setOptionValue("threads", 1); h.setOptionValue("time_limit", secs); h.setOptionValue("mip_rel_gap", 1e-6)
    h.passModel(ncol, A.shape[0], A.nnz, 1, 1, 0.0, np.array(cols_cost), np.zeros(ncol), np.ones(ncol), rl, ru,
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
    ch = [(int(unit[G[j]]), int(lo[G[j]]), int(hi[G[j]]) + 1, "freed through", int(over[K[j]])) for j in range(npair) if x[j] > .5 and (islast[j] or x[j + 1] < .5)]
    print("drops (unit, a+1, b, freed through):", ch)
    print("keeps:", sorted((p, int(over[k])) for (p, k), c in keep.items() if x[c] > .5))
    print("qp:", sorted(p for p, c in qp.items() if x[c] > .5))
    print("over stages", over.tolist(), "excess", excess[over].tolist())
    from remc.backends.strategies import make_options, solve
    s = solve("checkmate", dag, budget, make_options("checkmate", time_limit=60, threads=1, gap=0.0))
    R = s.R
    print("optimum", s.report.status, f"+{100*(s.cost(dag)/base-1):.3f}%", "recomputations (stage, unit, cost, mem, a, b):",
          [(t, int(i), dag.cost[i], int(dag.mem[i])) for t in range(n) for i in np.flatnonzero(R[t, :t])])
    print("costs of dropped units:", [(u, dag.cost[u], int(dag.mem[u])) for u, *_ in ch])
