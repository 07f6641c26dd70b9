"""The stage search from nothing, then the C=2 model from its schedule as checkmate's CP-SAT phase runs it (1 worker,
presolve off, stall 0.5): the cost each ends at, CPU seconds, and the least stall of the remc it runs under.
    c2stall.py GRAPH RATIO   (run with main's and the branch's Python)"""
import math
import sys
import time

import remc.backends.cpsat as cpsat
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import Schedule, checkpoint_all
from remc.passes.evict import evict_search
from remc.passes.milp_model import clean

path, ratio = sys.argv[1], float(sys.argv[2])
dag = load_nodelink(path)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
pct = lambda c: f"+{100 * (c / dag.total_cost - 1):.3f}%"  # noqa: E731
found = evict_search(dag, budget, deadline=time.perf_counter() + 30)
R, S = clean(dag, found[0], found[1])
s = Schedule(R, S)
least = cpsat.stall_min(dag.n) if hasattr(cpsat, "stall_min") else cpsat.STALL_MIN
c = time.process_time()
out = cpsat.solve_cpsat(dag, budget, cpsat.CpSatOptions(time_limit=120, threads=1, copies=2, stall=0.5, presolve=False),
                        hint=s)
print(f"n={dag.n} {ratio}: least stall {least:g} s; stage search {pct(s.cost(dag))}; C=2 model {pct(out.cost(dag))} "
      f"{out.report['solver']} {time.process_time() - c:.2f} cpu", flush=True)
