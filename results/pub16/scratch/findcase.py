"""Small DAGs where the kept-parent rows raise the covering MILP's bound, with remc's MILP optimum beside."""
import sys, time
sys.path.insert(0, '/work/wt/pub16/tests')
import numpy as np
from _milp_dags import training_graph, random_dag, layered_dag
from remc.ir.schedule import checkpoint_all
from remc.backends.highs import HighsBackend
from remc.backends.strategies import solve_milp
from remc.passes.coverbound import cover_bound
found = 0
for seed in range(int(sys.argv[1]), int(sys.argv[2])):
    rng = np.random.default_rng(seed)
    kind = seed % 3
    if kind == 0:
        dag = training_graph(int(rng.integers(4, 7)), rng)
    elif kind == 1:
        dag = layered_dag(int(rng.integers(10, 15)), 2, seed, skip=0.3)
    else:
        dag = random_dag(int(rng.integers(8, 12)), rng, p=0.25)
    peak = checkpoint_all(dag).peak(dag)
    for ratio in (0.9, 0.8, 0.7, 0.6, 0.5):
        budget = int(ratio * peak)
        b1 = cover_bound(dag, budget, HighsBackend(), time_limit=None, threads=1, max_columns=None, kept=True)
        b0 = cover_bound(dag, budget, HighsBackend(), time_limit=None, threads=1, max_columns=None, kept=False)
        if not np.isfinite(b1.bound):
            break
        if b1.bound > b0.bound + 1e-6:
            from remc.passes.coverbound import build_cover
            from remc.backends.highs import solve_highs
            cm = build_cover(dag, budget, max_columns=None, kept=True)
            full = float(dag.cost.sum()) + solve_highs(cm.model, integral=True, isolated=False, gap=1e-9).objective * cm.cost_unit
            try:
                opt = solve_milp(dag, budget, time_limit=30, gap=0.0, threads=1).report
            except Exception as e:
                print(f"seed {seed} budget {budget} kept {b1.bound} full {full}: {type(e).__name__}")
                continue
            bad = " BAD" if max(b1.bound, full) > opt.cost + 1e-6 and opt.status == "optimal" else ""
            print(f"seed {seed} kind {kind} n {dag.n} budget {budget} plain {b0.bound:.4f} kept {b1.bound:.4f} full {full:.4f} "
                  f"opt {opt.cost} {opt.status} {b1.note}{bad}", flush=True)
            found += 1
            continue
            print(f"seed {seed} kind {kind} n {dag.n} budget {budget} plain {b0.bound:.4f} kept {b1.bound:.4f} "
                  f"opt {opt.cost} {opt.status} {b1.note}", flush=True)
            found += 1
print("found", found)
