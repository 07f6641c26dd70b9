"""The strong Lagrangian (main's reported kind) against the ancestry bound started from its multipliers, in one
process at the same moment: python compare.py STRONG_SECS ANC_SECS RATIO GRAPH... (a GRAPH 'lay:N:W:SEED' is
tools/layered.py's layered_dag(N, W, SEED), 'zoo:NAME' the zoo's model at ONNX-node granularity). One line per case, JSON."""
import json
import math
import resource
import sys
import time

import numpy as np

sys.path.insert(0, "/work/wt/bound22/tools")
from remc.ir.nodelink import load_nodelink  # noqa: E402
from remc.ir.schedule import checkpoint_all  # noqa: E402
from remc.passes import bounds as B  # noqa: E402
from remc.passes.ancestry import AncestryModel, ancestry_bound  # noqa: E402

ssecs, asecs, ratio = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
for g in sys.argv[4:]:
    if g.startswith("lay:"):
        from layered import layered_dag
        n, w, seed = map(int, g.split(":")[1:])
        dag = layered_dag(n, w, seed)
    elif g.startswith("zoo:"):  # the paper size at ONNX-node granularity, as tools/bench_scale.py builds it
        from bench_scale import _graph
        dag = _graph(g[4:], 0, 0, "fine")
    else:
        dag = load_nodelink(g)
    budget = max(1, math.ceil(ratio * checkpoint_all(dag).peak(dag)))
    base = float(dag.cost.sum())
    t = time.perf_counter()
    gb = B.gap_bound(dag, budget, iterations=2000, deadline=time.perf_counter() + ssecs)
    ts = time.perf_counter() - t
    t = time.perf_counter()
    m = AncestryModel(dag, budget)
    tb = time.perf_counter() - t
    t = time.perf_counter()
    z = np.zeros(dag.n)
    first = max(m.evaluate(np.concatenate((gb.lam, z)))[0], m.evaluate(np.concatenate((z, gb.lam)))[0]) \
        if gb.lam is not None else 0.0
    t1 = time.perf_counter() - t
    del m
    t = time.perf_counter()
    ab = ancestry_bound(dag, budget, lam=gb.lam, iterations=10**9, deadline=time.perf_counter() + asecs)
    ta = time.perf_counter() - t
    print(json.dumps(dict(graph=g.split("/")[-1], n=dag.n, ratio=ratio, budget=budget, strong_kind=gb.kind,
                          strong=100 * (gb.bound / base - 1), strong_s=round(ts, 1), strong_it=gb.iterations,
                          anc_first=100 * first / base, first_s=round(t1, 2), build_s=round(tb, 2),
                          anc=100 * (ab.bound / base - 1), anc_s=round(ta, 1), anc_it=ab.iterations, nodes=ab.nodes,
                          arcs=ab.arcs, maxrss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)),
          flush=True)
