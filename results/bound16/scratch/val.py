"""Validity scan of the chain charge: random 6-unit DAGs with equal-size single-child chains, exhaustive optima."""
import sys, time
sys.path.insert(0, "tests")
import numpy as np
from _milp_dags import exhaustive_optimum
from remc.ir.dag import DAG
from remc.ir.schedule import checkpoint_all
from remc.passes.bounds import gap_bound

def chain_dag(rng, n=6):
    edges = {(i, i + 1) for i in range(n - 1)}
    edges |= {(i, j) for i in range(n) for j in range(i + 2, n) if rng.random() < 0.25}
    mem = rng.integers(1, 8, n)
    # make runs of equal sizes
    for i in range(1, n):
        if rng.random() < 0.5:
            mem[i] = mem[i - 1] + (rng.integers(0, 2) if rng.random() < 0.3 else 0)
    cost = rng.integers(1, 6, n).astype(float)
    nr = rng.random(n) < 0.1
    return DAG(tuple(f"v{i}" for i in range(n)), cost, mem, np.array(sorted(edges)), no_recompute=nr,
               workspace=rng.integers(0, 2, n) if rng.random() < 0.3 else None)

rng = np.random.default_rng(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
N = int(sys.argv[2]) if len(sys.argv) > 2 else 40
t0 = time.time(); checked = higher = bad = 0
for k in range(N):
    dag = chain_dag(rng)
    peak = checkpoint_all(dag).peak(dag)
    for budget in range(peak, 0, -1):
        best = exhaustive_optimum(dag, budget)
        if best is None:
            break
        b = gap_bound(dag, budget, iterations=300).bound
        b0 = gap_bound(dag, budget, iterations=300, chains=False).bound
        checked += 1
        higher += b > b0 + 1e-9
        if b > best + 1e-9:
            bad += 1
            print("ABOVE", k, budget, b, best, dag.mem.tolist(), dag.cost.tolist(), dag.edges.tolist())
print(f"checked {checked} higher {higher} bad {bad} {time.time()-t0:.1f}s")
