"""gap_bound on a zoo graph with upper = the schedule's overhead: python lagup.py MODEL RATIO OVER_PCT IT1,IT2"""
import math, sys, time
sys.path.insert(0, "tools")
from bench_scale import _graph
from remc.ir.schedule import checkpoint_all
from remc.passes.bounds import gap_bound
g, r, over = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
dag = _graph(g, 0, 0)
base = float(dag.cost.sum()); b = math.ceil(r * checkpoint_all(dag).peak(dag))
for it in map(int, sys.argv[4].split(",")):
    t = time.time()
    gb = gap_bound(dag, b, iterations=it, upper=base * (1 + over / 100))
    print(f"{g} {r} it {it} upper +{over}% -> +{100*(gb.bound/base-1):.5f}% {time.time()-t:.1f}s strong {gb.strong} nested {gb.nested}", flush=True)
