"""bl.py PKL: each baseline's schedule on a captured solve's dag, at budgets from its budget upward: live peak, cost."""
import pickle
import sys

from remc.passes.strategies import best_baseline

d = pickle.load(open(sys.argv[1], "rb"))
dag, B = d["dag"], d["budget"]
for f in (1.0, 1.01, 1.02, 1.03, 1.05, 1.08, 1.12):
    s = best_baseline(dag, int(B * f))
    print(f"{f}: " + ("none" if s is None else f"{s.strategy} peak {int(s.peak(dag))} ({s.peak(dag) / B:.4f}x) cost {s.cost(dag) / dag.total_cost:.4f}"),
          flush=True)
