"""Repair from checkpoint-all until fit/stuck/CPU limit, FREE_KEEPS_FIRST on/off: python fit2.py GRAPH RATIO CPU 0|1"""
import math, sys, time
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import stagesearch as ss
g, ratio, sec, on = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), bool(int(sys.argv[4]))
if len(sys.argv) > 5:
    ss.REPAIR_CHUNK = int(sys.argv[5])
ss.FREE_KEEPS_FIRST = on
dag = load_nodelink(g)
B = math.ceil(ratio * checkpoint_all(dag).peak(dag))
st = ss.StageState(dag, B, checkpoint_all(dag).S)
c0 = time.process_time(); out = "paused"
while out == "paused" and time.process_time() - c0 < sec:
    out = ss.repair_steps(st, None, st.rows + 2000)
print(g.split('/')[-1], ratio, "free_keeps", on, "chunk", ss.REPAIR_CHUNK, out, f"cpu {time.process_time()-c0:.1f} rows {st.rows} max peak {st.peak.max()/B:.3f} B over {(st.peak>B).sum()} overhead {100*(st.total_cost()/dag.cost.sum()-1):.1f}%", flush=True)
