"""find_case.py: small _layered graphs and ratios where the repair from checkpoint-all is stuck without kicks and
fits with them (a test case)."""
import math, sys
sys.path.insert(0, "/work/wt/any19b/tests")
from test_evict import _layered
from remc.ir.schedule import checkpoint_all
from remc.passes import stagesearch as ss
for n, w in [(30, 4), (40, 5), (50, 6), (60, 6)]:
    for seed in range(40):
        dag = _layered(n, w, seed); peak = checkpoint_all(dag).peak(dag)
        for ratio in (0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9):
            B = math.ceil(ratio * peak); res = []
            for k in (0, 12):
                ss.KICKS = k; st = ss.StageState(dag, B, checkpoint_all(dag).S); res.append((ss.repair_steps(st, None), st.rows))
            if res[0][0] == "stuck" and res[1][0] == "fit":
                print(n, w, seed, ratio, res, flush=True)
