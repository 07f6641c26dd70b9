"""improve() from a saved start: python imp.py GRAPH RATIO START.npz KEY SECONDS CAP   (CAP -1: main's)"""
import math, sys, time
import numpy as np
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
import remc.passes.stagesearch as ss
g, ratio, npz, key, secs, cap = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5]), int(sys.argv[6])
dag = load_nodelink(g)
budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
base = float(dag.cost.sum())
S = np.load(npz)[key]
orig = ss._best_repair
if False:
    def capped(st, cands, floor, deadline=None, allow_worse=False):
        return orig(st, cands[:cap], floor, deadline, allow_worse)
    ss._best_repair = capped
st = ss.StageState(dag, budget, S)
t0 = time.perf_counter()
rows = [0]
o_set = ss.StageState._set_row
def counted(self, t):
    rows[0] += 1
    return o_set(self, t)
ss.StageState._set_row = counted
last = [st.total_cost()]
o_try = ss.StageState.try_move
def tm(self, *a):
    r = o_try(self, *a)
    c = self.total_cost()
    if self.peak.max() <= self.budget and c < last[0] - 1e-9 and self is st:
        last[0] = c
        print(f"{time.perf_counter()-t0:6.1f}s rows={rows[0]} evals={self.evals} +{100*(c/base-1):.3f}%", flush=True)
    return r
ss.StageState.try_move = tm
if len(sys.argv) > 7:
    ss.improve(st, time.perf_counter() + secs, repairs=False); print("fit-only done", time.perf_counter()-t0, st.total_cost()/base)
ss.improve(st, time.perf_counter() + secs)
print(f"END {time.perf_counter()-t0:.1f}s rows={rows[0]} evals={st.evals} +{100*(st.total_cost()/base-1):.3f}% peak_ok={st.peak.max()<=budget}")
