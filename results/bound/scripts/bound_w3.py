import sys, time
sys.path.insert(0,'tools')
import numpy as np
from layered import layered_dag
from remc.backends.highs import HighsBackend
from remc.ir.schedule import checkpoint_all
from remc.passes import window as W
from remc.passes.milp_model import clean
n, seed, ratio, width = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
dag = layered_dag(n, 10, seed)
budget = int(ratio * checkpoint_all(dag).peak(dag))
z = np.load(f"/tmp/bound_sched_{n}_{seed}_{ratio}.npz")
R,S = clean(dag, z["R"], z["S"])
for a in W.windows_by_recompute(dag, R, width)[:int(sys.argv[5])]:
    t=time.time(); m = W.window_model(dag, budget, R, S, a, a+width); t1=time.time()-t
    x = W.window_start(m, R, S, a, a+width); t2=time.time()-t-t1
    res = HighsBackend().solve(m, integral=True, time_limit=8, threads=1, gap=1e-6, start=x)
    t3=time.time()-t-t1-t2
    print(a, m.num_col, m.num_row, m.A.nnz, (m.p>=0).any(), f"build {t1:.2f} start {t2:.2f} solve {t3:.2f}", res.status, m.cost_of(m.col_cost@x), m.cost_of(res.objective), flush=True)
