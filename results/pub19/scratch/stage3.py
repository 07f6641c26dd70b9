"""The C=2 model (checkmate's CP-SAT phase settings) from the stage search's schedule after its improve without
repairs only, against after its whole improve; CPU seconds.  stage3.py GRAPH RATIO"""
import math
import sys
import time

import remc.backends.cpsat as cpsat
import remc.passes.stagesearch as ss
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import Schedule, checkpoint_all
from remc.passes.evict import evict_search
from remc.passes.milp_model import clean

path, ratio = sys.argv[1], float(sys.argv[2])
dag = load_nodelink(path)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
base = dag.total_cost
pct = lambda c: f"+{100 * (c / base - 1):.3f}%"  # noqa: E731
orig = ss.improve
res = {}
for mode in ("full", "norepair"):
    if mode == "norepair":
        ss.improve = lambda st, dl, repairs=True, **k: None if repairs else orig(st, dl, repairs=False, **k)
    c = time.process_time()
    found = evict_search(dag, budget, deadline=time.perf_counter() + 30)
    R, S = clean(dag, found[0], found[1])
    s = Schedule(R, S)
    sc = time.process_time() - c
    c = time.process_time()
    out = cpsat.solve_cpsat(dag, budget, cpsat.CpSatOptions(time_limit=60, threads=1, copies=2, stall=0.5, presolve=False), hint=s)
    print(f"{mode}: stage search {pct(s.cost(dag))} {sc:.2f} cpu; C=2 model {pct(out.cost(dag))} {out.report['solver']} "
          f"{time.process_time() - c:.2f} cpu", flush=True)
