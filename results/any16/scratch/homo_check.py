"""homo.py down to RATIO, then the last fitting schedule cleaned and checked by the validator (check, stage_peaks).
python homo_check.py GRAPH RATIO STEP"""
import math, sys
import numpy as np
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all, check, stage_peaks
from remc.passes import stagesearch as ss
from remc.passes.milp_model import clean
g, ratio, step = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
dag = load_nodelink(g); ca = checkpoint_all(dag).peak(dag); S = checkpoint_all(dag).S
for r in list(np.arange(1 - step, ratio + 1e-9, -step)):
    st = ss.StageState(dag, math.ceil(r * ca), S)
    if ss.repair_steps(st, None) != "fit":
        break
    S, last = st.S, (r, st)
r, st = last
R, S2 = clean(dag, st.R, st.S)
print(g.split('/')[-1], f"least ratio reached {r:.2f}: budget {math.ceil(r*ca)}, check {check(dag, R, S2) or 'ok'}, peak {stage_peaks(dag, R, S2).max()}, overhead +{100*(R.sum(axis=0)@dag.cost/dag.cost.sum()-1):.1f}%")
