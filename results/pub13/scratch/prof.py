"""cProfile of `remc solve` in-process (imports excluded): python prof.py GRAPH RATIO [N]"""
import cProfile, pstats, sys, time
from remc.cli import main
import remc.backends.strategies, remc.passes.plangen, remc.passes.validate, remc.ir.nodelink  # noqa
g, r = sys.argv[1], sys.argv[2]
N = int(sys.argv[3]) if len(sys.argv) > 3 else 40
argv = ["remc", "solve", g, "--budget", r + "x", "--strategy", "checkmate", "--time-limit", "60", "--json"]
sys.argv = argv
t = time.perf_counter()
pr = cProfile.Profile()
pr.enable()
try:
    main()
except SystemExit:
    pass
pr.disable()
print("wall", time.perf_counter() - t, file=sys.stderr)
pstats.Stats(pr, stream=sys.stderr).sort_stats("cumulative").print_stats(N)
