"""Which side is loose: the covering model's LP (and MILP) against the Lagrangian on one graph.
python lpside.py GRAPH RATIO SECONDS [what...]   what: lp (cover_bound depth-1 LP), milp, gaplp, gapmilp, lag"""
import math
import sys
import time

import numpy as np

from remc.backends.highs import HighsBackend, solve_highs
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import coverbound as cbm

g, ratio, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
what = sys.argv[4:] or ["lp"]
dag = load_nodelink(g)
budget = max(1, math.ceil(ratio * checkpoint_all(dag).peak(dag)))
base = float(dag.cost.sum())
pct = lambda v: f"+{100 * (v / base - 1):.4f}%"  # noqa: E731
print(g.split('/')[-1], ratio, "budget", budget, "units", dag.n, flush=True)
if "lag" in what:
    from remc.passes.bounds import gap_bound
    t = time.perf_counter()
    gb = gap_bound(dag, budget, iterations=2000, deadline=time.perf_counter() + secs)
    print("lagrangian", gb.kind, pct(gb.bound), f"{time.perf_counter() - t:.1f}s", flush=True)
for depth in (1,):
    if "lp" in what or "milp" in what:
        t = time.perf_counter()
        cm = cbm.build_cover(dag, budget, depth=depth, max_columns=None, kept=False)
        model, cmap = cbm._merged(cm)
        print(f"depth {depth}: raw cols {cm.model.num_col} merged {model.num_col} rows {model.num_row} nnz {model.A.nnz} "
              f"build {time.perf_counter() - t:.1f}s", flush=True)
        for integral in ([False] if "lp" in what else []) + ([True] if "milp" in what else []):
            t = time.perf_counter()
            res = solve_highs(model, integral=integral, time_limit=secs, threads=1, gap=1e-6, isolated=False)
            b = res.bound
            v = base + max(b, 0) * cm.cost_unit * (1 - 1e-6) if math.isfinite(b) else -math.inf
            print(f"  {'MILP' if integral else 'LP'}: {res.status} bound {pct(v) if math.isfinite(v) else v} "
                  f"obj {res.objective * cm.cost_unit:.1f} {time.perf_counter() - t:.1f}s", flush=True)
if "gapmilp" in what:
    t = time.perf_counter()
    r = cbm.gap_cover_bound(dag, budget, HighsBackend(), time_limit=secs, threads=1)
    print("gap_cover MILP", r.status, pct(r.bound), r.columns, f"{time.perf_counter() - t:.1f}s", flush=True)
