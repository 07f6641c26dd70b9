import math, sys, json
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.backends.strategies import make_options, solve
dag = load_nodelink(sys.argv[1]); r = float(sys.argv[2])
budget = math.ceil(r * checkpoint_all(dag).peak(dag))
s = solve("checkmate", dag, budget, make_options("checkmate", time_limit=120, threads=1))
rep = s.report; base = float(dag.cost.sum())
print("over %.4f%% bound %.4f%% gap %.3f src %s sec %.1f" % (100*(rep.cost/base-1), 100*(rep.bound/base-1), rep.gap, rep.bound_source, rep.seconds))
for k in ("ancestry", "ancestry_bound", "last_bound", "gap_bound", "portfolio"):
    print(k, rep.extras.get(k))
