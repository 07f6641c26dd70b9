"""evict_search alone on a pickled DAG with on_best traced: python ev.py NAME RATIO T"""
import math, pickle, sys, time
import remc
from remc.passes.evict import evict_search
from remc.ir.schedule import checkpoint_all
name, ratio, T = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
dag = pickle.load(open(f"/tmp/bound18/{name}.pkl", "rb"))
base = float(dag.cost.sum()); budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
t0 = time.perf_counter()
import remc.passes.stagesearch as ss
_imp = ss.improve
def imp(st, dl, *a, **k):
    c0 = st.total_cost()
    print(f"  {time.perf_counter() - t0:6.1f}s improve {k} from +{100 * (c0 / base - 1):.5f}%", flush=True)
    _imp(st, dl, *a, **k)
    print(f"  {time.perf_counter() - t0:6.1f}s   -> +{100 * (st.total_cost() / base - 1):.5f}%", flush=True)
ss.improve = imp
info = {}
r = evict_search(dag, budget, deadline=t0 + T, info=info,
                 on_best=lambda c: print(f"  {time.perf_counter() - t0:6.1f}s +{100 * (c / base - 1):.5f}%", flush=True))
print(remc.__file__, name, ratio, "how", r[3] if r else None, info, flush=True)
import os
if os.environ.get("SAVE"):
    pickle.dump((r[0], r[1]), open(os.environ["SAVE"], "wb"))
