import sys, time
import numpy as np
sys.path.insert(0, "/work/wt/bound18/tests")
from _milp_dags import layered_dag, random_dag, training_graph
import remc.passes.stagesearch as ss
from remc.passes.milp_model import clean, simple_lower_bound
from remc.ir.schedule import checkpoint_all
ss.IMPROVE_CANDIDATES = 0; ss.REPAIR_CHUNK = 1; ss.SWAP_CANDIDATES = 0
n = int(sys.argv[1])
for seed in range(int(sys.argv[2])):
    rng = np.random.default_rng(seed)
    dag = random_dag(n, rng, p=0.2)
    top, least = checkpoint_all(dag).peak(dag), simple_lower_bound(dag)
    for frac in (0.2, 0.3, 0.4, 0.5, 0.6):
        budget = least + int((top - least) * frac)
        st = ss.StageState(dag, budget, checkpoint_all(dag).S)
        if not ss.repair(st, None, exhaustive=True):
            continue
        res = []
        t = time.perf_counter()
        for ex in (False, True):
            s2 = ss.StageState(dag, budget, st.S.copy()); ss.improve(s2, None, exhaustive=ex)
            R, S = clean(dag, s2.R, s2.S); res.append((s2.total_cost(), float(R.sum(axis=0) @ dag.cost)))
        if res[1][1] < res[0][1] - 1e-9:
            print(n, seed, frac, budget, res, f"{time.perf_counter() - t:.2f}s", flush=True)
