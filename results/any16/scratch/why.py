import math, sys
import numpy as np
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import stagesearch as ss
dag = load_nodelink(sys.argv[1]); ca = checkpoint_all(dag).peak(dag); b = math.ceil(float(sys.argv[2]) * ca)
st = ss.StageState(dag, b, checkpoint_all(dag).S)
print(ss.repair_steps(st, None), st.peak.max(), b)
t = int(np.argmax(st.peak)); print("stage", t, "R row", np.flatnonzero(st.R[t]).tolist())
for u in np.flatnonzero(st.S[t]).tolist():
    print(u, "mem", dag.mem[u], "preds", dag.preds[u].tolist(), "succs>=t", dag.succs[u][dag.succs[u] >= t].tolist())
print("t preds", dag.preds[t].tolist(), "mem t", dag.mem[t])
print("sources", [v for v in range(dag.n) if len(dag.preds[v]) == 0][:40])
