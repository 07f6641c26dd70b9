"""Anatomy of a proven-optimal schedule: which recomputations serve a read directly and which only feed another
recomputation in the same stage (parents), and the cost of each kind; the retention-gap bound beside it.

    python results/gap13/scripts/anatomy.py GRAPH RATIO [SECONDS]
"""
import math
import sys

import numpy as np

from remc.backends.strategies import make_options, solve
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.bounds import gap_bound

g, r = sys.argv[1], float(sys.argv[2])
secs = float(sys.argv[3]) if len(sys.argv) > 3 else 120
dag = load_nodelink(g)
base = float(dag.cost.sum())
b = math.ceil(r * checkpoint_all(dag).peak(dag))
s = solve("checkmate", dag, b, make_options("checkmate", time_limit=secs, threads=1, gap=0.0))
print("status", s.report.status, f"cost +{100*(s.cost(dag)/base-1):.3f}%", "bound", s.report.bound_source,
      f"+{100*(s.report.bound/base-1):.3f}%")
gb = gap_bound(dag, b, iterations=2000)
print(f"retention gaps +{100*(gb.bound/base-1):.3f}%")
R, S = s.R, s.S
n = dag.n
direct, feed = 0.0, 0.0
nd = nf = 0
for t in range(n):
    for i in np.flatnonzero(R[t, :t]):
        # i is needed in stage t directly: unit t reads it, or it is kept into stage t+1
        users_in_stage = [c for c in dag.succs[i] if c <= t and R[t, c]]
        if t in dag.succs[i] or (t + 1 < n and S[t + 1, i]):
            direct += dag.cost[i]; nd += 1
        else:
            feed += dag.cost[i]; nf += 1
print(f"recomputations: direct {nd} cost {100*direct/base:.3f}%, feeding other recomputations only {nf} cost {100*feed/base:.3f}%")
