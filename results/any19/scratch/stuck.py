"""stuck.py PKL: the repair from checkpoint-all on a captured solve, to its end; where it is stuck: the stages over the
budget, what the highest one holds (resident, computed there) and the repair's moves there."""
import pickle, sys
import numpy as np
from remc.ir.schedule import checkpoint_all
from remc.passes.stagesearch import StageState, _repair_moves, repair_steps
d = pickle.load(open(sys.argv[1], "rb")); dag, B = d["dag"], d["budget"]
print("units", dag.n, "no_recompute", int(dag.no_recompute.sum()), "constant bytes", int(dag.constant))
st = StageState(dag, B, checkpoint_all(dag).S); out = repair_steps(st, None, None)
t = int(np.argmax(st.peak)); over = st.peak > B
print(out, "highest stage", t, "bytes over", int(st.peak[t] - B), "stages over", np.flatnonzero(over).tolist())
res, rec = np.flatnonzero(st.S[t]), np.flatnonzero(st.R[t])
print("resident at it", len(res), "units,", int(dag.mem[res].sum()), "bytes; computed at it", len(rec), "units,", int(dag.mem[rec].sum()), "bytes")
c = _repair_moves(st, 1e-9); print("repair moves there", len(c), "of which estimated to help", sum(1 for x in c if x[0] > 0))
