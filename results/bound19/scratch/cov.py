"""LP and MIP of the tight covering (one 0/1 column per droppable gap, chain costs) vs the Lagrangian.
python cov.py NAME RATIO [TL]"""
import pickle, sys, time
import numpy as np
import highspy
from remc.passes.bounds import _gaps, _chains, gap_bound
from remc.ir.schedule import checkpoint_all
dag = pickle.load(open(f"/tmp/bound18/{sys.argv[1]}.pkl", "rb")); ratio = float(sys.argv[2])
TL = float(sys.argv[3]) if len(sys.argv) > 3 else 60
budget = int(ratio * checkpoint_all(dag).peak(dag))
n = dag.n; base = float(dag.cost.sum())
fixed = dag.constant + dag.kept_before + dag.kept_first + dag.workspace + dag.mem
fixed = fixed + np.bincount(dag.edges[:, 1], weights=dag.mem[dag.edges[:, 0]].astype(np.float64), minlength=n).round().astype(np.int64)
unit, lo, hi = _gaps(dag)
load = np.zeros(n + 1, dtype=np.int64)
np.add.at(load, lo, dag.mem[unit]); np.add.at(load, hi + 1, -dag.mem[unit])
pinned = dag.no_recompute[unit]
excess = (fixed + np.cumsum(load)[:n] - budget).astype(np.float64)
free = ~pinned
unit, lo, hi = unit[free], lo[free], hi[free]
c0, m = dag.cost[unit], dag.mem[unit].astype(np.float64)
rows = excess > 0
over = np.flatnonzero(rows)
first = np.searchsorted(over, lo); last = np.searchsorted(over, hi, side="right"); cnt = last - first
span_lo, span_hi = np.full(n, n + 1), np.full(n, -1)
np.minimum.at(span_lo, unit[cnt > 0], lo[cnt > 0]); np.maximum.at(span_hi, unit[cnt > 0], hi[cnt > 0] + 1)
extra, tree = _chains(dag, (span_lo, span_hi), True)
c = c0 + extra[unit]
G = np.repeat(np.arange(len(unit)), cnt)
T = over[np.repeat(first - np.cumsum(cnt) + cnt, cnt) + np.arange(len(G))]
a = np.minimum(m[G], excess[T])
pct = lambda v: 100 * v / base
print(f"{sys.argv[1]} {ratio}: gaps {len(unit)}, with over stage {(cnt>0).sum()}, over stages {len(over)}, pairs {len(G)}")
cols = np.flatnonzero(cnt > 0)
colidx = -np.ones(len(unit), dtype=np.int64); colidx[cols] = np.arange(len(cols))
rowidx = -np.ones(n, dtype=np.int64); rowidx[over] = np.arange(len(over))
def solve(integer):
    h = highspy.Highs(); h.setOptionValue("output_flag", False); h.setOptionValue("time_limit", TL)
    h.setOptionValue("threads", 1); h.setOptionValue("mip_rel_gap", 1e-6)
    inf = highspy.kHighsInf
    for j in cols:
        h.addVar(0.0, 1.0); 
    h.changeColsCost(len(cols), np.arange(len(cols), dtype=np.int32), c[cols].astype(np.float64))
    # rows: sum_j a * y >= e_t
    order = np.lexsort((colidx[G], rowidx[T]))
    r, cc, v = rowidx[T][order], colidx[G][order], a[order]
    starts = np.searchsorted(r, np.arange(len(over)))
    h.addRows(len(over), excess[over], np.full(len(over), inf), len(v), starts.astype(np.int32), cc.astype(np.int32), v)
    if integer:
        h.changeColsIntegrality(len(cols), np.arange(len(cols), dtype=np.int32), np.full(len(cols), highspy.HighsVarType.kInteger))
    t0 = time.time(); h.run(); info = h.getInfo()
    st = h.modelStatusToString(h.getModelStatus())
    obj = info.objective_function_value
    db = info.mip_dual_bound if integer else obj
    x = np.array(h.getSolution().col_value)
    return st, obj, db, time.time() - t0, x
st, obj, db, s, x = solve(False)
print(f"LP: {st} {pct(obj):.5f}% in {s:.1f}s")
st, obj, db, s, x = solve(True)
print(f"MIP: {st} primal {pct(obj):.5f}% dual bound {pct(db):.5f}% in {s:.1f}s")
on = cols[x > 0.5]
by = {}
for g in on:
    op = dag.names[unit[g]].split("/")[-1]; by.setdefault(op, 0); by[op] += 1
print(" dropped:", sorted(by.items(), key=lambda kv: -kv[1])[:20])
if len(sys.argv) > 4:
    t0 = time.time(); gb = gap_bound(dag, budget, iterations=2000, deadline=time.perf_counter() + float(sys.argv[4]))
    print(f"Lagrangian standalone: {pct(gb.bound - base):.5f}% ({gb.kind}) {time.time()-t0:.0f}s")
