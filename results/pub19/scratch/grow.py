"""Which units the bound rounds grow, against the units the optimum (cached by proof.py) computes twice, and the
covering MILP's decoded recomputations; then one cutoff round with copies grown up front on those sets."""
import math
import pickle
import sys
import time
from pathlib import Path

import numpy as np

import remc.backends.cpsat as cpsat
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all

path, ratio = sys.argv[1], float(sys.argv[2])
dag = load_nodelink(path)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
best = pickle.loads(Path(f"/tmp/pub19/opt_{Path(path).stem}_{ratio}.pkl").read_bytes())
R = np.asarray(best.R, bool)
twice = {v for v in range(dag.n) if R[:, v].sum() > 1}
print("optimum recomputes", sorted(twice), "counts", sorted(int(R[:, v].sum()) for v in twice))
ob = cpsat._bound_round
grown = []


def br(dag, budget, copies, *a, **k):
    c = time.process_time()
    out = ob(dag, budget, copies, *a, **k)
    grown.append(sorted(out[1]))
    print(f"   round: sum copies {sum(copies)} status {out[0].status} grow {sorted(out[1])} {time.process_time() - c:.2f} cpu", flush=True)
    return out


cpsat._bound_round = br
opts = cpsat.CpSatOptions(time_limit=60, threads=1, copies=2, presolve=False)
c = time.process_time()
res = cpsat.cpsat_bound(dag, budget, opts, hint=best, stop_at=best.cost(dag), quick=3)
print(f"default: {res.status} {time.process_time() - c:.2f} cpu")
allg = set().union(*map(set, grown))
print("grown in all", sorted(allg), "of them recomputed by the optimum", sorted(allg & twice))
n = dag.n
for name, units in (("final set up front", allg), ("optimum's recomputed +3", twice)):
    copies = [1 if dag.no_recompute[v] else max(1, min(2 + (3 if v in units else 0), n - v)) for v in range(n)]
    c = time.process_time()
    out, g = ob(dag, budget, copies, opts, best, best.cost(dag), False, None)
    print(f"{name}: one round {out.status} grow {sorted(g)} {time.process_time() - c:.2f} cpu", flush=True)
