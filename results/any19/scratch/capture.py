"""Run `remc compile ARGS...` with every strategy solve's (dag, budget, options, start) pickled to OUTDIR/solveN.pkl."""
import os
import pickle
import sys
import time

import remc.backends.strategies as st

outdir = os.environ["CAPTURE_DIR"]
os.makedirs(outdir, exist_ok=True)
_orig = st.solve
_n = [0]


def solve(name, dag, budget, options=None, **kw):
    _n[0] += 1
    path = os.path.join(outdir, f"solve{_n[0]}.pkl")
    with open(path, "wb") as f:
        pickle.dump(dict(name=name, dag=dag, budget=budget, options=options, start=kw.get("start")), f)
    t0 = time.perf_counter()
    try:
        r = _orig(name, dag, budget, options, **kw)
        print(f"[capture] solve{_n[0]} {name} budget {budget} limit {getattr(options, 'time_limit', None)} -> "
              f"{r.report.status if r.report else None} cost {r.report.cost if r.report else None} "
              f"in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        return r
    except Exception as e:
        print(f"[capture] solve{_n[0]} {name} budget {budget} limit {getattr(options, 'time_limit', None)} -> "
              f"{type(e).__name__} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        raise


st.solve = solve
from remc.cli import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
