import sys, time; sys.path.insert(0,'tools')
import numpy as np
from layered import layered_dag
from remc.ir.schedule import checkpoint_all, stage_peaks, check
from remc.passes.milp_model import clean
from remc.passes.stagesearch import repair_start
n, seed, ratio = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
dag = layered_dag(n, 10, seed)
budget = int(ratio * checkpoint_all(dag).peak(dag))
z = np.load(f"/tmp/bound_sched_{n}_{seed}_{ratio}.npz")
R,S = clean(dag, z["R"], z["S"])
base = dag.cost.sum(); c0 = R.sum(0)@dag.cost
per = (R & ~np.eye(n, dtype=bool)) @ dag.cost
ts = int(np.argmax(per))
print("heavy", ts, per[ts], "preds", dag.preds[ts], "resident", [bool(S[ts,p]) for p in dag.preds[ts]])
rec = np.flatnonzero(R[ts, :ts])
print("recomputed top", rec[-10:])
for v in list(rec[::-1][:8]):
    c = int(np.flatnonzero(R[:ts, v]).max()) if R[:ts, v].any() else v
    S1 = S.copy(); S1[c+1:ts+1, v] = True
    t=time.time(); sch = repair_start(dag, budget, S1, deadline=time.perf_counter()+20)
    if sch is None: print(v, c, "repair failed", time.time()-t); continue
    print(v, c, "cost", 100*(sch.R.sum(0)@dag.cost/base-1), "was", 100*(c0/base-1), f"{time.time()-t:.1f}s", flush=True)
from remc.passes.stagesearch import StageState, repair, improve
v=360; c=360
S1 = S.copy(); S1[c+1:ts+1, v] = True
t=time.time(); st = StageState(dag, budget, S1); ok = repair(st, time.perf_counter()+20); t1=time.time()-t
improve(st, time.perf_counter()+30)
R2,S2 = clean(dag, st.R, st.S)
print("repair+improve", 100*(R2.sum(0)@dag.cost/base-1), f"{t1:.1f} {time.time()-t:.1f}", check(dag,R2,S2)==[], stage_peaks(dag,R2,S2).max()<=budget)
