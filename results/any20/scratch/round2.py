"""round2.py PKL LIMIT_FIRST REPEATS LIMIT...: a fit round 2 replayed: approx on a captured first-round solve for
LIMIT_FIRST s, then approx warm from its schedule at 0.995 of its live peak (the fit loop's next solver budget)
with each LIMIT in turn, REPEATS times: the cost it returns (a multiple of computing each unit once) and how."""
import gzip
import os
import pickle
import sys
import time

from remc.backends.strategies import make_options, solve

d = pickle.load(gzip.open(sys.argv[1]) if sys.argv[1].endswith(".gz") else open(sys.argv[1], "rb"))
dag, B = d["dag"], d["budget"]
first = solve("approx", dag, B, make_options("approx", time_limit=float(sys.argv[2])))
peak = int(first.peak(dag))
b2 = int(peak * 0.995)
print(f"round 1: cost {first.cost(dag) / dag.total_cost:.5f} peak {peak}; round 2 at {b2}", flush=True)
for rep in range(int(sys.argv[3])):
    for lim in [float(x) for x in sys.argv[4:]]:
        t, c = time.perf_counter(), time.process_time()
        try:
            s = solve("approx", dag, b2, make_options("approx", time_limit=lim), start=first)
            r = f"cost {s.cost(dag) / dag.total_cost:.5f} ({s.strategy}; {str(s.report.extras.get('start', ''))[:60]})"
        except Exception as e:  # noqa: BLE001
            r = f"{type(e).__name__}: {str(e)[:80]}"
        print(f"  rep {rep + 1} limit {lim}: {r} wall {time.perf_counter() - t:.2f} cpu {time.process_time() - c:.2f} "
              f"load {os.getloadavg()[0]:.1f}", flush=True)
