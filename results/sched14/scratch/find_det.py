"""Cases where evict_search's schedule depends on the clock's speed (fake clocks): python find_det.py"""
import sys
import numpy as np
sys.path.insert(0, "/work/wt/sched14/tests")
from _milp_dags import layered_dag
from remc.ir.schedule import checkpoint_all
from remc.passes import evict, stagesearch


class Fake:
    def __init__(self, step):
        self.t, self.step = 0.0, step
    def perf_counter(self):
        self.t += self.step
        return self.t


def run(dag, budget, step):
    f = Fake(step)
    evict.time, stagesearch.time = f, f
    out = evict.evict_search(dag, budget, deadline=1e9)
    return None if out is None else (out[1].tobytes(), float(out[0].sum(0) @ dag.cost), out[3])


for seed in range(60):
    for n, w in ((40, 5), (60, 6)):
        dag = layered_dag(n, w, seed, skip=0.3)
        peak = checkpoint_all(dag).peak(dag)
        for r in np.arange(0.4, 0.85, 0.05):
            b = int(r * peak)
            if any(evict.evict_schedule(dag, b, weight=a, closure=c, net=e) is not None for a, c, e in evict.VARIANTS):
                continue
            a1, a2 = run(dag, b, 0.002), run(dag, b, 0.2)
            print(seed, n, w, round(r, 2), a1 and a1[1:], a2 and a2[1:], "DIFF" if (a1 is None) != (a2 is None) or (a1 and a1[0] != a2[0]) else "", flush=True)
