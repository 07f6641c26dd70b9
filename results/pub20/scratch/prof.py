"""cProfile of checkmate on one graph (in-process): prof.py GRAPH RATIO [TIME_LIMIT] -> top functions by cumulative time."""
import cProfile
import math
import pstats
import sys
import time

from remc.backends.strategies import make_options, solve
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all

path, ratio = sys.argv[1], float(sys.argv[2])
tl = float(sys.argv[3]) if len(sys.argv) > 3 else 300.0
t0, c0 = time.perf_counter(), time.process_time()
dag = load_nodelink(path)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
print(f"load {time.perf_counter() - t0:.3f} s {time.process_time() - c0:.3f} cpu")
pr = cProfile.Profile()
t0, c0 = time.perf_counter(), time.process_time()
pr.enable()
s = solve("checkmate", dag, budget, make_options("checkmate", time_limit=tl))
pr.disable()
print(f"solve {time.perf_counter() - t0:.3f} s {time.process_time() - c0:.3f} cpu {s.report.status} {s.cost(dag):g}")
print(s.report.extras)
pstats.Stats(pr).sort_stats("cumulative").print_stats(45)
