import sys
import numpy as np
sys.path.insert(0, "tests")
from _milp_dags import random_dag, exhaustive_optimum
from remc.backends.highs import HighsBackend
from remc.ir.schedule import checkpoint_all
from remc.passes.coverbound import cover_bound, window_bound, build_cover
rng = np.random.default_rng(60)
for k in range(12):
    dag = random_dag(int(rng.integers(4, 6)), rng, p=0.5, workspace=k % 2 == 0, no_recompute=k % 5 == 0)
    peak = checkpoint_all(dag).peak(dag)
    for budget in range(peak, 0, -max(1, peak // 6)):
        best = exhaustive_optimum(dag, budget)
        if best is None:
            break
        base = float(dag.cost.sum())
        f = cover_bound(dag, budget, HighsBackend(), time_limit=None, threads=1, depth=2, max_columns=None)
        w = window_bound(dag, budget, HighsBackend(), time_limit=None, threads=1, depth=2, window_columns=8, rounds=1)
        w100 = window_bound(dag, budget, HighsBackend(), time_limit=None, threads=1, depth=2, window_columns=100, rounds=1)
        if f.bound > base + 1e-9:
            print(k, budget, best - base, f.bound - base, f.columns, w.bound - base, w.note, w.status, w100.bound - base, w100.note, w100.status)
