"""approx alone (or checkmate) on a pickled DAG: python approx1.py NAME RATIO T [strategy]"""
import json, math, pickle, sys, time
import remc
from remc.backends.strategies import make_options, solve
from remc.ir.schedule import checkpoint_all
import os
if os.environ.get("NOCAP"):
    import remc.passes.stagesearch as ss; ss.IMPROVE_CANDIDATES = None
if os.environ.get("NOSWEEP"):
    import remc.passes.stagesearch as ev; _imp = ev.improve
    ev.improve = lambda st, dl, *a, repairs=True, **k: None if not repairs else _imp(st, dl, *a, **k)
name, ratio, T = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
st = sys.argv[4] if len(sys.argv) > 4 else "approx"
dag = pickle.load(open(f"/tmp/bound18/{name}.pkl", "rb"))
base = float(dag.cost.sum()); budget = math.ceil(ratio * checkpoint_all(dag).peak(dag))
t = time.perf_counter()
s = solve(st, dag, budget, make_options(st, time_limit=T, threads=1))
r = s.report
print(json.dumps(dict(code=remc.__file__, nocap=os.environ.get("NOCAP"), nosweep=os.environ.get("NOSWEEP"), g=name, ratio=ratio, st=st, T=T, status=r.status, over=100 * (r.cost / base - 1),
                      bound=100 * (r.bound / base - 1), s=round(time.perf_counter() - t, 1), ex={k: (v if len(str(v)) < 300 else str(v)[:300]) for k, v in r.extras.items()}), default=str), flush=True)
