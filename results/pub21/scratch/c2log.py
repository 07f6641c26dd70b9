"""The C=2 model from the stage search's schedule as checkmate runs it (1 worker, stall 0.5, presolve off), with
CP-SAT's log and a given cp_model_probing_level: c2log.py GRAPH RATIO LEVEL"""
import math
import sys
import time

import remc.backends.cpsat as cpsat
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all

dag = load_nodelink(sys.argv[1])
budget = math.ceil(checkpoint_all(dag).peak(dag) * float(sys.argv[2]))
level = int(sys.argv[3])
hint = cpsat._stage_search_hint(dag, budget, None)
made = cpsat._solver


def solver(*a, **k):
    s = made(*a, **k)
    s.parameters.log_search_progress = True
    s.parameters.cp_model_probing_level = level
    return s


cpsat._solver = solver
c = time.process_time()
s = cpsat.solve_cpsat(dag, budget, cpsat.CpSatOptions(time_limit=60, threads=1, copies=2, stall=0.5, presolve=False),
                      hint=hint)
print("C=2", s.cost(dag), s.report["solver"], f"{time.process_time() - c:.2f} cpu")
