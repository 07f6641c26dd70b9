"""Repair variants for feasibility: (a) as is, (b) moves that push no stage above the current highest peak,
(c) moves that push no stage within budget over it, (h) homotopy over budgets. python guard.py GRAPH RATIO MODE CPU"""
import math, sys, time
import numpy as np
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import stagesearch as ss
g, ratio, mode, sec = sys.argv[1], float(sys.argv[2]), sys.argv[3], float(sys.argv[4])
dag = load_nodelink(g)
ca = checkpoint_all(dag).peak(dag)
B = math.ceil(ratio * ca)

def best_repair(st, cands, floor, deadline=None, allow_worse=False):
    best, best_score = None, -math.inf if allow_worse else 0.0
    top = int(st.peak.max())
    for _, i, lo, hi, value in cands:
        score = [-math.inf]
        def measure(c0, c1, p0, p1):
            gain = st.excess(p0) - st.excess(p1)
            bad = False
            if "b" in mode and p1.max() > max(top, st.budget) and p1.max() > p0.max():
                bad = True
            if "c" in mode and ((p0 <= st.budget) & (p1 > st.budget)).any():
                bad = True
            if bad:
                score[0] = -math.inf
            else:
                score[0] = gain / max(c1 - c0, floor) if gain > 0 else (float(gain) if allow_worse else 0.0)
            return False
        st.try_move(i, lo, hi, value, measure)
        if score[0] > best_score:
            best, best_score = (i, lo, hi, value), score[0]
    if best is None:
        return False
    i, lo, hi, value = best
    return st.try_move(i, lo, hi, value, lambda *a: True)
if mode != "a":
    ss._best_repair = best_repair
c0 = time.process_time()
S = checkpoint_all(dag).S
budgets = [B]
if "h" in mode:
    budgets = [math.ceil(r * ca) for r in np.arange(0.98, ratio, -0.02)] + [B]
for b in budgets:
    st = ss.StageState(dag, b, S)
    out = "paused"
    while out == "paused" and time.process_time() - c0 < sec:
        out = ss.repair_steps(st, None, st.rows + 1000)
    print(f"budget {b} ({b/ca:.2f}) {out} cpu {time.process_time()-c0:.1f} max peak {st.peak.max()} ({st.peak.max()/b:.3f}) over {(st.peak>b).sum()} cost {st.total_cost()/dag.cost.sum():.2f}x", flush=True)
    if out != "fit":
        break
    S = st.S
