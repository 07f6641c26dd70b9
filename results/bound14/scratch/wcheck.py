"""window_bound vs the whole covering MILP and remc's MILP optimum on small layered DAGs."""
import sys
import numpy as np
sys.path.insert(0, "tests")
from _milp_dags import layered_dag
from remc.backends.highs import HighsBackend
from remc.ir.schedule import checkpoint_all
from remc.passes.coverbound import cover_bound, window_bound, build_cover, cut_windows
from remc.backends.strategies import solve_milp

for seed in range(6):
    for ratio in (0.9, 0.8):
        dag = layered_dag(30, 4, 300 + seed, skip=0.3)
        b = int(ratio * checkpoint_all(dag).peak(dag))
        base = float(dag.cost.sum())
        full = cover_bound(dag, b, HighsBackend(), time_limit=None, threads=1, depth=1, max_columns=None)
        cm = build_cover(dag, b, depth=1, max_columns=None)
        out = [f"seed {seed} r {ratio} cols {cm.model.num_col if cm else 0} full {full.bound-base:.1f}"]
        for wc in (20, 60, 150):
            for rounds in (1, 4):
                wb = window_bound(dag, b, HighsBackend(), time_limit=None, threads=1, depth=1, window_columns=wc, rounds=rounds)
                out.append(f"w{wc}r{rounds} {wb.bound-base:.1f} ({wb.note})")
        try:
            opt = solve_milp(dag, b, time_limit=30, gap=0.0, threads=1).report
            out.append(f"opt {opt.cost-base:.1f} {opt.status}")
        except Exception as e:
            out.append(str(e)[:40])
        print(" | ".join(out), flush=True)
