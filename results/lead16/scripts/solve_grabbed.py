import sys, pickle, time
from remc.backends.strategies import make_options, solve
dag, b = pickle.load(open(sys.argv[1], "rb"))
for strat in sys.argv[2].split(","):
    for tl in [float(x) for x in sys.argv[3].split(",")]:
        t0 = time.time()
        try:
            s = solve(strat, dag, b, make_options(strat, time_limit=tl))
            out = f"{s.report.status} cost {s.report.cost:.4f} gap {s.report.gap} {s.strategy}"
        except Exception as e:
            out = f"{type(e).__name__}: {str(e)[:300]}"
        print(strat, tl, f"{time.time()-t0:.1f}s", out, flush=True)
