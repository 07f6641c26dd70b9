"""Wall time of approx and checkmate under a time limit, with the HiGHS child killed at the limit + 0.5 s (this
branch) or at the limit x 1.05 + 5 s (before), side by side in one run.

    python overrun.py grab_1.pkl 25

grab_1.pkl: the (DAG, budget) of a compile's first solve (results/lead16/scripts/grab_dag.py)."""
import pickle
import sys
import time

from remc.backends import highs
from remc.backends.strategies import make_options, solve

dag, budget = pickle.load(open(sys.argv[1], "rb"))
limit = float(sys.argv[2])
new = highs.hard_stop
for label, stop in (("before", lambda s, t: s + t * 1.05 + 5.0), ("after", new)):
    highs.hard_stop = stop
    for strat in ("approx", "checkmate"):
        t0 = time.perf_counter()
        try:
            s = solve(strat, dag, budget, make_options(strat, time_limit=limit))
            out = f"{s.report.status} cost {s.report.cost:.4f}"
        except Exception as e:  # noqa: BLE001
            out = f"{type(e).__name__}"
        print(f"{label:6s} {strat:9s} limit {limit:g} s  wall {time.perf_counter() - t0:5.1f} s  {out}", flush=True)
