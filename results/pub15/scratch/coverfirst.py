"""Would the covering MILP (depth 1, HiGHS in this process) prove the stage search's schedule of each case, and at
what CPU cost (highspy's import apart)?   python coverfirst.py"""
import glob
import math
import time

from remc.backends.strategies import _stage_hint
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.solver_api import Clock

t = time.process_time()
import highspy  # noqa: E402,F401
from remc.backends.highs import HighsBackend  # noqa: E402
from remc.passes.coverbound import cover_bound  # noqa: E402

print(f"import highspy + coverbound: {time.process_time() - t:.3f} s CPU")


class Here(HighsBackend):
    def solve(self, model, **kw):
        from remc.backends.highs import solve_highs
        return solve_highs(model, isolated=False, **kw)


D = "/work/wt/moccasin-src/data/"
for f in sorted(glob.glob(D + "*_train_nx.json")) + [D + "random_layered_n100_w0.27_nlv0.75_ed0.2_scd0.14.json"]:
    if "ResNet" in f or "MobileNet" in f:
        continue
    dag = load_nodelink(f)
    base = float(dag.total_cost)
    for r in (0.8, 0.9):
        b = math.ceil(checkpoint_all(dag).peak(dag) * r)
        st = _stage_hint(dag, b, None, Clock(60), share=0.36)
        if st is None:
            print(f.split("/")[-1][:12], r, "no schedule")
            continue
        c = time.process_time()
        cb = cover_bound(dag, b, Here(), time_limit=20, threads=1, depth=1)
        c = time.process_time() - c
        cost = st.cost(dag)
        proves = cost - cb.bound <= 1e-4 * max(cost - base, 0) + 1e-9 * cost
        print(f"{f.split('/')[-1][:12]:12s} {r} stage +{(cost / base - 1) * 100:.3f}% cover +{(cb.bound / base - 1) * 100:.3f}%"
              f" ({cb.status}, {cb.columns} cols) {c:.3f} s CPU proves={proves}")
