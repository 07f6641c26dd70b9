"""gap_cover_bound (one column per gap, chain costs, as a MILP) against the exhaustive optimum on small DAGs, every
budget from the peak down: none may be above. Also counts where it is above the Lagrangian (gap_bound).
python results/bound19/scratch/scan.py  (run from tests/ on sys.path)"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parents[3] / "tests"))
from _milp_dags import exhaustive_optimum, random_dag, training_graph  # noqa: E402
from test_chains import _bn_sub, _chain_dag, _multi_dag  # noqa: E402

from remc.backends.highs import HighsBackend  # noqa: E402
from remc.ir.schedule import checkpoint_all  # noqa: E402
from remc.passes.bounds import gap_bound  # noqa: E402
from remc.passes.coverbound import gap_cover_bound  # noqa: E402


def dags():
    rng = np.random.default_rng(60)
    for k in range(40):
        yield f"random{k}", random_dag(int(rng.integers(4, 7)), rng, p=0.5, workspace=k % 2 == 0, no_recompute=k % 5 == 0)
    rng = np.random.default_rng(16)
    for k in range(40):
        yield f"chain{k}", _chain_dag(rng)
    rng = np.random.default_rng(2)
    for k in range(60):
        yield f"multi{k}", _multi_dag(rng)
    yield "bn_sub", _bn_sub()
    rng = np.random.default_rng(7)
    for k in range(10):
        yield f"train{k}", training_graph(int(rng.integers(3, 4)), rng, skips=((0, 2),) if k % 2 else (), workspace=k % 3 == 0)


mip = HighsBackend()
checked = above_lag = bad = 0
for name, dag in dags():
    if dag.n > 9:
        continue
    for budget in range(checkpoint_all(dag).peak(dag), 0, -1):
        best = exhaustive_optimum(dag, budget)
        if best is None:
            break
        b = gap_cover_bound(dag, budget, mip, time_limit=None, threads=1).bound
        lag = gap_bound(dag, budget, iterations=200).bound
        checked += 1
        if b > best + 1e-9 * float(dag.cost.sum()):
            bad += 1
            print("BAD", name, dag.n, budget, b, best, flush=True)
        if b > lag + 1e-6 * float(dag.cost.sum()):
            above_lag += 1
            print("above", name, budget, f"cover {b:.4f} lag {lag:.4f} opt {best:.4f}", flush=True)
print(f"checked {checked}, BAD {bad}, above the Lagrangian {above_lag}")
