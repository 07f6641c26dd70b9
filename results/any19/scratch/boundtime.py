"""boundtime.py PKL LIMIT: what approx runs before its stage search on main where nothing fits: the baselines (their
deadline BASELINE_SHARE of LIMIT) and the retention-gap bound (BOUND_SHARE = 0.2 of LIMIT), wall and CPU each."""
import pickle, sys, time
from remc.passes.bounds import gap_bound
from remc.passes.strategies import best_baseline
d = pickle.load(open(sys.argv[1], "rb")); lim = float(sys.argv[2])
t, c = time.perf_counter(), time.process_time()
b = best_baseline(d["dag"], d["budget"], deadline=t + 0.25 * lim, hard=t + lim)
print(f"baselines: {'none fits' if b is None else b.strategy}, wall {time.perf_counter() - t:.2f} cpu {time.process_time() - c:.2f}")
t, c = time.perf_counter(), time.process_time()
g = gap_bound(d["dag"], d["budget"], upper=None, iterations=2000, deadline=t + 0.2 * lim)
print(f"gap bound {g.bound:.6g}: wall {time.perf_counter() - t:.2f} cpu {time.process_time() - c:.2f} (deadline {0.2 * lim:.2f} s)")
