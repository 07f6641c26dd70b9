"""What a schedule recomputes: python anat.py GRAPH PKL"""
import pickle
import sys

import numpy as np

from remc.ir.nodelink import load_nodelink

dag = load_nodelink(sys.argv[1])
R, S, budget = pickle.load(open(sys.argv[2], "rb"))
R = np.asarray(R, bool)
n = dag.n
extra = R.sum(0) - 1
rec = np.flatnonzero(extra > 0)
par = [[] for _ in range(n)]
ch = [[] for _ in range(n)]
for u, v in dag.edges:
    par[v].append(int(u)); ch[u].append(int(v))
print("recomputed units", len(rec), "recomputations", int(extra.sum()), "overhead cost", float((extra * dag.cost).sum()),
      "ideal", float(dag.cost.sum()))
# a recomputation at stage t of unit i is "read directly" if some child of i is computed at stage t (after it) or
# at stage t itself as the stage's unit... classify: the recomputed copy is read by a recomputation of a child
# (cascade) or by a frontier unit
direct = cascade = 0
for t in range(n):
    for i in np.flatnonzero(R[t, :t]):
        kids = [c for c in ch[i] if R[t, c] and c > i]
        if any(c == t for c in kids):
            direct += 1
        elif kids:
            cascade += 1
        else:
            direct += 1  # read at a later stage
print("recomputations read by the stage's unit or later:", direct, " only feeding other recomputations in the stage:", cascade)
mem = dag.mem if hasattr(dag, 'mem') else None
for i in rec[:80]:
    print(i, "x", int(extra[i]), "cost", dag.cost[i], "M", int(dag.mem[i]), "last_use", int(dag.last_use[i]), "parents", par[i],
          "stages", np.flatnonzero(R[:, i]).tolist())
