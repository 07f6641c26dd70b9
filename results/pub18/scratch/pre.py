"""The covering MILP before the stage search: its CPU with enough=inf against enough=the stage search's cost, and
whether its decoded schedule fits and meets the bound.   python pre.py GRAPH|n:seed RATIO"""
import json, math, sys, time, tempfile, os
sys.path.insert(0, "/work/wt/pub18/tools")
import remc.backends.strategies as st
from remc.ir import nodelink
from remc.ir.schedule import checkpoint_all
from remc.passes.solver_api import Clock
from remc.passes.coverbound import cover_bound, cover_schedule
from remc.backends.highs import HighsBackend
import threading

g, ratio = sys.argv[1], float(sys.argv[2])
if ":" in g and not os.path.exists(g):
    import bench_moccasin as bm
    n, seed = map(int, g.split(":"))
    d = bm.random_layered(n, seed)
    g = os.path.join(tempfile.mkdtemp(), d["graph"]["name"] + ".json")
    json.dump(d, open(g, "w"))
dag = nodelink.load_nodelink(g)
budget = math.ceil(checkpoint_all(dag).peak(dag) * ratio)
base = dag.total_cost
pct = lambda c: f"+{100*(c/base-1):.3f}%"
print(os.path.basename(g)[:40], ratio, dag.n)
def cov(enough):
    c0 = time.process_time()
    cb = cover_bound(dag, budget, st._CancellableMip(st._highs(), threading.Event()), time_limit=5, threads=1, depth=1,
                     max_columns=st.COVER_HERE_COLUMNS, kept=True, enough=enough, start=True)
    dec = cover_schedule(dag, budget, cb.start)
    print(f"  cover enough={enough:.6g}: {pct(cb.bound) if math.isfinite(cb.bound) else cb.bound} {cb.status} {cb.columns} cols {cb.note} cpu {time.process_time()-c0:.2f}; decoded "
          + ("none" if dec is None else pct(dec.cost(dag))), flush=True)
cov(math.inf)
c0 = time.process_time()
hint = st._stage_hint(dag, budget, None, Clock(60), share=0.3)
print(f"  stage search {pct(hint.cost(dag)) if hint else None} cpu {time.process_time()-c0:.2f}", flush=True)
if hint:
    cov(hint.cost(dag) - 1e-6 * (hint.cost(dag) - base))
cov(math.inf)
