import sys; sys.path.insert(0,'tools')
import numpy as np
from layered import layered_dag
from remc.backends.strategies import make_options, solve
from remc.ir.schedule import checkpoint_all
n, seed, ratio, tl = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
dag = layered_dag(n, 10, seed)
budget = int(ratio * checkpoint_all(dag).peak(dag))
s = solve("approx", dag, budget, make_options("approx", time_limit=tl, threads=1))
np.savez_compressed(f"/tmp/bound_sched_{n}_{seed}_{ratio}.npz", R=s.R, S=s.S)
print(100*(s.cost(dag)/dag.cost.sum()-1))
