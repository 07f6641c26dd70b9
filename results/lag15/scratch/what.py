"""What approx's schedule recomputes on a pickled piece at RATIO (A s): each recomputed unit's name, cost share of the
overhead, and times. python what.py PIECE RATIO A"""
import math, pickle, sys
from collections import Counter
from remc.backends.strategies import make_options, solve
from remc.ir.schedule import checkpoint_all
name, ratio, A = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
dag = pickle.load(open(f"/tmp/lag15/{name}.pkl", "rb"))
base = float(dag.cost.sum()); budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
s = solve("approx", dag, budget, make_options("approx", time_limit=A, threads=1))
rec = s.R.sum(axis=0) - 1
over = float(rec @ dag.cost)
print(f"{name} {ratio}: overhead +{100*over/base:.4f}%, {int((rec > 0).sum())} units recomputed")
for i in sorted(range(dag.n), key=lambda i: -rec[i] * dag.cost[i]):
    if rec[i] > 0:
        preds = [dag.names[p] for p in dag.preds[i]]
        print(f"  {dag.names[i]:40s} x{rec[i]} cost {dag.cost[i]:.3g} ({100*rec[i]*dag.cost[i]/over:.1f}% of overhead) mem {dag.mem[i]} preds {preds}")
