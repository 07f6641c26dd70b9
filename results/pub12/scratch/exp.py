"""Scratch: time checkmate's CP-SAT phase from a fixed incumbent with extra CP-SAT parameters (env EXTRA='k=v,...')."""
import math, os, sys, time, pickle, resource
import remc.backends.cpsat as cpsat
from remc.ir.nodelink import load_nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.evict import evict_search
from remc.passes.strategies import best_baseline
from remc.backends.strategies import solve, make_options

graph, ratio = sys.argv[1], float(sys.argv[2])
dag = load_nodelink(graph)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
key = f"/tmp/pub12/inc_{os.path.basename(graph)[:20]}_{ratio}.pkl"
if os.path.exists(key):
    inc = pickle.load(open(key, "rb"))
else:
    b = best_baseline(dag, budget)
    import remc.backends.strategies as bs
    from remc.passes.solver_api import Clock
    inc = bs._stage_hint(dag, budget, b, Clock(50.0)) if b is not None else None
    if inc is None:
        inc = solve('approx', dag, budget, make_options('approx', time_limit=30))
    pickle.dump(inc, open(key, "wb"))
extra = {}
for kv in filter(None, os.environ.get("EXTRA", "").split(",")):
    k, v = kv.split("=")
    extra[k] = {"True": True, "False": False}.get(v, None) if v in ("True", "False") else (float(v) if "." in v else int(v))
orig = cpsat._solver
def patched(*a, **k):
    s = orig(*a, **k)
    for k2, v in extra.items():
        setattr(s.parameters, k2, v)
    return s
cpsat._solver = patched
timed = {}
for name in ("solve_cpsat", "_bound_round"):
    f = getattr(cpsat, name)
    def w(*a, _f=f, _n=name, **k):
        t = time.perf_counter(); c = time.process_time()
        out = _f(*a, **k)
        st = (out[0].status, out[0].bound, len(out[1]), sum(a[2])) if isinstance(out, tuple) else out.report.get("solver")
        print(f"   {_n} {time.perf_counter()-t:.2f} s wall {time.process_time()-c:.2f} s cpu {st}", flush=True)
        return out
    setattr(cpsat, name, w)
t = time.perf_counter(); c = time.process_time()
best, bound, note = cpsat.cpsat_phase(dag, budget, incumbent=inc, gap=1e-4, threads=(None if os.environ.get("THREADS", "2") == "none" else int(os.environ.get("THREADS", "2"))), seconds=120)
print(f"{os.path.basename(graph)[:20]} {ratio} {extra} phase {time.perf_counter()-t:.2f} s wall {time.process_time()-c:.2f} cpu; +{100*(best.cost(dag)/dag.total_cost-1):.3f}% bound +{100*(bound/dag.total_cost-1):.3f}% | {note}")
