"""Which of checkmate's paths a bench_portfolio random case takes: does a baseline fit, does the stage search from
nothing find a schedule (no deadline)? python paths.py K..."""
import sys
import numpy as np
sys.path.insert(0, "tools")
from bench_portfolio import random_small
from remc.ir.schedule import checkpoint_all
from remc.passes.milp_model import simple_lower_bound
from remc.passes.strategies import best_baseline
from remc.passes.evict import evict_search
ks = [int(a) for a in sys.argv[1:]]
rng = np.random.default_rng(12)
for i in range(max(ks) + 1):
    dag, frac = random_small(rng, 50)
    if i in ks:
        budget = max(int(frac * checkpoint_all(dag).peak(dag)), int(simple_lower_bound(dag)))
        b = best_baseline(dag, budget)
        e = evict_search(dag, budget, deadline=None)
        print(i, dag.n, "baseline", None if b is None else b.cost(dag), "stage search", None if e is None else float(e[0].sum(axis=0) @ dag.cost))
