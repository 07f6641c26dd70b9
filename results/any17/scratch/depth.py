"""Repair from checkpoint-all: per fallback step (TOP_K failed), the rank of the chosen candidate among the rest and
how many there were. python depth.py GRAPH RATIO CPU"""
import math, sys, time, collections
import numpy as np
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import stagesearch as ss
g, ratio, sec = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
dag = load_nodelink(g)
B = math.ceil(ratio * checkpoint_all(dag).peak(dag))
st = ss.StageState(dag, B, checkpoint_all(dag).S)
orig = ss._best_repair
log = []
def br(st_, cands, floor, deadline=None, allow_worse=False):
    if allow_worse or len(cands) <= ss.TOP_K:
        return orig(st_, cands, floor, deadline, allow_worse)
    # the fallback: score each
    scores = []
    r0 = st_.rows
    for k, (_, i, lo, hi, value) in enumerate(cands):
        sc = [-math.inf]
        def measure(c0, c1, p0, p1):
            gain = st_.excess(p0) - st_.excess(p1)
            sc[0] = gain / max(c1 - c0, floor) if gain > 0 else 0.0
            return False
        st_.try_move(i, lo, hi, value, measure)
        scores.append(sc[0])
    s = np.array(scores)
    helping = np.flatnonzero(s > 0)
    log.append((len(cands), int(np.argmax(s)) if len(helping) else -1, int(helping[0]) if len(helping) else -1, st_.rows - r0,
                float(s.max()), float(s[helping[0]]) if len(helping) else 0.0))
    if not len(helping):
        return False
    k = int(np.argmax(s)); _, i, lo, hi, value = cands[k]
    return st_.try_move(i, lo, hi, value, lambda *a: True)
ss._best_repair = br
c0 = time.process_time(); out = "paused"
while out == "paused" and time.process_time() - c0 < sec:
    out = ss.repair_steps(st, None, st.rows + 2000)
print(out, f"cpu {time.process_time()-c0:.1f} rows {st.rows} overhead {100*(st.total_cost()/dag.cost.sum()-1):.1f}%")
print("fallback steps", len(log), "rows in them", sum(l[3] for l in log))
for l in log[:10] + log[-10:]:
    print(l)
a = np.array([l[1] for l in log]); f = np.array([l[2] for l in log])
print("argmax rank quantiles", np.percentile(a[a >= 0], [50, 90, 99, 100]) if (a >= 0).any() else None)
print("first helping quantiles", np.percentile(f[f >= 0], [50, 90, 99, 100]) if (f >= 0).any() else None)
print("none helping", int((a < 0).sum()))
