"""Standalone gap_bound with and without chains on a fine zoo DAG: python quick.py resnet50 0.9 ITER SECONDS"""
import pickle, sys, time, os
sys.path.insert(0, "tools")
import numpy as np
from remc.ir.schedule import checkpoint_all
from remc.passes.bounds import gap_bound, _chains
k, ratio, it, sec = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
pk = f"/tmp/bound16/{k}.pkl"
if not os.path.exists(pk):
    from bench_scale import _graph
    pickle.dump(_graph(k, 0, 0), open(pk, "wb"))
dag = pickle.load(open(pk, "rb"))
base = float(dag.cost.sum())
extra, tree = _chains(dag)
print(k, dag.n, "units with a chain:", len(tree), "members:", sum(len(v) for v in tree.values()))
budget = int(ratio * checkpoint_all(dag).peak(dag))
for ch in (False, True):
    t0 = time.perf_counter()
    b = gap_bound(dag, budget, iterations=it, deadline=time.perf_counter() + sec, chains=ch)
    print(f"chains={ch} kind={b.kind} +{(b.bound / base - 1) * 100:.5f}% it={b.iterations} {time.perf_counter() - t0:.1f}s", flush=True)
