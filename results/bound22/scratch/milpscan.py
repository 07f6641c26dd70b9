import sys, numpy as np
sys.path.insert(0, "/work/wt/bound22/tests")
from _milp_dags import layered_dag, training_graph
from remc.ir.schedule import checkpoint_all
from remc.passes.bounds import gap_bound
from remc.passes.ancestry import ancestry_bound
from remc.backends.strategies import solve_milp
checked = bad = higher = 0
for seed in range(int(sys.argv[1]), int(sys.argv[2])):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 19)); w = int(rng.integers(2, 4))
    dag = layered_dag(n, w, seed, skip=0.4)
    peak = checkpoint_all(dag).peak(dag)
    for ratio in (0.9, 0.8, 0.7, 0.6):
        budget = int(ratio * peak)
        try:
            rep = solve_milp(dag, budget, time_limit=60, gap=0.0).report
        except Exception as e:
            print(seed, ratio, "infeasible"); break
        if rep.status != "optimal":
            print(seed, ratio, rep.status); continue
        gb = gap_bound(dag, budget)
        ab = ancestry_bound(dag, budget, lam=gb.lam, iterations=80, upper=rep.cost)
        checked += 1
        flag = ""
        if ab.bound > rep.cost + 1e-6 * rep.cost:
            bad += 1; flag = "INVALID"
        if ab.bound > gb.bound + 1e-9: higher += 1
        print(seed, n, w, ratio, f"opt {rep.cost:g} gap {gb.bound:.2f} anc {ab.bound:.2f}", flag, flush=True)
print("checked", checked, "invalid", bad, "higher", higher)
