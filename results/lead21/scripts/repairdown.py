"""repairdown.py PKL STRATEGY LIMIT HIGH: solve at HIGH, then at the captured budget from that schedule."""
import pickle, sys, time
from remc.backends.strategies import make_options, solve
d = pickle.load(open(sys.argv[1], "rb")); dag = d["dag"]; ideal = dag.cost.sum()
s, lim, high = sys.argv[2], float(sys.argv[3]), int(float(sys.argv[4]))
t0 = time.perf_counter()
hi = solve(s, dag, high, make_options(s, time_limit=lim))
print(f"at {high}: {hi.report.status} {hi.report.cost / ideal:.4f}x peak {hi.peak(dag)} {time.perf_counter() - t0:.1f} s", flush=True)
t0 = time.perf_counter()
lo = solve(s, dag, d["budget"], make_options(s, time_limit=lim), start=hi)
print(f"at {d['budget']} from it: {lo.report.status} {lo.report.cost / ideal:.4f}x peak {lo.peak(dag)} gap {lo.report.gap:.3f} "
      f"{time.perf_counter() - t0:.1f} s", flush=True)
