"""fit2.py with the rest of a repair step evaluated in chunks of K (the best of the first chunk where one helps):
python fit3.py GRAPH RATIO CPU K"""
import math, sys, time
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import stagesearch as ss
g, ratio, sec, K = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
orig = ss._best_repair
def br(st, cands, floor, deadline=None, allow_worse=False, free=False):
    if allow_worse or free or len(cands) <= ss.TOP_K or K <= 0:
        return orig(st, cands, floor, deadline, allow_worse, free)
    for k in range(0, len(cands), K):
        if orig(st, cands[k:k + K], floor, deadline):
            return True
    return False
ss._best_repair = br
dag = load_nodelink(g)
B = math.ceil(ratio * checkpoint_all(dag).peak(dag))
st = ss.StageState(dag, B, checkpoint_all(dag).S)
c0 = time.process_time(); out = "paused"
while out == "paused" and time.process_time() - c0 < sec:
    out = ss.repair_steps(st, None, st.rows + 2000)
print(g.split('/')[-1], ratio, "chunk", K, out, f"cpu {time.process_time()-c0:.1f} rows {st.rows} max peak {st.peak.max()/B:.3f} B over {(st.peak>B).sum()} overhead {100*(st.total_cost()/dag.cost.sum()-1):.1f}%", flush=True)
