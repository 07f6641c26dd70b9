"""Where the covering MILP is loose: its solution against the optimum's recomputations.
    python gapcmp.py GRAPH RATIO"""
import math, sys
import numpy as np
from remc.ir import nodelink
from remc.ir.schedule import checkpoint_all
from remc.backends import strategies
from remc.backends.highs import solve_highs
from remc.passes.coverbound import build_cover, _pairs

g, ratio = sys.argv[1], float(sys.argv[2])
dag = nodelink.load_nodelink(g)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
cm = build_cover(dag, budget, depth=int(sys.argv[3]) if len(sys.argv) > 3 else 1)
res = solve_highs(cm.model, integral=True, isolated=False, gap=1e-9)
base = float(dag.cost.sum())
print("cover", res.status, "over%", 100 * res.objective * cm.cost_unit / base, "cols", cm.model.num_col)
x = np.round(res.x)
unit, G, K, over, excess, _ = _pairs(dag, budget)
from remc.passes.bounds import _gaps
u, lo, hi = _gaps(dag)
keep = ~dag.no_recompute[u]; u, lo, hi = u[keep], lo[keep], hi[keep]
isfirst = np.r_[True, G[1:] != G[:-1]]
for j in np.flatnonzero(isfirst & (x[:cm.pairs] > 0.5)):
    gg = G[j]; ks = np.flatnonzero(G == gg)
    print(f"gap unit {unit[gg]} cost {dag.cost[unit[gg]]:g} mem {dag.mem[unit[gg]]} gap [{lo[gg]},{hi[gg]}] z={x[ks].astype(int).tolist()} stages {over[K[ks]].tolist()}")
comp = np.flatnonzero((cm.col_gap < 0) & (cm.model.col_cost > 0) & (x > 0.5))
print("comp cols", [(int(c), float(cm.model.col_cost[c] * cm.cost_unit)) for c in comp])
o = strategies.make_options("checkmate", time_limit=60)
s = strategies.solve("checkmate", dag, budget, o)
print("opt over%", 100 * (s.cost(dag) - base) / base, s.report.status if hasattr(s.report, 'status') else '')
rc = s.recomputes()
for i in np.flatnonzero(rc):
    stages = np.flatnonzero(s.R[:, i]).tolist()
    print(f"unit {i} cost {dag.cost[i]:g} mem {dag.mem[i]} x{rc[i]} at stages {stages} succs {dag.succs[i].tolist()} preds {dag.preds[i].tolist() if hasattr(dag,'preds') else ''}")
print("over stages", over.tolist())
print("excess", excess[over].tolist())
