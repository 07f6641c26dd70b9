import math, sys
import numpy as np
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.stagesearch import StageState
g, ratio = sys.argv[1], float(sys.argv[2])
dag = load_nodelink(g)
ca = checkpoint_all(dag)
B = math.ceil(ratio * ca.peak(dag))
st = StageState(dag, B, ca.S)
over = np.flatnonzero(st.peak > B)
print("n", dag.n, "budget", B, "stages over", len(over), "first/last", over[:3], over[-3:])
t = int(np.argmax(st.peak)); print("peak stage", t, st.peak[t])
res = np.flatnonzero(st.S[t])
ages = t - dag.last_use[res] * 0
nxt = [int(dag.succs[u][dag.succs[u] >= t].min()) if (dag.succs[u] >= t).any() else -1 for u in res]
lu = dag.last_use[res]
print("resident", len(res), "bytes", dag.mem[res].sum())
print("resident: (unit, mem, next use - t, last use - t, t - unit)")
for u, m, nx, l in sorted(zip(res, dag.mem[res], nxt, lu), key=lambda x: x[0]):
    print(f"  {u} {m} {nx - t} {l - t} {t - u}")
# levels: infer by name? print preds of t
print("preds of t", dag.preds[t], dag.mem[dag.preds[t]])
