"""Repair from checkpoint-all through budgets ratio_0 > ... > ratio (step): python homo.py GRAPH RATIO CPU STEP"""
import math, sys, time
import numpy as np
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes import stagesearch as ss
g, ratio, sec, step = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
dag = load_nodelink(g)
ca = checkpoint_all(dag).peak(dag)
S = checkpoint_all(dag).S
c0 = time.process_time()
rs = list(np.arange(1 - step, ratio + 1e-9, -step)) if step > 0 else []
rs = [r for r in rs if r > ratio + 1e-9] + [ratio]
for r in rs:
    B = math.ceil(r * ca)
    st = ss.StageState(dag, B, S); out = "paused"
    while out == "paused" and time.process_time() - c0 < sec:
        out = ss.repair_steps(st, None, st.rows + 2000)
    print(g.split('/')[-1], f"{r:.3f}", out, f"cpu {time.process_time()-c0:.1f} max peak {st.peak.max()/B:.3f} B over {(st.peak>B).sum()} overhead {100*(st.total_cost()/dag.cost.sum()-1):.1f}%", flush=True)
    if out != "fit":
        break
    S = st.S
