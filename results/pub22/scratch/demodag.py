"""README's demo (remc demo) with checkmate's (dag, budget) pickled to /tmp/pub22/demo_dag.pkl and its report printed."""
import pickle

import remc.backends.strategies as strategies
from remc.demo import run_demo

real = strategies._checkmate


def spy(dag, budget, o, progress, start=None):
    pickle.dump((dag, budget), open("/tmp/pub22/demo_dag.pkl", "wb"))
    s = real(dag, budget, o, progress, start)
    print("report", s.report.status, s.report.gap, {k: s.report.extras.get(k) for k in ("cp_sat", "cover_bound")},
          flush=True)
    return s


import dataclasses

strategies.REGISTRY["checkmate"] = dataclasses.replace(strategies.REGISTRY["checkmate"], fn=spy)
rep = run_demo()
print(rep["solver_status"])
