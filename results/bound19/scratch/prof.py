# (the DAGs pickled by session 18 under /tmp/bound18: tools/bench_scale.py _graph, paper size, fine)
import pickle, sys
import numpy as np

from remc.passes.bounds import _gaps
dag = pickle.load(open(f"/tmp/bound18/{sys.argv[1]}.pkl", "rb"))
ratio = float(sys.argv[2])
n = dag.n
print("n", n, "constant", dag.constant)
fixed = dag.constant + dag.kept_before + dag.kept_first + dag.workspace + dag.mem
fixed = fixed + np.bincount(dag.edges[:, 1], weights=dag.mem[dag.edges[:, 0]].astype(np.float64), minlength=n).round().astype(np.int64)
unit, lo, hi = _gaps(dag)
load = np.zeros(n + 1, dtype=np.int64)
np.add.at(load, lo, dag.mem[unit]); np.add.at(load, hi + 1, -dag.mem[unit])
tot = fixed + np.cumsum(load)[:n]
peak = tot.max()
import json
from remc.ir.schedule import checkpoint_all, memory_profile
budget = int(ratio * checkpoint_all(dag).peak(dag))
ex = tot - budget
over = np.flatnonzero(ex > 0)
print("budget", budget, "peak(tot)", peak, "over stages", len(over), "range", over.min(), over.max())
U = 402653184
for t in over[:: max(1, len(over)//60)]:
    print(t, dag.names[t], round(ex[t]/U, 3))
if len(sys.argv) > 3:
    R, S = pickle.load(open(sys.argv[3], "rb"))
    P = memory_profile(dag, R, S)
    rec = R.sum(axis=0) - 1
    for i in np.flatnonzero(rec > 0):
        ts = np.flatnonzero(R[:, i])
        if dag.mem[i] >= U//2:
            print(dag.names[i], i, "computed at stages", ts, "reads", dag.succs[i], "mem", dag.mem[i])
    slack = budget - P.max(axis=1)
    print("tight stages (slack < 1% U):", np.flatnonzero(slack < U/100)[:80])
