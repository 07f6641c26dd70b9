import sys, time; sys.path.insert(0,'tools')
import numpy as np
from layered import layered_dag
from remc.ir.schedule import checkpoint_all, stage_peaks, check
from remc.passes.milp_model import clean
from remc.passes.stagesearch import StageState, improve
n, seed, ratio, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
dag = layered_dag(n, 10, seed)
budget = int(ratio * checkpoint_all(dag).peak(dag))
z = np.load(f"/tmp/bound_sched_{n}_{seed}_{ratio}.npz")
R,S = clean(dag, z["R"], z["S"]); base = dag.cost.sum()
for order in ("cost", "chain"):
    st = StageState(dag, budget, S); t=time.time()
    improve(st, time.perf_counter()+secs, order)
    R2,S2 = clean(dag, st.R, st.S)
    print(order, 100*(R2.sum(0)@dag.cost/base-1), f"{time.time()-t:.1f}", not check(dag,R2,S2), stage_peaks(dag,R2,S2).max()<=budget, flush=True)
