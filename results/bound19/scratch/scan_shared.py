"""gap_cover_bound with shared parents against the exhaustive optimum on small attention-like DAGs (a matmul -> split
-> q, k read together, a spike, q and k read again; perturbed), every budget: none may be above. MUTANT=size|late|many
patches passes/bounds.py's _shared at run time (no size condition; no last_p < span condition; x_p charged per root).
python results/bound19/scratch/scan_shared.py COUNT [SEED]"""
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parents[3] / "tests"))
from _milp_dags import exhaustive_optimum  # noqa: E402

import remc.passes.bounds as bounds  # noqa: E402
from remc.backends.highs import HighsBackend  # noqa: E402
from remc.ir.dag import DAG  # noqa: E402
from remc.ir.schedule import checkpoint_all  # noqa: E402
from remc.passes.coverbound import gap_cover_bound  # noqa: E402


def shared_dag(rng):
    """m (matmul, cost 100) -> s (split, 2 bytes) -> q, k (1 byte each) -> u (reads q, k) -> y (a spike: workspace 8) -> d (reads
    y, q, k); sizes off by up to 2 bytes, costs 1/10/100 apart, a few more edges, units never recomputed."""
    n = 7
    edges = {(0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 5), (5, 6), (2, 6), (3, 6)}
    cand = [(0, 5), (0, 6), (4, 6), (1, 4), (0, 4), (2, 5)]
    edges |= {e for e in cand if rng.random() < 0.15}
    mem = np.maximum(np.array([2, 2, 1, 1, 1, 1, 1]) + rng.integers(-1, 2, n) * (rng.random(n) < 0.3), 0)
    cost = np.array([100.0, 1.0, 1.0, 1.0, 10.0, 1.0, 1.0]) * rng.choice([1.0, 1.0, 10.0, 0.1], n) * rng.uniform(0.5, 1.5, n)
    return DAG(tuple(f"v{i}" for i in range(n)), cost, mem, np.array(sorted(edges), dtype=np.int64).reshape(-1, 2),
               no_recompute=rng.random(n) < 0.05, workspace=np.array([0, 0, 0, 0, 0, 8, 0]) + (rng.integers(0, 2, n) if rng.random() < 0.3 else 0))


MUT = os.environ.get("MUTANT", "")
if MUT in ("size", "late"):  # the condition taken out of _shared's source, the function rebuilt in bounds' namespace
    import inspect
    src = inspect.getsource(bounds._shared)
    cut = {"size": " or dag.mem[p] < dag.mem[rs].sum()", "late": " and dag.last_use[p] < span_lo[i]"}[MUT]
    assert cut in src
    exec(src.replace(cut, ""), bounds.__dict__)
elif MUT == "many":  # x_p charged once per root, not once for all of them
    orig = bounds._shared

    def patched(dag, span_lo, span_hi):
        out, taken = orig(dag, span_lo, span_hi)
        return [(p, c, np.array([r])) for p, c, rs in out for r in rs], taken
    bounds._shared = patched

count, seed = int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 0
rng = np.random.default_rng(seed)
mip = HighsBackend()
checked = bad = with_groups = 0
for k in range(count):
    dag = shared_dag(rng)
    for budget in range(checkpoint_all(dag).peak(dag), 0, -1):
        best = exhaustive_optimum(dag, budget)
        if best is None:
            break
        cov = bounds.gap_rows(dag, budget)
        with_groups += bool(cov.shared_cost is not None and len(cov.shared_cost))
        b = gap_cover_bound(dag, budget, mip, time_limit=None, threads=1).bound
        checked += 1
        if os.environ.get("SHOW"):
            orig_rows = bounds.gap_rows
            bounds.gap_rows = lambda d, b_, multi=True, shared=True: orig_rows(d, b_, multi, False)
            b0 = gap_cover_bound(dag, budget, mip, time_limit=None, threads=1).bound
            bounds.gap_rows = orig_rows
            print(k, budget, f"opt {best:.3f} with {b:.3f} without {b0:.3f}", flush=True)
        if b > best + 1e-9 * float(dag.cost.sum()):
            bad += 1
            print("BAD", k, budget, b, best, flush=True)
print(f"MUTANT={MUT or 'none'} seed {seed}: checked {checked}, with shared parents {with_groups}, BAD {bad}")
