import sys, time, pickle, math
import remc.backends.strategies as S
from remc.ir.schedule import checkpoint_all
t0 = time.perf_counter()
def wrap(name):
    f = getattr(S, name)
    def g(*a, **k):
        print(f"{time.perf_counter() - t0:6.1f}s {name} start", flush=True)
        r = f(*a, **k)
        print(f"{time.perf_counter() - t0:6.1f}s {name} end", flush=True)
        return r
    setattr(S, name, g)
for n in ("_approx_fn", "_refine", "_deep_improve", "_cover_phase", "_last_bound"):
    wrap(n)
dag = pickle.load(open(f"/tmp/bound18/{sys.argv[1]}.pkl", "rb"))
budget = math.ceil(float(sys.argv[2]) * checkpoint_all(dag).peak(dag))
s = S.solve("checkmate", dag, budget, S.make_options("checkmate", time_limit=float(sys.argv[3]), threads=1))
base = float(dag.cost.sum())
print(100 * (s.report.cost / base - 1), 100 * (s.report.bound / base - 1), s.report.extras.get("portfolio"))
