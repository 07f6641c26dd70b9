"""kick.py PKL [K] [ROWS]: repair from checkpoint-all until stuck; then for the K moves at the highest stage that lose
the least excess (measured), apply it and resume the repair for ROWS more rows: does it fit?"""
import pickle, sys, time
import numpy as np
from remc.ir.schedule import checkpoint_all
from remc.passes.stagesearch import StageState, _repair_moves, repair_steps
d = pickle.load(open(sys.argv[1], "rb")); dag, B = d["dag"], d["budget"]
K = int(sys.argv[2]) if len(sys.argv) > 2 else 8; ROWS = int(sys.argv[3]) if len(sys.argv) > 3 else 6000
st = StageState(dag, B, checkpoint_all(dag).S); t0 = time.process_time(); out = repair_steps(st, None, None)
print(out, "rows", st.rows, "cpu", round(time.process_time() - t0, 2), "cost", round(st.total_cost() / dag.cost.sum(), 4), "excess", st.excess(st.peak))
cands = _repair_moves(st, 1e-9)
meas = []
for est, i, lo, hi, v in cands:
    rec = {}
    def acc(c0, c1, p0, p1, rec=rec):
        rec["ex"] = st.excess(p0) - st.excess(p1); rec["dc"] = c1 - c0; return False
    st.try_move(i, lo, hi, v, acc)
    if "ex" in rec:
        meas.append((rec["ex"], -rec["dc"], i, lo, hi, v))
meas.sort(reverse=True)
snap = st.snapshot(); r0 = st.rows
for ex, ndc, i, lo, hi, v in meas[:K]:
    st.restore(snap); st.rows = r0; t1 = time.process_time()
    st.try_move(i, lo, hi, v, lambda *a: True)
    e1 = st.excess(st.peak); over = {int(t): int(st.peak[t] - B) for t in np.flatnonzero(st.peak > B)}
    o2 = repair_steps(st, None, st.rows + ROWS)
    print(f"kick i {i} [{lo},{hi}] {v} exgain {ex} dcost {-ndc:.3f} -> excess {e1} over {over} -> {o2} rows {st.rows - r0} cpu {time.process_time() - t1:.2f} cost {st.total_cost() / dag.cost.sum():.4f} excess {st.excess(st.peak)}", flush=True)
