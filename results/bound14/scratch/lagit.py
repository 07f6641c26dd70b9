"""gap_bound at several iteration counts: python lagit.py GRAPH RATIO IT1,IT2,..."""
import math, sys, time
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.bounds import gap_bound
g, r = sys.argv[1], float(sys.argv[2])
if g.endswith(".json"):
    dag = load_nodelink(g)
else:
    sys.path.insert(0, "tools")
    from bench_scale import _graph
    dag = _graph(g, 0, 0)
base = float(dag.cost.sum()); b = math.ceil(r * checkpoint_all(dag).peak(dag))
for it in map(int, sys.argv[3].split(",")):
    t = time.time()
    gb = gap_bound(dag, b, iterations=it)
    print(f"{g.split('/')[-1][:22]} {r} it {it} +{100*(gb.bound/base-1):.5f}% {time.time()-t:.1f}s strong {gb.strong} nested {gb.nested}", flush=True)
