"""e06fd18 (the several-children parents in every relaxation) against multi=False and the branch on small layered DAGs:
git show e06fd18:passes/bounds.py > /tmp/bound17/old_bounds.py; python find.py (fractions of the sum of costs)."""
import sys, types, numpy as np
sys.path.insert(0, "/work/wt/bound17/tests")
from _milp_dags import layered_dag
from remc.ir.schedule import checkpoint_all
from remc.passes import bounds
old = types.ModuleType("remc.passes.oldb"); old.__package__ = "remc.passes"; sys.modules["remc.passes.oldb"] = old
exec(compile(open("/tmp/bound17/old_bounds.py").read(), "old", "exec"), old.__dict__)
for n in (60, 100):
    for seed in range(6):
        dag = layered_dag(n, 10, seed)
        base = dag.cost.sum()
        for r in (0.9, 0.8):
            B = int(r * checkpoint_all(dag).peak(dag))
            o = old.gap_bound(dag, B, iterations=300).bound
            s = bounds.gap_bound(dag, B, iterations=300, multi=False).bound
            nw = bounds.gap_bound(dag, B, iterations=300)
            print(n, seed, r, f"old {o/base-1:.5f} single {s/base-1:.5f} new {nw.bound/base-1:.5f} {nw.kind} {nw.multi}", flush=True)
