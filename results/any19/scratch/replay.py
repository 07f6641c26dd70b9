"""replay.py PKL STRATEGY LIMIT [start]: solve a captured (dag, budget) with a strategy and time limit; phases printed."""
import dataclasses
import os
import pickle
import resource
import sys
import time

from remc.backends.strategies import make_options, solve

d = pickle.load(open(sys.argv[1], "rb"))
strategy, limit = sys.argv[2], float(sys.argv[3])
use_start = len(sys.argv) > 4 and sys.argv[4] == "start"
dag, budget = d["dag"], d["budget"]
t0 = time.perf_counter()
c0 = time.process_time()
last = [None]


def progress(ev):
    key = (ev.phase, ev.incumbent)
    if key != last[0]:
        last[0] = key
        print(f"  {time.perf_counter() - t0:6.1f} s cpu {time.process_time() - c0:5.1f}  {ev.phase:18s} cost {ev.incumbent} bound {ev.bound}",
              flush=True)


print(f"{os.path.basename(sys.argv[1])}: n={dag.n} budget={budget} strategy={strategy} limit={limit} "
      f"start={'yes' if use_start and d.get('start') is not None else 'no'} load {os.getloadavg()[0]:.1f}", flush=True)
try:
    s = solve(strategy, dag, budget, make_options(strategy, time_limit=limit), progress=progress,
              start=d.get("start") if use_start else None)
    r = s.report
    ex = {k: r.extras.get(k) for k in ("rule", "lp", "stage_search", "first_fit_seconds", "found_by", "phase")}
    print(f"RESULT {r.status} cost {r.cost:.6g} (ideal {dag.cost.sum():.6g}) gap {r.gap} seconds {r.seconds:.1f} "
          f"wall {time.perf_counter() - t0:.1f} cpu {time.process_time() - c0:.1f} extras {ex}")
except Exception as e:
    print(f"RESULT {type(e).__name__} wall {time.perf_counter() - t0:.1f} cpu {time.process_time() - c0:.1f}: {str(e)[:600]}")
print(f"maxrss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MiB load {os.getloadavg()[0]:.1f}")
