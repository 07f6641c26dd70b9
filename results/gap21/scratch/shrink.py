"""A bound on a copy of the DAG whose units are shrunk to a parent's bytes (a relaxation: every schedule within the
budget stays within it), so that the chains of passes/bounds.py grow through that parent.
python shrink.py GRAPH RATIO SECS ALPHA... """
import dataclasses
import math
import sys
import time

import numpy as np

from remc.backends.highs import HighsBackend
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import bounds as B
from remc.passes.coverbound import gap_cover_bound


def shrunk(dag, alpha):
    n = dag.n
    nkids = np.bincount(dag.edges[:, 0], minlength=n)
    mem = dag.mem.astype(np.int64).copy()
    last = dag.last_use
    for i in range(n):
        if dag.no_recompute[i] or mem[i] <= 0:
            continue
        ps = [p for p in dag.preds[i].tolist() if not dag.no_recompute[p] and (nkids[p] == 1 or last[p] <= i)
              and alpha * dag.mem[i] <= dag.mem[p] < dag.mem[i]]
        if ps:
            mem[i] = min(dag.mem[p] for p in ps)
    return dataclasses.replace(dag, mem=mem), int((mem < dag.mem).sum())


g, ratio, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
dag0 = load_nodelink(g)
budget = max(1, math.ceil(ratio * checkpoint_all(dag0).peak(dag0)))
base = float(dag0.cost.sum())
for a in [float(x) for x in sys.argv[4:]]:
    dag, k = (dag0, 0) if a >= 1 else shrunk(dag0, a)
    t = time.perf_counter()
    gb = B.gap_bound(dag, budget, iterations=2000, deadline=time.perf_counter() + secs)
    t1 = time.perf_counter() - t
    t = time.perf_counter()
    gc = gap_cover_bound(dag, budget, HighsBackend(), time_limit=secs, threads=1)
    print(f"alpha {a} shrunk {k}: lagrangian {gb.kind} +{100 * (gb.bound / base - 1):.4f}% ({t1:.1f}s)  "
          f"gap_cover {gc.status} +{100 * (gc.bound / base - 1):.4f}% ({time.perf_counter() - t:.1f}s)", flush=True)
