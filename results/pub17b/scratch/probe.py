import math, sys, time
sys.path.insert(0, "tests")
import numpy as np
from _milp_dags import training_graph
from remc.ir.schedule import checkpoint_all
from remc.passes.coverbound import cover_bound, cover_schedule
from remc.backends.highs import HighsBackend
import remc.backends.strategies as strategies
from remc.passes.solver_api import Clock
for L, seed, skips in [(7, 8, ((0, 4), (2, 6))), (10, 1, ((1, 6), (3, 9))), (12, 2, ((2, 8),)), (20, 3, ((3, 12), (8, 18))), (30, 4, ((3, 20), (10, 25)))]:
    dag = training_graph(L, np.random.default_rng(seed), skips=skips, workspace=True)
    for r in (0.6, 0.7, 0.8, 0.9):
        budget = math.ceil(checkpoint_all(dag).peak(dag) * r)
        c0 = time.process_time()
        cb = cover_bound(dag, budget, HighsBackend(), time_limit=None, threads=1, depth=1, max_columns=None, kept=True, start=True)
        sch = cover_schedule(dag, budget, cb.start)
        st = strategies._stage_hint(dag, budget, None, Clock(None))
        print(L, seed, r, dag.n, cb.status, cb.bound, None if sch is None else sch.cost(dag), None if st is None else st.cost(dag), f"{time.process_time()-c0:.2f}")
