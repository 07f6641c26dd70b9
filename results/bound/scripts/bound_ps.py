import sys; sys.path.insert(0,'tools')
import numpy as np
from layered import layered_dag
from remc.ir.schedule import checkpoint_all, stage_peaks
from remc.passes.milp_model import clean
n, seed, ratio = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
dag = layered_dag(n, 10, seed)
budget = int(ratio * checkpoint_all(dag).peak(dag))
z = np.load(f"/tmp/bound_sched_{n}_{seed}_{ratio}.npz")
R,S = clean(dag, z["R"], z["S"])
per = (R & ~np.eye(n, dtype=bool)) @ dag.cost
o = np.argsort(-per)[:15]
print("base", dag.cost.sum(), "over", per.sum())
print([(int(t), float(per[t]), int(R[t].sum())) for t in o])
pk = stage_peaks(dag, R, S); print("budget", budget, "peaks near", pk[o[:5]])
print("ckpt-all peaks top", np.sort(stage_peaks(dag, checkpoint_all(dag).R, checkpoint_all(dag).S))[-5:])
