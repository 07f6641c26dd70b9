"""The C=2 model from the stage search's schedule, without a stall, for a long limit: when (CPU s of the process)
each better cost comes.  c2long.py GRAPH RATIO SECONDS [workers]"""
import math
import sys
import time

import remc.backends.cpsat as cpsat
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import Schedule, checkpoint_all
from remc.passes.evict import evict_search
from remc.passes.milp_model import clean

path, ratio, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
workers = int(sys.argv[4]) if len(sys.argv) > 4 else 1
dag = load_nodelink(path)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
base = dag.total_cost
pct = lambda c: f"+{100 * (c / base - 1):.3f}%"  # noqa: E731
c0, w0 = time.process_time(), time.perf_counter()
found = evict_search(dag, budget, deadline=time.perf_counter() + 30)
R, S = clean(dag, found[0], found[1])
s = Schedule(R, S)
print(f"stage search {pct(s.cost(dag))} at {time.process_time() - c0:.1f} cpu", flush=True)
last = [math.inf]


def stop(cost):
    if cost < last[0] - 1e-9:
        last[0] = cost
        print(f"  {pct(cost)} at {time.process_time() - c0:.1f} cpu {time.perf_counter() - w0:.1f} s", flush=True)
    return False


out = cpsat.solve_cpsat(dag, budget, cpsat.CpSatOptions(time_limit=secs, threads=workers, copies=2, presolve=False),
                        hint=s, stop=stop)
print(f"end {pct(out.cost(dag))} {out.report['solver']} at {time.process_time() - c0:.1f} cpu", flush=True)
