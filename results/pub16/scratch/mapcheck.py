"""Map a schedule to the kept columns of the covering MILP and check the kept rows (debugging aid).
    python mapcheck.py GRAPH RATIO"""
import math, sys
import numpy as np
from remc.ir import nodelink
from remc.ir.schedule import checkpoint_all
from remc.backends import strategies
from remc.passes import coverbound as cb
from remc.passes.bounds import _gaps

g, ratio = sys.argv[1], float(sys.argv[2])
dag = nodelink.load_nodelink(g)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
o = strategies.make_options("checkmate", time_limit=60)
cb.COVER_KEPT = False
s = strategies.solve("checkmate", dag, budget, o)
cb.COVER_KEPT = True
unit, G, K, over, excess, _ = cb._pairs(dag, budget)
u, lo, hi = _gaps(dag)
keep = ~dag.no_recompute[u]; u, lo, hi = u[keep], lo[keep], hi[keep]
cm = cb.build_cover(dag, budget, depth=1)
# recompute the kept structure as build_cover does
n = dag.n; nov = len(over); npair = len(G)
R = s.R
z = np.zeros(npair)
sg = {}
for gg in range(len(u)):
    comps = [t for t in range(lo[gg], hi[gg] + 2) if R[t, u[gg]]]
    sg[gg] = comps
for j in range(npair):
    comps = sg[G[j]]
    z[j] = bool(comps) and over[K[j]] < max(comps)
A = cm.model.A.scipy().tocsr()
x = np.zeros(cm.model.num_col)
x[:npair] = z
# fill y and x cols
import remc.passes.coverbound as m
# find the kept structure again
last = dag.last_use.astype(np.int64)
print("cols", cm.model.num_col, "pairs", npair)
# locate kept columns from col_stage/col_gap: y and x are after comp columns
# brute force: rows with lower -inf, upper 1 are kept rows
rl, ru = cm.model.row_lower, cm.model.row_upper
kr = np.flatnonzero(ru == 1.0)
print("kept rows", len(kr))
viol = 0
for r in kr:
    cols = A.indices[A.indptr[r]:A.indptr[r+1]]; vals = A.data[A.indptr[r]:A.indptr[r+1]]
    pos = [c for c, v in zip(cols, vals) if v > 0]
    negs = [c for c, v in zip(cols, vals) if v < 0]
    zsum = sum(z[c] for c in pos if c < npair) - sum(z[c] for c in negs if c < npair)
    if zsum > 1:
        # need x or y: find parent gap
        jcol = [c for c in pos if c < npair]
        info = [(int(unit[G[c]]), int(over[K[c]]), sg[G[c]]) for c in jcol]
        viol += 1
        if viol < 10:
            print("needs x/y:", info, "neg", [(int(c), int(unit[G[c]]) if c < npair else None) for c in negs])
print("rows needing x or y", viol)
