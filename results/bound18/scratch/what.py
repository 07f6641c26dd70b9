"""What a saved schedule recomputes: python what.py NAME SCHEDULE.pkl"""
import pickle
import sys

import numpy as np

dag = pickle.load(open(f"/tmp/bound18/{sys.argv[1]}.pkl", "rb"))
R, S = pickle.load(open(sys.argv[2], "rb"))
base = float(dag.cost.sum())
rec = R.sum(axis=0) - 1
over = float(rec @ dag.cost)
print(f"overhead +{100 * over / base:.5f}%, {int((rec > 0).sum())} units recomputed, {int(rec.sum())} recomputations")
by = {}
for i in np.flatnonzero(rec > 0):
    op = dag.names[i].split("/")[-1]
    by.setdefault(op, [0, 0.0])
    by[op][0] += int(rec[i]); by[op][1] += float(rec[i] * dag.cost[i])
for op, (k, c) in sorted(by.items(), key=lambda kv: -kv[1][1])[:15]:
    print(f"  {op:30s} x{k:4d} {100 * c / over:5.1f}% of overhead")
for i in sorted(np.flatnonzero(rec > 0), key=lambda i: -rec[i] * dag.cost[i])[:25]:
    print(f"  {dag.names[i]:45s} x{rec[i]} cost {dag.cost[i]:.3g} ({100 * rec[i] * dag.cost[i] / over:.1f}%) mem {dag.mem[i]} "
          f"preds {[dag.names[p] for p in dag.preds[i]]}")
