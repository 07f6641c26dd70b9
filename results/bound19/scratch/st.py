# (the DAGs pickled by session 18 under /tmp/bound18: tools/bench_scale.py _graph, paper size, fine)
import pickle, sys
import numpy as np
from remc.passes.bounds import _gaps
from remc.ir.schedule import checkpoint_all, memory_profile
dag = pickle.load(open(f"/tmp/bound18/{sys.argv[1]}.pkl", "rb")); ratio = float(sys.argv[2])
R, S = pickle.load(open(sys.argv[3], "rb"))
budget = int(ratio * checkpoint_all(dag).peak(dag))
U = 402653184
P = memory_profile(dag, R, S)
slack = budget - P.max(axis=1)
print("min slack U", slack.min()/U, "argmin", slack.argmin(), dag.names[slack.argmin()])
o = np.argsort(slack)[:15]
print([(int(t), dag.names[t], round(slack[t]/U, 4)) for t in o])
unit, lo, hi = _gaps(dag)
for t in [int(x) for x in sys.argv[4:]]:
    sp = (lo <= t) & (hi >= t)
    by = {}
    for g in np.flatnonzero(sp):
        i = unit[g]; op = dag.names[i].split("/", 1)[-1] if dag.names[i].startswith("h.") else dag.names[i]
        d = by.setdefault(op, [0, 0, 0.0, 0])
        d[0] += 1; d[1] += int(S[t+1, i]); d[2] += dag.mem[i] / U; d[3] = dag.cost[i]
    print("stage", t, dag.names[t], "slack U", slack[t]/U)
    for op, (k, kept, mem, c) in sorted(by.items(), key=lambda kv: -kv[1][2]):
        print(f"   {op:40s} gaps {k:3d} kept {kept:3d} memU {mem:7.3f} cost {c:.3g} no_rec {dag.no_recompute[np.flatnonzero([dag.names[j].endswith(op) for j in range(dag.n)])[0]]}")
