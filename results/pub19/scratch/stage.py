"""Where the stage search from nothing spends its time on one case: first fit, then improve; and the C=2 model from
its first fit against from its end (CPU seconds, 1 worker, presolve off, as checkmate's CP-SAT phase)."""
import math
import sys
import time

import remc.backends.cpsat as cpsat
from remc.backends.strategies import _cover_first  # noqa: F401
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import Schedule, checkpoint_all
from remc.passes.evict import evict_search
from remc.passes.milp_model import clean

path, ratio = sys.argv[1], float(sys.argv[2])
dag = load_nodelink(path)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
base = dag.total_cost
pct = lambda c: f"+{100 * (c / base - 1):.3f}%"  # noqa: E731
for share in (0.0, 0.1, 1.0):
    info = {}
    c = time.process_time()
    found = evict_search(dag, budget, deadline=time.perf_counter() + 30, improve_share=share, info=info)
    R, S = clean(dag, found[0], found[1])
    s = Schedule(R, S)
    print(f"improve_share {share}: {pct(s.cost(dag))} {time.process_time() - c:.2f} cpu, {info}, how {found[3]}", flush=True)
    c = time.process_time()
    out = cpsat.solve_cpsat(dag, budget, cpsat.CpSatOptions(time_limit=60, threads=1, copies=2, stall=0.5, presolve=False), hint=s)
    print(f"   C=2 model from it: {pct(out.cost(dag))} {out.report['solver']} {time.process_time() - c:.2f} cpu", flush=True)
