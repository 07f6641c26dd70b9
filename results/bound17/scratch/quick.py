"""Standalone gap_bound on a pickled DAG (dump.py): python quick.py NAME RATIO ITER SECONDS [UPPER_PCT] -- plain
chains (multi=False) against chains with parents read before i (multi=True)."""
import pickle, sys, time
import numpy as np
from remc.ir.schedule import checkpoint_all
from remc.passes.bounds import gap_bound, _chains
k, ratio, it, sec = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
dag = pickle.load(open(f"/tmp/bound17/{k}.pkl", "rb"))
base = float(dag.cost.sum())
upper = None if len(sys.argv) < 6 else base * (1 + float(sys.argv[5]) / 100)
budget = int(ratio * checkpoint_all(dag).peak(dag))
for multi in (False, True):
    t0 = time.perf_counter()
    b = gap_bound(dag, budget, iterations=it, deadline=time.perf_counter() + sec, multi=multi, upper=upper)
    print(f"{k} {ratio} multi={multi} kind={b.kind} +{(b.bound / base - 1) * 100:.5f}% it={b.iterations} {time.perf_counter() - t0:.1f}s", flush=True)
