import math, sys
import numpy as np
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import stagesearch as ss
dag = load_nodelink(sys.argv[1]); ca = checkpoint_all(dag).peak(dag)
S = checkpoint_all(dag).S
for r in np.arange(0.99, 0.805, -0.01):
    st = ss.StageState(dag, math.ceil(r * ca), S); out = ss.repair_steps(st, None)
    if out != "fit": break
    S = st.S
print(r, out, st.peak.max(), st.budget, "over", np.flatnonzero(st.peak > st.budget).tolist(), (st.peak[st.peak > st.budget] - st.budget).tolist())
t = int(np.argmax(st.peak)); print("stage", t, "R row", np.flatnonzero(st.R[t]).tolist())
res = np.flatnonzero(st.S[t]); print("resident", len(res), "bytes", dag.mem[res].sum(), "preds of t", dag.preds[t].tolist(), "mem t", dag.mem[t])
print(sorted([(int(dag.mem[u]), u) for u in res], reverse=True)[:20])
ex0 = st.excess(st.peak)
for g in ss._swap_groups(st, t):
    mv = ss._swap_moves(st, t, g)
    if mv is None: print(g, None); continue
    snap = st.snapshot(); ok = all(st.try_move(j, lo, hi, v, lambda *a: True) for j, lo, hi, v in mv)
    print(g, ok, "gain", ex0 - st.excess(st.peak), "new max", st.peak.max(), "at", int(np.argmax(st.peak))); st.restore(snap)
