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
print(r, out, st.peak.max(), st.budget)
t = int(np.argmax(st.peak)); print("stage", t, "R row", np.flatnonzero(st.R[t]).tolist(), "over", np.flatnonzero(st.peak > st.budget).tolist())
for u in np.flatnonzero(st.S[t]).tolist():
    _, b = ss._run(st.S[:, u], t)
    pass
