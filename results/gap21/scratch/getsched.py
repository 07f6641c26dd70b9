"""checkmate on GRAPH at RATIO for SECS; pickles (R, S, report) to OUT. python getsched.py GRAPH RATIO SECS OUT [strategy]"""
import math
import pickle
import sys

from remc.backends.strategies import make_options, solve
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all

g, ratio, secs, out = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
strat = sys.argv[5] if len(sys.argv) > 5 else "checkmate"
dag = load_nodelink(g)
budget = max(1, math.ceil(ratio * checkpoint_all(dag).peak(dag)))
s = solve(strat, dag, budget, make_options(strat, time_limit=secs, threads=1))
rep = s.report
base = float(dag.cost.sum())
print(strat, rep.status, f"+{100 * (rep.cost / base - 1):.4f}%", "bound", f"+{100 * (rep.bound / base - 1):.4f}%",
      rep.bound_source, f"gap {rep.gap:.4f}", f"{rep.seconds:.1f}s", {k: v for k, v in rep.extras.items() if isinstance(v, str)})
pickle.dump((s.R, s.S, budget), open(out, "wb"))
