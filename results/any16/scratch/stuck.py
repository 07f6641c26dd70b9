"""Repair from checkpoint-all until stuck (or a CPU limit): where the peaks stand. python stuck.py GRAPH RATIO SECONDS"""
import math, sys, time
import numpy as np
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.stagesearch import StageState, repair_steps
g, ratio, sec = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
dag = load_nodelink(g)
B = math.ceil(ratio * checkpoint_all(dag).peak(dag))
st = StageState(dag, B, checkpoint_all(dag).S)
c0 = time.process_time()
out = "paused"
while out == "paused" and time.process_time() - c0 < sec:
    out = repair_steps(st, None, st.rows + 200)
    over = np.flatnonzero(st.peak > B)
    print(f"cpu {time.process_time()-c0:.1f} {out} rows {st.rows} max peak {st.peak.max()} ({st.peak.max()/B:.3f} B) over {len(over)} excess {st.excess(st.peak)} cost {st.total_cost()/dag.cost.sum():.2f}x", flush=True)
over = np.flatnonzero(st.peak > B)
print("over stages", over.tolist(), (st.peak[over]-B).tolist())
np.save(sys.argv[4] if len(sys.argv) > 4 else "/tmp/any16/stuckS.npy", st.S)
