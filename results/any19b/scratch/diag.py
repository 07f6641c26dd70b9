"""diag.py PKL: repair from checkpoint-all until stuck; then every move at the highest stage with its effect on each
stage over budget (is the estimate wrong, or does another stage go over?)."""
import pickle, sys, time
import numpy as np
from remc.ir.schedule import checkpoint_all
from remc.passes.stagesearch import StageState, _repair_moves, repair_steps
d = pickle.load(open(sys.argv[1], "rb")); dag, B = d["dag"], d["budget"]
st = StageState(dag, B, checkpoint_all(dag).S); t0 = time.process_time(); out = repair_steps(st, None, None)
print(out, "rows", st.rows, "cpu", round(time.process_time() - t0, 2), "cost", st.total_cost() / dag.cost.sum())
over = np.flatnonzero(st.peak > B); print("over", {int(t): int(st.peak[t] - B) for t in over})
t = int(np.argmax(st.peak))
# the profile of stage t
row = st.R[t]; P = np.flatnonzero(row)
print("stage", t, "computes", len(P), "units; preds of t", dag.preds[t].tolist(), "mem t", int(dag.mem[t]), "ws", int(dag.workspace[t]))
cands = _repair_moves(st, 1e-9)
res = []
for est, i, lo, hi, v in cands:
    rec = {}
    def acc(c0, c1, p0, p1, rec=rec):
        rec["dc"] = c1 - c0; rec["ex"] = st.excess(p0) - st.excess(p1)
        lo_ = max(lo - 1, 0); rec["d"] = {int(lo_ + k): int(p1[k] - p0[k]) for k in range(len(p0)) if p1[k] != p0[k] and (p0[k] > B or p1[k] > B)}
        return False
    st.try_move(i, lo, hi, v, acc)
    res.append((est, i, lo, hi, v, rec))
for est, i, lo, hi, v, rec in res:
    if est > 0 or rec.get("ex", 0) > 0:
        print(f"est {est:.3g} i {i} [{lo},{hi}] {v} mem {int(dag.mem[i])} dcost {rec.get('dc', 'rej')} exgain {rec.get('ex')} d {rec.get('d')}")
