"""rebudget.py PKL STRATEGY LIMIT BUDGET...: the captured dag solved at other budgets."""
import pickle, sys, time
from remc.backends.strategies import make_options, solve
d = pickle.load(open(sys.argv[1], "rb")); dag = d["dag"]
for b in sys.argv[4:]:
    t0 = time.perf_counter()
    try:
        s = solve(sys.argv[2], dag, int(float(b)), make_options(sys.argv[2], time_limit=float(sys.argv[3])))
        r = s.report
        print(f"{sys.argv[2]} budget {int(float(b))}: {r.status} {r.cost / dag.cost.sum():.4f}x gap {r.gap:.3f} "
              f"bound {r.bound / dag.cost.sum():.4f}x {time.perf_counter() - t0:.1f} s", flush=True)
    except Exception as e:
        print(f"{sys.argv[2]} budget {b}: {type(e).__name__}: {str(e)[:200]}", flush=True)
