"""Small DAGs where improve with whole repairs (then clean) beats improve with the quick ones from the same
start (the stage search's repair from checkpoint-all): python find.py N SEEDS"""
import math, sys
import numpy as np
sys.path.insert(0, "/work/wt/bound18/tests")
from _milp_dags import layered_dag, random_dag, training_graph
import remc.passes.stagesearch as ss
from remc.passes.milp_model import clean
from remc.ir.schedule import checkpoint_all
from remc.passes.milp_model import simple_lower_bound
n, seeds = int(sys.argv[1]), int(sys.argv[2])
for seed in range(seeds):
    for kind in ("layered", "random", "train"):
        rng = np.random.default_rng(seed)
        dag = layered_dag(n, 4, seed) if kind == "layered" else random_dag(n, rng, p=0.15) if kind == "random" \
            else training_graph(n // 2 - 1, rng, skips=((0, 2), (1, 4)) if n >= 12 else ())
        top, least = checkpoint_all(dag).peak(dag), simple_lower_bound(dag)
        for frac in (0.2, 0.4, 0.6):
            budget = least + int((top - least) * frac)
            st = ss.StageState(dag, budget, checkpoint_all(dag).S)
            if not ss.repair(st, None):
                continue
            S0 = st.S.copy()
            res = []
            for ex in (False, True):
                s2 = ss.StageState(dag, budget, S0)
                ss.improve(s2, None, exhaustive=ex)
                R, S = clean(dag, s2.R, s2.S)
                res.append((s2.total_cost(), float(R.sum(axis=0) @ dag.cost)))
            if res[1][1] < res[0][1] - 1e-9:
                print(kind, dag.n, seed, frac, budget, res, flush=True)
