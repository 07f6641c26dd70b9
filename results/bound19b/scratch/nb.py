"""Neighbourhood of units: python nb.py NAME unitname..."""
import pickle, sys
import numpy as np
dag = pickle.load(open(f"/tmp/bound18/{sys.argv[1]}.pkl", "rb"))
idx = {n: i for i, n in enumerate(dag.names)}
for nm in sys.argv[2:]:
    i = idx[nm]
    print(f"{i} {nm} cost {dag.cost[i]:.4g} mem {dag.mem[i]} last {dag.last_use[i]} nr {dag.no_recompute[i]} succs {dag.succs[i].tolist()}")
    for p in dag.preds[i].tolist():
        print(f"   pred {p} {dag.names[p]} cost {dag.cost[p]:.4g} mem {dag.mem[p]} last {dag.last_use[p]} succs {dag.succs[p].tolist()}")
