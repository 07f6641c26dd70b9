import sys, numpy as np
sys.path.insert(0, "/work/wt/bound22/tests")
from _milp_dags import exhaustive_optimum, layered_dag, random_dag, training_graph
from remc.ir.schedule import checkpoint_all
from remc.passes.bounds import gap_bound
from remc.passes.ancestry import ancestry_bound
fam = sys.argv[1]; lo, hi = int(sys.argv[2]), int(sys.argv[3])
checked = bad = higher = 0
for seed in range(lo, hi):
    rng = np.random.default_rng(seed)
    if fam == "lay":
        dag = layered_dag(int(rng.integers(6, 8)), 2, seed, skip=0.6)
    elif fam == "rand":
        dag = random_dag(int(rng.integers(5, 8)), rng, p=0.35, workspace=seed % 2 == 0, no_recompute=seed % 5 == 0)
    else:
        dag = training_graph(3, rng, skips=((0, 2),), workspace=seed % 2 == 0)
    peak = checkpoint_all(dag).peak(dag)
    for budget in range(peak, 0, -max(1, peak // 12)):
        best = exhaustive_optimum(dag, budget)
        if best is None:
            break
        gb = gap_bound(dag, budget); gw = gap_bound(dag, budget, strong=False, nested=False, chains=False)
        ab = ancestry_bound(dag, budget, lam=gb.lam, iterations=100, upper=best)
        checked += 1
        if ab.bound > best + 1e-9 * max(1, best):
            bad += 1; print("INVALID", seed, budget, ab.bound, best, flush=True)
        weak_hi = ab.bound > gw.bound + 1e-9; higherw = globals().get("higherw", 0) + weak_hi; globals()["higherw"] = higherw
        if ab.bound > gb.bound + 1e-9:
            higher += 1; print("higher", seed, dag.n, budget, f"gap {gb.bound:.3f} anc {ab.bound:.3f} opt {best}", flush=True)
print(fam, "checked", checked, "invalid", bad, "higher", higher, "above covering", globals().get("higherw"), flush=True)
