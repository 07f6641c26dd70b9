import math, pickle, dataclasses, sys
import numpy as np
sys.path.insert(0, "/work/wt/pub22/results/pub22/scratch")
from mapcheck import mapcheck
from remc.ir.schedule import checkpoint_all
from remc.backends.strategies import _highs
dag = pickle.load(open("/tmp/pub22/r50piece_dag.pkl", "rb"))
s = pickle.load(open("/tmp/pub22/r50piece_0.9.pkl", "rb"))
budget = math.ceil(0.9 * checkpoint_all(dag).peak(dag))
cm, x, bad, ax, obj, overhead, info = mapcheck(dag, budget, s.R, s.S, 2)
m = cm.model
print("x within col bounds", bool(((x >= m.col_lower) & (x <= m.col_upper)).all()), "obj model", m.col_cost @ x)
fixed = dataclasses.replace(m, col_lower=x.copy(), col_upper=x.copy())
r = _highs().solve(fixed, integral=True, time_limit=60, threads=1, gap=1e-6)
print("fixed:", r.status, r.objective, r.bound)
r = _highs().solve(m, integral=True, time_limit=120, threads=1, gap=1e-6)
print("free:", r.status, r.objective, r.bound, "x obj", m.col_cost @ x)
if r.x is not None:
    y = np.asarray(r.x)
    A = m.A.scipy()
    ay = A @ y
    print("highs x: max row viol", float(np.max(np.r_[m.row_lower - ay, ay - m.row_upper, 0])), "frac", float(np.max(np.abs(y - np.round(y)))))
