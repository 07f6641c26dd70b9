"""The C=2 model from the stage search's schedule as checkmate runs it (1 worker, stall 0.5, presolve off) at CP-SAT
probing levels, alternating: c2level.py RATIO REPS LEVEL,LEVEL GRAPH...  (CPU seconds of the solve)"""
import math
import sys
import time

import remc.backends.cpsat as cpsat
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all

ratio, reps, levels = float(sys.argv[1]), int(sys.argv[2]), [int(x) for x in sys.argv[3].split(",")]
made = cpsat._solver
level = [2]


def solver(*a, **k):
    s = made(*a, **k)
    s.parameters.cp_model_probing_level = level[0]
    return s


cpsat._solver = solver
for path in sys.argv[4:]:
    dag = load_nodelink(path)
    budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
    hint = cpsat._stage_search_hint(dag, budget, None)
    out = []
    for _ in range(reps):
        for lv in levels:
            level[0] = lv
            c = time.process_time()
            s = cpsat.solve_cpsat(dag, budget, cpsat.CpSatOptions(time_limit=60, threads=1, copies=2, stall=0.5,
                                                                  presolve=False), hint=hint)
            out.append(f"L{lv} {time.process_time() - c:.2f}s {s.cost(dag):g} {s.report['solver'][8:]}")
    print(path.split("/")[-1][:40], ratio, " | ".join(out), flush=True)
