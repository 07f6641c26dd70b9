"""The chain charge with parents read before i (passes/bounds.py, multi=True) against the exhaustive optimum on random
6-unit DAGs built around a parent of several children: python scan.py SEED COUNT [MUTANT]. MUTANT patches the code at
run time (nothing on disk changes): 'late' (no last_p <= i), 'share' (no span check between trees), 'strong' (tree
members left in other gaps' parent terms), 'size' (no M_p >= M_i), 'more' (the chain charged 1.1x)."""
import sys
from pathlib import Path
import numpy as np
ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests"))
from _milp_dags import exhaustive_optimum
from remc.ir.dag import DAG
from remc.ir.schedule import checkpoint_all
from remc.passes import bounds


def multi_dag(rng):
    """a -> {m, b} (a read by both, m -> b), y (a spike), d reads b; random extra edges, sizes, costs."""
    n = 6
    edges = {(0, 1), (0, 2), (1, 2), (2, 4), (3, 5), (4, 5)}
    cand = [(0, 3), (0, 4), (0, 5), (1, 3), (1, 4), (1, 5), (2, 3), (2, 5), (3, 4), (0, 2)]
    edges |= {e for e in cand if rng.random() < 0.2}
    mem = np.array([4, 1, 4, 8, 1, 1]) + rng.integers(-2, 3, n) * (rng.random(n) < 0.4)
    mem = np.maximum(mem, 0)
    cost = rng.choice([1.0, 10.0, 100.0], n) * rng.uniform(0.5, 1.5, n)
    return DAG(tuple(f"v{i}" for i in range(n)), cost, mem, np.array(sorted(edges), dtype=np.int64).reshape(-1, 2),
               no_recompute=rng.random(n) < 0.08, workspace=rng.integers(0, 2, n) if rng.random() < 0.3 else None)


def patch(name):
    if name == "more":
        orig = bounds._chains
        bounds._chains = lambda dag, *a, **k: (lambda r: (r[0] * 1.1, r[1]))(orig(dag, *a, **k))
        return
    src = open(ROOT / "passes/bounds.py").read()
    if name == "late":
        src = src.replace("many[p] and last[p] <= i", "many[p]")
    elif name == "share":
        src = src.replace("all(e < lo_i or s > hi_i for s, e in owned.get(p, ()))", "True")
    elif name == "strong":
        src = src.replace("keep &= ~(own_lo[gp_p] <= hi[gp_g] + 1)[rep]", "keep &= ~((own_lo[gp_p] <= hi[gp_g] + 1) & (unit[gp_g] == -1))[rep]")
    elif name == "size":
        src = src.replace("if p in seen or mem[p] < mem[i]:", "if p in seen:")
    code = compile(src, "bounds_mutant", "exec")
    exec(code, bounds.__dict__)


if __name__ == "__main__":
    seed, count = int(sys.argv[1]), int(sys.argv[2])
    if len(sys.argv) > 3:
        patch(sys.argv[3])
    rng = np.random.default_rng(seed)
    checked = higher = bad = 0
    for k in range(count):
        dag = multi_dag(rng)
        for budget in range(checkpoint_all(dag).peak(dag), 0, -1):
            best = exhaustive_optimum(dag, budget)
            if best is None:
                break
            b = bounds.gap_bound(dag, budget, iterations=100).bound
            plain = bounds.gap_bound(dag, budget, iterations=100, multi=False).bound
            checked += 1
            higher += b > plain + 1e-6
            if b > best + 1e-9 * float(dag.cost.sum()):
                bad += 1
                print("BAD", k, budget, b, best, flush=True)
    print(f"seed {seed}: {count} DAGs, {checked} cases, above the plain chains in {higher}, above the optimum in {bad}")
