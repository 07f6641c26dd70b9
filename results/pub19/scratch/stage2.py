"""The C=2 model (checkmate's CP-SAT phase settings) from the stage search's schedule before its improve
(improve_start) against from its end; CPU seconds.  stage2.py GRAPH RATIO  (GRAPH may be n:seed)"""
import math
import sys
import time

import remc.backends.cpsat as cpsat
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import Schedule, checkpoint_all, solve_rs
from remc.passes.evict import evict_search
from remc.passes.milp_model import clean

path, ratio = sys.argv[1], float(sys.argv[2])
dag = load_nodelink(path)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
base = dag.total_cost
pct = lambda c: f"+{100 * (c / base - 1):.3f}%"  # noqa: E731
info = {}
c = time.process_time()
found = evict_search(dag, budget, deadline=time.perf_counter() + 30, info=info)
R, S = clean(dag, found[0], found[1])
full = Schedule(R, S)
print(f"stage search: {pct(full.cost(dag))} {time.process_time() - c:.2f} cpu", flush=True)
R0, S0 = solve_rs(dag, info["improve_start"])
R0, S0 = clean(dag, R0, S0)
pre = Schedule(R0, S0)
print(f"before improve: {pct(pre.cost(dag))} peak ok {pre.peak(dag) <= budget}", flush=True)
for name, h in (("end", full), ("before improve", pre)):
    c = time.process_time()
    out = cpsat.solve_cpsat(dag, budget, cpsat.CpSatOptions(time_limit=60, threads=1, copies=2, stall=0.5, presolve=False), hint=h)
    print(f"   C=2 model from {name}: {pct(out.cost(dag))} {out.report['solver']} {time.process_time() - c:.2f} cpu", flush=True)
