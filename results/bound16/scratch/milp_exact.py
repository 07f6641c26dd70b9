"""The MILP's optimum (gap 0) of the bn_net cases the chain test writes in: python milp_exact.py"""
import sys
sys.path.insert(0, "results/bound16/scratch")
import numpy as np
from milp_scan import bn_net
from remc.ir.schedule import checkpoint_all
from remc.backends.strategies import solve_milp
from remc.passes.bounds import gap_bound
rng = np.random.default_rng(2)
dags = [bn_net(2, rng) for _ in range(8)]
for k, ratio in ((0, 0.9), (2, 0.8), (5, 0.8), (7, 0.9)):
    dag = dags[k]
    budget = int(ratio * checkpoint_all(dag).peak(dag))
    opt = solve_milp(dag, budget, time_limit=120, gap=0.0, threads=1).report
    print(k, ratio, budget, repr(float(dag.cost.sum())), opt.status, repr(opt.cost), repr(gap_bound(dag, budget).bound),
          repr(gap_bound(dag, budget, chains=False).bound), flush=True)
