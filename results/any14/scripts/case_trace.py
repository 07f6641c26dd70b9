"""Trace one bench_portfolio case: approx and checkmate with per-phase progress.
usage: case_trace.py SEED MAXN K TIME_LIMIT [strategies]"""
import sys, time, json
sys.path.insert(0, "tools")
import numpy as np
from bench_portfolio import random_small
from remc.backends.strategies import make_options, solve
from remc.ir.schedule import checkpoint_all
from remc.passes.milp_model import simple_lower_bound

seed, maxn, K, tl = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
strats = sys.argv[5].split(",") if len(sys.argv) > 5 else ["approx", "checkmate"]
rng = np.random.default_rng(seed)
for k in range(K + 1):
    dag, frac = random_small(rng, maxn)
peak = checkpoint_all(dag).peak(dag)
budget = max(int(frac * peak), int(simple_lower_bound(dag)))
print(f"case {K}: n={dag.n} frac={frac:.2f} budget={budget} total={dag.total_cost}")
for s in strats:
    t0 = time.perf_counter()
    def prog(ev):
        print(f"  [{time.perf_counter()-t0:6.2f}] {ev.phase:<14} cost={ev.incumbent} bound={ev.bound}", flush=True)
    try:
        sch = solve(s, dag, budget, make_options(s, time_limit=tl, threads=1), progress=prog)
        r = sch.report
        print(f"{s}: {r.status} cost={sch.cost(dag)} {time.perf_counter()-t0:.2f}s report.seconds={r.seconds:.2f}")
        print("   extras:", {k: v for k, v in r.extras.items() if k in ("cp_sat","approx","refine","stage_search","feasibility","portfolio","rule","lp","refine_evals","refine_stopped")})
    except Exception as e:
        print(f"{s}: {type(e).__name__} {str(e)[:200]} {time.perf_counter()-t0:.2f}s")
