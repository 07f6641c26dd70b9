"""The stage search's improve started again from a pickled schedule, its cost after 5, 5 and 10 s more.
python restart.py GRAPH PKL"""
import pickle
import sys
import time

from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import Schedule
from remc.passes.milp_model import clean
from remc.passes.stagesearch import StageState, improve

dag = load_nodelink(sys.argv[1])
R, S, budget = pickle.load(open(sys.argv[2], 'rb'))
base = float(dag.cost.sum())
print("given", Schedule(R, S).cost(dag) / base - 1)
R2, S2 = clean(dag, R, S)
print("cleaned", Schedule(R2, S2).cost(dag) / base - 1)
t = time.perf_counter()
st = StageState(dag, budget, S)
print("stagestate", st.total_cost() / base - 1, f"{time.perf_counter() - t:.1f}s")
for secs in (5, 5, 10):
    t = time.perf_counter()
    improve(st, time.perf_counter() + secs)
    print("after", secs, st.total_cost() / base - 1, f"{time.perf_counter() - t:.1f}s", flush=True)
