"""The stage search from nothing (evict_search) on one case: each producer's time and cost, improve's time and
cost, against the case's optimum.   python stage.py GRAPH RATIO"""
import math
import sys
import time

import remc.passes.evict as ev
import remc.passes.stagesearch as ss
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all

dag = load_nodelink(sys.argv[1])
budget = math.ceil(checkpoint_all(dag).peak(dag) * float(sys.argv[2]))
base = float(dag.total_cost)
T = time.perf_counter()
for cls, meth in [(ev.EvictRun, "advance"), (ev._RepairRun, "advance")]:
    f = getattr(cls, meth)
    def w(self, *a, _f=f, **k):
        t = time.perf_counter()
        out = _f(self, *a, **k)
        r = getattr(self, "result", None)
        c = None if r is None else (float(r.total_cost()) / base - 1) * 100
        print(f"  {getattr(self, 'name', type(self).__name__)} advance {time.perf_counter() - t:.3f} s -> done={out} "
              f"cost {'-' if c is None else f'+{c:.3f}%'}")
        return out
    setattr(cls, meth, w)
fi = ss.improve
def imp(st, deadline, **k):
    t = time.perf_counter()
    c0 = (float(st.total_cost()) / base - 1) * 100
    out = fi(st, deadline, **k)
    print(f"  improve{k} {time.perf_counter() - t:.3f} s: +{c0:.3f}% -> +{(float(st.total_cost()) / base - 1) * 100:.3f}%")
    return out
ss.improve = imp
cpu = time.process_time()
r = ev.evict_search(dag, budget, deadline=time.perf_counter() + 20)
print(f"total {time.perf_counter() - T:.3f} s wall {time.process_time() - cpu:.3f} cpu; how {r[3]}")
