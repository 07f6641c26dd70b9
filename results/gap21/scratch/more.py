"""From a pickled schedule: approx's local search (passes/refine.py) for SECS, or the stage search's improve.
python more.py GRAPH PKL SECS refine|improve"""
import pickle
import sys
import time

from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import Schedule

g, pk, secs, how = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
dag = load_nodelink(g)
R, S, budget = pickle.load(open(pk, "rb"))
base = float(dag.cost.sum())
c0 = Schedule(R, S).cost(dag)
t = time.perf_counter()
if how == "refine":
    from remc.passes.refine import Refiner
    rf = Refiner(dag, budget, deadline=time.perf_counter() + secs)
    p = rf.improve(rf.evaluate(S))
    c = p.cost
else:
    from remc.passes.stagesearch import StageState, improve
    st = StageState(dag, budget, S)
    improve(st, time.perf_counter() + secs, exhaustive=(how == "whole"))
    c = st.total_cost()
print(how, f"from +{100 * (c0 / base - 1):.4f}% to +{100 * (c / base - 1):.4f}% in {time.perf_counter() - t:.1f}s", flush=True)
